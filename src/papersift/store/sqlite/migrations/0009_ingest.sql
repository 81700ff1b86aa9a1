-- Cheap re-ingests of files, and FTS settings for bulk loads.

-- A raw line of a file source, keyed by a hash of its bytes and of the parser's code, and the
-- record it gave. While paper_sources still holds that record hash for that paper and source,
-- the line is unchanged and need not be parsed again (PapersStore.current_lines).
CREATE TABLE source_lines (
    line_key INTEGER PRIMARY KEY,        -- signed 64-bit hash (papersift.sources.files.line_key)
    paper_id TEXT NOT NULL,
    source TEXT NOT NULL,
    record_hash TEXT NOT NULL
);

-- Bigger in-memory term buffers and fewer, larger segment merges: bulk inserts into the
-- index cost less (queries still see a bounded number of segments per level).
INSERT INTO papers_fts(papers_fts, rank) VALUES ('hashsize', 16777216);
INSERT INTO papers_fts(papers_fts, rank) VALUES ('automerge', 16);
INSERT INTO papers_fts(papers_fts, rank) VALUES ('crisismerge', 64);
