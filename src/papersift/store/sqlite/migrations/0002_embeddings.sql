-- One embedding per paper and model, keyed by a hash of the embedded text so unchanged papers are skipped.
CREATE TABLE embeddings (
    paper_id TEXT NOT NULL,
    model TEXT NOT NULL,                 -- embedder identity, e.g. 'local:all-MiniLM-L6-v2:int8'
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,                -- float32, little-endian, L2-normalized
    created_at TEXT NOT NULL,
    PRIMARY KEY (paper_id, model)
) WITHOUT ROWID;
