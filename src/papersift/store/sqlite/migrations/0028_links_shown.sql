-- Pages show links, threads and weekly briefs (0025) and why records are one (0026): their
-- writes move data_version (0027) like the paper tables', so a cached page never outlives them.
-- The linker's own state (link_papers, artefacts, link_meta) is not shown and does not move it.

CREATE TRIGGER paper_links_shown_insert AFTER INSERT ON paper_links BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_links_shown_update AFTER UPDATE ON paper_links BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER paper_links_shown_delete AFTER DELETE ON paper_links BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER link_counts_shown_insert AFTER INSERT ON link_counts BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER link_counts_shown_update AFTER UPDATE ON link_counts BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER link_counts_shown_delete AFTER DELETE ON link_counts BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER threads_shown_insert AFTER INSERT ON threads BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER threads_shown_update AFTER UPDATE ON threads BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER threads_shown_delete AFTER DELETE ON threads BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER thread_members_shown_insert AFTER INSERT ON thread_members BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER thread_members_shown_update AFTER UPDATE ON thread_members BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER thread_members_shown_delete AFTER DELETE ON thread_members BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER briefs_shown_insert AFTER INSERT ON briefs BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER briefs_shown_update AFTER UPDATE ON briefs BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER briefs_shown_delete AFTER DELETE ON briefs BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER merges_shown_insert AFTER INSERT ON merges BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER merges_shown_update AFTER UPDATE ON merges BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER merges_shown_delete AFTER DELETE ON merges BEGIN
    UPDATE data_version SET version = version + 1 WHERE id = 1;
END;
