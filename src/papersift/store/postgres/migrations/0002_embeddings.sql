-- One vector per paper and model, keyed by a hash of the embedded text. Stored at full
-- precision (pgvector's vector: the float32 values the embedder gave, so that a copy between
-- backends is exact); nearest-neighbour search goes through an HNSW index of the same vectors
-- in half precision (halfvec(384): half the index size, recall unchanged at this dimension).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE embeddings (
    paper_id text COLLATE "C" NOT NULL,
    model text COLLATE "C" NOT NULL,
    text_hash text NOT NULL,
    dim integer NOT NULL,
    vector vector NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (paper_id, model)
);
-- An index holds one dimension: the 384 of all-MiniLM-L6-v2 (the default embedder). Queries
-- use the same expression and condition: (vector::halfvec(384)) <=> $1 ... WHERE dim = 384.
CREATE INDEX embeddings_hnsw_384 ON embeddings
    USING hnsw ((vector::halfvec(384)) halfvec_cosine_ops) WHERE dim = 384;
