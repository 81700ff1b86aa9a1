-- Indexes for the web pages: category listings newest first without a sort.
CREATE INDEX IF NOT EXISTS papers_category_date
    ON papers(primary_category, sort_date DESC, id) WHERE duplicate_of IS NULL;
