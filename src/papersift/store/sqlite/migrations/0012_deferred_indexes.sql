-- A bulk load into an empty store builds the indexes that its own queries never use once, at
-- its end, instead of row by row (papersift.store.sqlite.bulk; ingest throughput, issue 2). While
-- they are missing, their SQL is kept here, and the next ingest builds them if the load was
-- killed. A migration that drops one of these indexes must delete its row here too.
CREATE TABLE deferred_indexes (
    name TEXT PRIMARY KEY,
    sql TEXT NOT NULL
);
