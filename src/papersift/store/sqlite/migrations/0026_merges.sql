-- Issue 35: one paper, many sources. A record of another source (bioRxiv, medRxiv, Crossref)
-- that is one paper with a stored one is kept as its own row, linked by duplicate_of as before;
-- these tables say how it was found, why it was merged, and keep an unmerge from being undone.

-- The keys a record of a source other than arXiv is found by (sources.matching.candidate_keys:
-- its identifiers, the ids it links to, its title and title halves). arXiv papers are found by
-- their id, DOI and title key (papers' own indexes), so the arXiv bulk path writes nothing here.
CREATE TABLE paper_keys (
    key TEXT NOT NULL,
    paper_id TEXT NOT NULL,
    PRIMARY KEY (key, paper_id)
) WITHOUT ROWID;
CREATE INDEX paper_keys_paper ON paper_keys(paper_id);

-- Half titles of arXiv papers (the first and the second half of their title key's words, as
-- CRC-32s: 'h ' or 't ' and the words), so that a journal version whose title changed one word
-- still finds its arXiv paper. Integers: the arXiv bulk path writes two small rows a paper.
CREATE TABLE title_halves (
    half INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    PRIMARY KEY (half, paper_id)
) WITHOUT ROWID;

-- What a record says of other records of the same work (PaperRecord.relations): bioRxiv's
-- `published` as is-preprint-of, Crossref's relation, as (kind, namespaced id).
CREATE TABLE paper_relations (
    paper_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    PRIMARY KEY (paper_id, kind, target)
) WITHOUT ROWID;

-- Every merge: the record shown as part of a paper, the paper, the rule and the sentence the
-- paper page shows. An unmerge sets unmerged_at: the row stays, and keeps the two apart.
CREATE TABLE merges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id TEXT NOT NULL,
    paper_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '{}',
    merged_at TEXT NOT NULL,
    unmerged_at TEXT
);
CREATE UNIQUE INDEX merges_live ON merges(record_id) WHERE unmerged_at IS NULL;
CREATE INDEX merges_record ON merges(record_id);
CREATE INDEX merges_apart ON merges(record_id) WHERE unmerged_at IS NOT NULL;
CREATE INDEX merges_paper ON merges(paper_id);
