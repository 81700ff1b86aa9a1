-- data_version(): a number that moves when a transaction that changed what pages show commits
-- (the web page cache checks it before serving a cached page).
--
-- One counter row, bumped once per such transaction AT ITS COMMIT: a statement-level trigger on
-- each table pages read notes the transaction in data_changes (once), and a deferred constraint
-- trigger on that row bumps the counter when the transaction commits. So the new number becomes
-- visible together with the data (a page rendered from older data is never kept under it), and
-- the counter row is locked only during commits (writers never wait on each other while they
-- work, and no lock order can deadlock on it: it is always a transaction's last lock).
-- Reader accounts, sessions and delivery are not pages' data and do not move it.
CREATE TABLE data_version (
    id integer PRIMARY KEY CHECK (id = 1),
    version bigint NOT NULL
);
INSERT INTO data_version (id, version) VALUES (1, 0);

CREATE TABLE data_changes (
    xid xid8 PRIMARY KEY
);

CREATE FUNCTION note_data_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('papersift.changed_in', true) IS DISTINCT FROM pg_current_xact_id()::text
    THEN
        PERFORM set_config('papersift.changed_in', pg_current_xact_id()::text, true);
        INSERT INTO data_changes (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
    DELETE FROM data_changes WHERE xid = NEW.xid;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER data_changes_commit AFTER INSERT ON data_changes
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_data_version();

DO $$
DECLARE
    shown text;
BEGIN
    FOREACH shown IN ARRAY ARRAY['papers', 'paper_versions', 'authors', 'paper_authors',
            'paper_categories', 'paper_sources', 'embeddings', 'summaries', 'sections', 'topics',
            'paper_topics', 'topic_redirects', 'topic_builds'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I'
                       ' FOR EACH STATEMENT EXECUTE FUNCTION note_data_change()',
                       shown || '_changed', shown);
    END LOOP;
END
$$;
