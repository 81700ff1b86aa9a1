-- papersift's own keyword postings (store/sqlite/postings.py): FTS5's bm25 reads and decodes
-- every matching row's positions (~1 µs a match, 7.7 ms a query at a million papers); these
-- lists hold what bm25 needs per (term, paper), read as whole blobs and scored in numpy.
--
-- A build copies the FTS5 index as of one snapshot; papers added or changed after it go to
-- the tail (one row per term and paper) when the keywords stage runs, and papers added since
-- that are ranked by FTS5 itself. The row below exists once a build has been asked for, and
-- from then on the triggers log every text change, so no change between a build's snapshot
-- and the next tail update is missed.
CREATE TABLE keyword_index (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    build INTEGER NOT NULL DEFAULT 0,           -- the build queries read (0: none finished)
    watermark INTEGER NOT NULL DEFAULT 0,       -- the build's highest paper pk
    tail_watermark INTEGER NOT NULL DEFAULT 0,  -- the highest pk in the build or the tail
    tail_version INTEGER NOT NULL DEFAULT 0,    -- moves with every tail update
    papers INTEGER NOT NULL DEFAULT 0,          -- papers in the build
    lengths BLOB,                               -- int32 tokens of each paper, indexed by pk
    built_at TEXT
);

-- One row per term and build; a new build writes its rows beside the old ones and takes
-- over in one small transaction (the old rows are deleted after).
CREATE TABLE keyword_postings (
    build INTEGER NOT NULL,
    term TEXT NOT NULL,
    pks BLOB NOT NULL,     -- int32 paper pks, ascending
    counts BLOB NOT NULL,  -- uint8 x 3 per paper: the term's count in title, abstract, authors
    PRIMARY KEY (build, term)
);

-- Papers added or changed since the build. A changed paper's postings in the build are
-- ignored; a deleted paper has length 0 and no postings here.
CREATE TABLE keyword_tail_papers (
    pk INTEGER PRIMARY KEY,
    length INTEGER NOT NULL
);
CREATE TABLE keyword_tail (
    term TEXT NOT NULL,
    pk INTEGER NOT NULL,
    counts BLOB NOT NULL,  -- uint8 x 3, as in keyword_postings
    PRIMARY KEY (term, pk)
) WITHOUT ROWID;
CREATE INDEX keyword_tail_pk ON keyword_tail(pk);  -- a changed paper's rows are replaced

CREATE TABLE keyword_changed (
    seq INTEGER PRIMARY KEY,
    pk INTEGER NOT NULL
);
CREATE TRIGGER keyword_changed_update AFTER UPDATE OF title, abstract, authors_text ON papers
WHEN EXISTS (SELECT 1 FROM keyword_index)
     AND (old.title IS NOT new.title OR old.abstract IS NOT new.abstract
          OR old.authors_text IS NOT new.authors_text) BEGIN
    INSERT INTO keyword_changed(pk) VALUES (new.pk);
END;
CREATE TRIGGER keyword_changed_delete AFTER DELETE ON papers
WHEN EXISTS (SELECT 1 FROM keyword_index) BEGIN
    INSERT INTO keyword_changed(pk) VALUES (old.pk);
END;
