-- The HNSW graph is built with ef_construction 128 (pgvector's default is 64): at a million
-- papers the default graph's recall@10 stayed at 0.91-0.93 whatever the walk (ef_search up to
-- 400, 120 candidates re-ranked), 128 gave 0.961, for a build 1.65x as long (387 s against
-- 235 s; benchmarks/bench_million.py). Vectors added from now on join the graph that way; an
-- existing graph is rebuilt by `papersift embed --backfill` or REINDEX. The index may be
-- missing here (a backfill stopped before its build): the next embed builds it with 128.
DO $$
BEGIN
    IF to_regclass('embeddings_hnsw_384') IS NOT NULL THEN
        ALTER INDEX embeddings_hnsw_384 SET (ef_construction = 128);
    END IF;
END $$;
