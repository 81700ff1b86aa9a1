-- Papers keyed by arXiv id without version; authors, categories, versions and sources in their own tables.
CREATE TABLE papers (
    pk INTEGER PRIMARY KEY,              -- stable rowid for the external-content FTS index
    id TEXT NOT NULL UNIQUE,             -- arXiv id without version, or namespaced ('doi:...')
    version INTEGER,                     -- version whose text is stored (newest seen)
    text_source TEXT NOT NULL,           -- source whose text is stored (see papersift.store.papers.SOURCE_RANK)
    title TEXT NOT NULL,
    abstract TEXT NOT NULL,
    authors_text TEXT NOT NULL DEFAULT '', -- 'A, B, C' in order; denormalized for FTS and listings
    primary_category TEXT,
    submitted TEXT,
    updated TEXT,
    announced TEXT,
    doi TEXT,
    comment TEXT,
    journal_ref TEXT,
    license TEXT,
    links TEXT NOT NULL DEFAULT '{}',   -- JSON object
    norm_key TEXT,                       -- normalized title + first author surname, for duplicates
    duplicate_of TEXT,                   -- id of the paper this one duplicates (shown once)
    sort_date TEXT                       -- announced, else submitted: the date pages sort by
);
CREATE INDEX papers_doi ON papers(lower(doi));
CREATE INDEX papers_norm_key ON papers(norm_key);
CREATE INDEX papers_sort_date ON papers(sort_date DESC, id);
CREATE INDEX papers_announced ON papers(announced);
CREATE INDEX papers_duplicate_of ON papers(duplicate_of) WHERE duplicate_of IS NOT NULL;

CREATE TABLE paper_versions (
    paper_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    date TEXT,
    PRIMARY KEY (paper_id, version)
) WITHOUT ROWID;

CREATE TABLE authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    slug TEXT NOT NULL UNIQUE
);

CREATE TABLE paper_authors (
    paper_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    author_id INTEGER NOT NULL REFERENCES authors(id),
    PRIMARY KEY (paper_id, position)
) WITHOUT ROWID;
CREATE INDEX paper_authors_author ON paper_authors(author_id, paper_id);

CREATE TABLE paper_categories (
    paper_id TEXT NOT NULL,
    category TEXT NOT NULL,
    position INTEGER NOT NULL,           -- 0 is the primary category
    PRIMARY KEY (paper_id, category)
) WITHOUT ROWID;
CREATE INDEX paper_categories_category ON paper_categories(category, paper_id);

-- Which sources have seen a paper, the hash of what each last gave (cheap 'unchanged'),
-- and what only that source knows (upvotes, announce type) as JSON.
CREATE TABLE paper_sources (
    paper_id TEXT NOT NULL,
    source TEXT NOT NULL,
    record_hash TEXT NOT NULL,
    extras TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (paper_id, source)
) WITHOUT ROWID;
CREATE INDEX paper_sources_source ON paper_sources(source);

CREATE TABLE ingest_runs (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    sources TEXT NOT NULL,
    report TEXT                          -- JSON: new, updated, unchanged, skipped
);

-- Column names match papers' columns: FTS5 reads an external content table by name.
CREATE VIRTUAL TABLE papers_fts USING fts5(
    title, abstract, authors_text,
    content='papers', content_rowid='pk',
    tokenize='porter unicode61 remove_diacritics 2'
);

-- Inserts are indexed by PapersStore._insert_papers in one INSERT ... SELECT per batch,
-- which is about twice as fast as a per-row trigger on bulk loads.
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors_text)
    VALUES ('delete', old.pk, old.title, old.abstract, old.authors_text);
END;
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, authors_text ON papers BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors_text)
    VALUES ('delete', old.pk, old.title, old.abstract, old.authors_text);
    INSERT INTO papers_fts(rowid, title, abstract, authors_text)
    VALUES (new.pk, new.title, new.abstract, new.authors_text);
END;
