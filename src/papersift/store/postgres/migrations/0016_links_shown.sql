-- Pages show links, threads and weekly briefs (0014): their writes move data_version (0007)
-- like the paper tables' (merges has its trigger in 0015). The linker's own state
-- (link_papers, artefacts, link_meta) is not shown and does not move it.

CREATE TRIGGER paper_links_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON paper_links
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

CREATE TRIGGER link_counts_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON link_counts
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

CREATE TRIGGER threads_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON threads
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

CREATE TRIGGER thread_members_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON thread_members
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();

CREATE TRIGGER briefs_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON briefs
    FOR EACH STATEMENT EXECUTE FUNCTION note_data_change();
