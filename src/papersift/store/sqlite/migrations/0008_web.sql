-- Indexes for the web pages.
-- Category listings newest first without a sort.
CREATE INDEX IF NOT EXISTS papers_category_date
    ON papers(primary_category, sort_date DESC, id) WHERE duplicate_of IS NULL;
-- Topic listings: sort a topic's papers by date from the index alone, then read only one page.
CREATE INDEX IF NOT EXISTS papers_id_date ON papers(id, duplicate_of, sort_date);
