-- Indexes no query uses: every paper write paid for them (ingest throughput, issue 2).
-- papers_announced: pages sort and filter by sort_date. paper_sources_source: lookups go by
-- (paper_id, source), the primary key; only `papersift stats` groups by source, a scan.
DROP INDEX IF EXISTS papers_announced;
DROP INDEX IF EXISTS paper_sources_source;
