"""Nearest papers from PostgreSQL's HNSW index (store.embeddings.nearest_papers) against exact search: recall@10 and latency, alone and at 10 concurrent clients.

Usage:
  python benchmarks/bench_postgres_ann.py --database-url URL [--queries 200] [--clients 10]

The store is the recent corpus (../shared/data/arxiv-2025-2026.jsonl.gz, 98,752 records)
with its real all-MiniLM vectors (/work/cache/recent-embeddings.npy, recent-ids.json), loaded
once into the (empty) database named. Queries are the vectors of --queries papers drawn at
random (seed 0) with a little noise (so a paper is not trivially its own answer); the exact
answer is a full dot product over the stored matrix. The same queries go to the local hnswlib
index (search/ann.py) built from the same vectors, the SQLite path, for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from papersift.ingest.stage import Ingest
from papersift.search.ann import VectorIndex, update_index
from papersift.search.embed import embedding_text, text_hash
from papersift.settings import load_settings
from papersift.store import open_store

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
CACHE = Path("/work/cache")
MODEL = "local:all-MiniLM-L6-v2:int8"


def load(url: str) -> None:
    vectors = np.load(CACHE / "recent-embeddings.npy", mmap_mode="r")
    row_of = {pid: i for i, pid in enumerate(json.loads((CACHE / "recent-ids.json").read_text()))}
    settings = load_settings(environ={}, database_url=url)
    with open_store(url) as store:
        if store.embeddings.count_embeddings(MODEL):
            return
        started = time.perf_counter()
        Ingest([f"file:{SHARED / 'arxiv-2025-2026.jsonl.gz'}"]).run(store, settings)
        loaded = time.perf_counter()
        for batch in store.embeddings.iter_embedding_inputs(MODEL, batch=5000):
            store.embeddings.put_embeddings(MODEL, [
                (pid, text_hash(embedding_text(t, a)), np.asarray(vectors[row_of[pid]]))
                for pid, t, a, _ in batch if pid in row_of])
        print(f"papers {loaded - started:.0f} s, vectors (HNSW kept as they go in)"
              f" {time.perf_counter() - loaded:.0f} s", file=sys.stderr)
        store.conn.execute("ANALYZE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--clients", type=int, default=10)
    args = parser.parse_args()
    load(args.database_url)
    with open_store(args.database_url) as store:
        ids, matrix = store.embeddings.embedding_matrix(MODEL)
        pks = np.array([store.search.pk_of(i) for i in ids])
    rng = np.random.default_rng(0)
    picked = rng.choice(len(ids), size=args.queries, replace=False)
    queries = matrix[picked] + rng.normal(scale=0.02, size=(args.queries, matrix.shape[1]))
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    exact = [set(pks[np.argsort(-(matrix @ q))[:10]].tolist()) for q in queries]

    local = threadlocal_stores(args.database_url)

    def ask(q: np.ndarray) -> tuple[list[int], float]:
        started = time.perf_counter()
        found = local().embeddings.nearest_papers(MODEL, q, 10)
        return [pk for pk, _ in found], (time.perf_counter() - started) * 1000

    result = {"vectors": len(ids), "queries": args.queries, "load_before": os.getloadavg()}
    for clients in (1, args.clients):
        with ThreadPoolExecutor(clients) as pool:
            answers = list(pool.map(ask, queries))
        result[f"postgresql_{clients}_clients"] = summary(answers, exact)
    with tempfile.TemporaryDirectory() as folder:
        settings = load_settings(environ={}, data_dir=folder, database_url="")
        with open_store(args.database_url) as store:
            update_index(store, settings, MODEL)
        index = VectorIndex(settings.paths.vector_index(MODEL))
        index._dense = None  # the graph, as above EXACT_MAX (98,752 > 20,000 anyway)

        def ask_local(q: np.ndarray) -> tuple[list[int], float]:
            started = time.perf_counter()
            found = index.search(q, 10)
            return [pk for pk, _ in found], (time.perf_counter() - started) * 1000

        for clients in (1, args.clients):
            with ThreadPoolExecutor(clients) as pool:
                answers = list(pool.map(ask_local, queries))
            result[f"hnswlib_{clients}_clients"] = summary(answers, exact)
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=2))


def threadlocal_stores(url: str):  # noqa: ANN201
    import threading

    local = threading.local()

    def get():  # noqa: ANN202
        if not hasattr(local, "store"):
            local.store = open_store(url)
        return local.store

    return get


def summary(answers: list[tuple[list[int], float]], exact: list[set[int]]) -> dict[str, float]:
    recall = statistics.mean(len(set(found) & truth) / 10 for (found, _), truth in
                             zip(answers, exact, strict=True))
    times = [ms for _, ms in answers]
    return {"recall@10": round(recall, 4), "p50_ms": round(float(np.percentile(times, 50)), 2),
            "p95_ms": round(float(np.percentile(times, 95)), 2)}


if __name__ == "__main__":
    main()
