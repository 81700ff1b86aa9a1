"""The nearest-neighbour index alone at 1,000,000 vectors: recall@10 against exact search, latency, memory.

The vectors are the real embeddings of the recent arXiv papers, replicated with small Gaussian noise
(each copy renormalized). Chunks are generated from a seed, so the exact search regenerates them
instead of holding a second copy in memory.

Usage: python benchmarks/bench_search_ann.py --embeddings $PAPERSIFT_BENCH_DIR/recent-embeddings.npy
       [--size 1000000] [--queries 200] [--noise 0.02] [--ef 128]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from pathlib import Path

import hnswlib
import numpy as np
from threadpoolctl import threadpool_limits

from papersift.search.ann import HNSW_EF_SEARCH, HNSW_M
from papersift.search.metrics import percentile

# Scratch stores and matrices of the benchmarks (big; never in the repository).
BENCH_DIR = Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data"))

CHUNK = 100_000


def chunk_vectors(base: np.ndarray, start: int, stop: int, noise: float) -> np.ndarray:
    """Vectors start..stop: copy i of base row j is row (i mod n) plus noise seeded by the chunk."""
    rng = np.random.default_rng(start)
    rows = base[np.arange(start, stop) % len(base)]
    noisy = rows + rng.normal(scale=noise, size=rows.shape).astype(np.float32)
    return noisy / np.linalg.norm(noisy, axis=1, keepdims=True)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embeddings", type=Path, default=BENCH_DIR / "recent-embeddings.npy")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--ef", type=int, default=HNSW_EF_SEARCH)
    parser.add_argument("--ef-construction", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    base = np.load(args.embeddings).astype(np.float32)
    dim = base.shape[1]
    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=args.size, M=HNSW_M, ef_construction=args.ef_construction,
                     random_seed=7)
    started = time.perf_counter()
    for start in range(0, args.size, CHUNK):
        stop = min(start + CHUNK, args.size)
        index.add_items(chunk_vectors(base, start, stop, args.noise), np.arange(start, stop),
                        num_threads=args.threads)
        print(f"added {stop:,} in {time.perf_counter() - started:.0f}s, rss {rss_mb():.0f} MB",
              flush=True)
    build_seconds = time.perf_counter() - started

    rng = np.random.default_rng(12345)
    picks = rng.choice(len(base), size=args.queries, replace=False)
    queries = base[picks] + rng.normal(scale=args.noise, size=(args.queries, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    # Exact top-10 by regenerating each chunk: one BLAS thread pool, sized on purpose.
    best_scores = np.full((args.queries, 10), -np.inf, dtype=np.float32)
    best_ids = np.zeros((args.queries, 10), dtype=np.int64)
    with threadpool_limits(limits=args.threads):
        for start in range(0, args.size, CHUNK):
            stop = min(start + CHUNK, args.size)
            scores = queries @ chunk_vectors(base, start, stop, args.noise).T
            top = np.argpartition(-scores, 9, axis=1)[:, :10]
            merged_scores = np.concatenate([best_scores, np.take_along_axis(scores, top, 1)], 1)
            merged_ids = np.concatenate([best_ids, top + start], 1)
            order = np.argsort(-merged_scores, axis=1)[:, :10]
            best_scores = np.take_along_axis(merged_scores, order, 1)
            best_ids = np.take_along_axis(merged_ids, order, 1)

    index.set_ef(args.ef)
    index.set_num_threads(1)
    for q in queries[:20]:  # warm
        index.knn_query(q, k=10)
    latencies, recalls = [], []
    for i, q in enumerate(queries):
        t = time.perf_counter()
        labels, _ = index.knn_query(q, k=10)
        latencies.append((time.perf_counter() - t) * 1000)
        recalls.append(len(set(labels[0].tolist()) & set(best_ids[i].tolist())) / 10)
    result = {
        "vectors": args.size, "dim": dim, "noise": args.noise, "M": HNSW_M,
        "ef_construction": args.ef_construction, "ef_search": args.ef,
        "build_seconds": round(build_seconds, 1), "recall@10": round(float(np.mean(recalls)), 4),
        "p50_ms": round(percentile(latencies, 50), 3), "p95_ms": round(percentile(latencies, 95), 3),
        "peak_rss_mb": round(rss_mb()), "machine": f"{platform.machine()}, {args.threads} threads",
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
