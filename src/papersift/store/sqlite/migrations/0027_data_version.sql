-- Issue 32: data_version(), a number that moves when a commit changes what pages show (the
-- web page cache checks it before serving a cached page), as PostgreSQL's migration 0007 keeps.
-- SQLite's PRAGMA data_version moved on every commit of another connection: a reader's like,
-- a session, a digest sent emptied the page cache of every worker.
--
-- One counter row, bumped by a row trigger on each table pages read. SQLite has no statement
-- triggers, so a bulk load pays a bump per row (~3 us): the tables whose rows only come with a
-- new paper count inserts through the paper's own row. An author, a paper's authors or its
-- categories are inserted either with a new paper (the papers insert bumps), or when a merge
-- replaces them, which deletes the old rows (the delete bumps) or changes the paper's
-- authors_text / primary_category (the papers update bumps). Reader accounts, signals,
-- sessions, delivery, the search index and ingest bookkeeping do not move it.
CREATE TABLE data_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO data_version (id, version) VALUES (1, 0);

CREATE TRIGGER papers_shown_insert AFTER INSERT ON papers BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER papers_shown_update AFTER UPDATE ON papers BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER papers_shown_delete AFTER DELETE ON papers BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_versions_shown_insert AFTER INSERT ON paper_versions BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_versions_shown_update AFTER UPDATE ON paper_versions BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_versions_shown_delete AFTER DELETE ON paper_versions BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_sources_shown_insert AFTER INSERT ON paper_sources BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_sources_shown_update AFTER UPDATE ON paper_sources BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_sources_shown_delete AFTER DELETE ON paper_sources BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER embeddings_shown_insert AFTER INSERT ON embeddings BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER embeddings_shown_update AFTER UPDATE ON embeddings BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER embeddings_shown_delete AFTER DELETE ON embeddings BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER summaries_shown_insert AFTER INSERT ON summaries BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER summaries_shown_update AFTER UPDATE ON summaries BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER summaries_shown_delete AFTER DELETE ON summaries BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER sections_shown_insert AFTER INSERT ON sections BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER sections_shown_update AFTER UPDATE ON sections BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER sections_shown_delete AFTER DELETE ON sections BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topics_shown_insert AFTER INSERT ON topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topics_shown_update AFTER UPDATE ON topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topics_shown_delete AFTER DELETE ON topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_topics_shown_insert AFTER INSERT ON paper_topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_topics_shown_update AFTER UPDATE ON paper_topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_topics_shown_delete AFTER DELETE ON paper_topics BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_redirects_shown_insert AFTER INSERT ON topic_redirects BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_redirects_shown_update AFTER UPDATE ON topic_redirects BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_redirects_shown_delete AFTER DELETE ON topic_redirects BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_builds_shown_insert AFTER INSERT ON topic_builds BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_builds_shown_update AFTER UPDATE ON topic_builds BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER topic_builds_shown_delete AFTER DELETE ON topic_builds BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER authors_shown_update AFTER UPDATE ON authors BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER authors_shown_delete AFTER DELETE ON authors BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_authors_shown_update AFTER UPDATE ON paper_authors BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_authors_shown_delete AFTER DELETE ON paper_authors BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_categories_shown_update AFTER UPDATE ON paper_categories BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_categories_shown_delete AFTER DELETE ON paper_categories BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;
