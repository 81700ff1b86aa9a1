-- A bulk load into an empty store builds its full-text index in a helper process and copies
-- it in at the end (papersift.store.sqlite.fulltext; ingest throughput, issue 2). While the row
-- below exists, paper writes do not touch papers_fts: a text change or a delete is logged
-- with the text before and after, so that the helper can replay it on rows it has indexed.
CREATE TABLE fulltext_deferred (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    started_at TEXT NOT NULL
);
CREATE TABLE fulltext_log (
    seq INTEGER PRIMARY KEY,
    pk INTEGER NOT NULL,                 -- papers.pk
    old_title TEXT NOT NULL, old_abstract TEXT NOT NULL, old_authors_text TEXT NOT NULL,
    new_title TEXT, new_abstract TEXT, new_authors_text TEXT  -- all NULL: the paper was deleted
);

DROP TRIGGER papers_fts_delete;
DROP TRIGGER papers_fts_update;
CREATE TRIGGER papers_fts_delete AFTER DELETE ON papers
WHEN NOT EXISTS (SELECT 1 FROM fulltext_deferred) BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors_text)
    VALUES ('delete', old.pk, old.title, old.abstract, old.authors_text);
END;
CREATE TRIGGER papers_fts_update AFTER UPDATE OF title, abstract, authors_text ON papers
WHEN NOT EXISTS (SELECT 1 FROM fulltext_deferred) BEGIN
    INSERT INTO papers_fts(papers_fts, rowid, title, abstract, authors_text)
    VALUES ('delete', old.pk, old.title, old.abstract, old.authors_text);
    INSERT INTO papers_fts(rowid, title, abstract, authors_text)
    VALUES (new.pk, new.title, new.abstract, new.authors_text);
END;
CREATE TRIGGER papers_fts_delete_deferred AFTER DELETE ON papers
WHEN EXISTS (SELECT 1 FROM fulltext_deferred) BEGIN
    INSERT INTO fulltext_log(pk, old_title, old_abstract, old_authors_text)
    VALUES (old.pk, old.title, old.abstract, old.authors_text);
END;
CREATE TRIGGER papers_fts_update_deferred AFTER UPDATE OF title, abstract, authors_text ON papers
WHEN EXISTS (SELECT 1 FROM fulltext_deferred) BEGIN
    INSERT INTO fulltext_log(pk, old_title, old_abstract, old_authors_text,
                             new_title, new_abstract, new_authors_text)
    VALUES (old.pk, old.title, old.abstract, old.authors_text,
            new.title, new.abstract, new.authors_text);
END;
