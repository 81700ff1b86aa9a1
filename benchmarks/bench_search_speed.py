"""Embedding throughput (ONNX vs PyTorch), query latency and memory of search with all recent papers.

Usage:
  python benchmarks/bench_search_speed.py throughput [--n 2000] [--runs 3]
  python benchmarks/bench_search_speed.py latency --data-dir $PAPERSIFT_BENCH_DIR/recent [--queries 200]
      [--sets titles,questions,hostile]
`latency` runs in a fresh process so its peak resident memory is the search service's own:
store + embedder + index + 200 warm queries per mode. Query sets: titles of older cs papers
(the targets' set), the ir/ collections' long questions, and hostile keyword queries.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import platform
import random
import resource
import statistics
import time
from pathlib import Path

# Scratch stores and matrices of the benchmarks (big; never in the repository).
BENCH_DIR = Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data"))

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA",
                             Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def abstracts(n: int) -> list[str]:
    from papersift.search.embed import embedding_text

    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in itertools.islice(handle, n)]
    return [embedding_text(r["title"], r["abstract"]) for r in rows]


def throughput(args: argparse.Namespace) -> dict:
    from papersift.search.embed import LocalEmbedder, SentenceTransformersEmbedder
    from papersift.settings import load_settings

    settings = load_settings(threads=args.threads)
    texts = abstracts(args.n)
    result: dict = {"abstracts": len(texts), "threads": args.threads, "runs": args.runs}
    embedders = {"onnx_int8": LocalEmbedder(settings),
                 "pytorch_sentence_transformers": SentenceTransformersEmbedder(settings)}
    rates: dict[str, list[float]] = {name: [] for name in embedders}
    for embedder in embedders.values():
        embedder.embed(texts[:32])  # warm
    # Interleaved (A B A B ...) so that a change in the machine's load hits both alike.
    for run in range(args.runs):
        for name, embedder in embedders.items():
            if name != "onnx_int8" and run >= args.baseline_runs:
                continue
            started = time.perf_counter()
            embedder.embed(texts)
            rates[name].append(len(texts) / (time.perf_counter() - started))
            print(json.dumps({name: round(rates[name][-1], 1)}), flush=True)
    for name, embedder in embedders.items():
        result[name] = {"per_second_median": round(statistics.median(rates[name]), 1),
                        "per_second_runs": [round(r, 1) for r in rates[name]],
                        "model": embedder.model_id}
    result["speedup"] = round(result["onnx_int8"]["per_second_median"]
                              / result["pytorch_sentence_transformers"]["per_second_median"], 2)
    return result


def sample_queries(n: int) -> list[str]:
    """Titles of older cs papers (a different corpus): realistic queries, not copies of documents."""
    rng = random.Random(2026)
    with gzip.open(SHARED / "arxiv-cs-1993-2019.snapshot.jsonl.gz", "rt", encoding="utf-8") as h:
        titles = [json.loads(line)["title"] for line in itertools.islice(h, 20000)]
    return [" ".join(t.split()) for t in rng.sample(titles, n)]


def sample_questions(n: int) -> list[str]:
    """Long natural-language questions: the queries of the ir/ collections (issue 17)."""
    rng = random.Random(2026)
    texts = []
    for name in ("cranfield", "cisi", "medline"):
        path = SHARED / "ir" / name / "queries.jsonl"
        if path.is_file():
            texts += [json.loads(line)["text"] for line in path.open(encoding="utf-8")]
    return rng.sample(texts, min(n, len(texts)))


def hostile_queries(n: int) -> list[str]:
    """Queries written to make the keyword side work hard (issue 19): OR-ed short and common
    prefixes, the most common words alone and chained, long OR lists of common words."""
    rng = random.Random(19)
    letters = "abcdefghilmnoprstuvw"
    two = [a + b for a in letters for b in "aeiou"]
    common = ["model", "learning", "data", "method", "results", "proposed", "performance",
              "training", "language", "task", "network", "system", "approach", "evaluation",
              "framework"]
    shapes = [
        lambda: " OR ".join(p + "*" for p in rng.sample(two, 32)),
        lambda: " OR ".join(p + "*" for p in rng.sample([w[:3] for w in common] + ["con", "pro",
                                                          "dis", "int", "rep"], 16)),
        lambda: rng.choice(["the", "model", "learning", "and", "data"]),
        lambda: " AND ".join(rng.sample(common, 4)),
        lambda: " OR ".join(rng.sample(common, 12)),
        lambda: " ".join(rng.sample(common, 12)),
        lambda: f'"{rng.choice(common)} {rng.choice(common)}" ' + " ".join(rng.sample(common, 6)),
        lambda: " NOT ".join(rng.sample(common, 2)),
        lambda: " AND ".join(["the", "and", "of", "a", "to", "in", "we", "for", "that", "on",
                              "with", "is", "by", "as", "from", "our"]),
    ]
    return [shapes[i % len(shapes)]() for i in range(n)]


QUERY_SETS = {"titles": sample_queries, "questions": sample_questions, "hostile": hostile_queries}


def latency(args: argparse.Namespace) -> dict:
    from papersift.search import search
    from papersift.search.metrics import percentile
    from papersift.settings import load_settings
    from papersift.store import open_store

    settings = load_settings(data_dir=str(args.data_dir), threads=args.threads)
    rss_start = current_rss_mb()
    store = open_store(settings, readonly=True)
    result: dict = {"papers": store.papers.count_papers(), "threads": args.threads}
    search(store, settings, "warm up the model and index", mode="hybrid")
    for name in args.sets.split(","):
        queries = QUERY_SETS[name](args.queries)
        modes = ("keyword", "hybrid") if name == "hostile" else ("semantic", "keyword", "hybrid")
        for mode in modes:
            for query in queries:  # warm: one pass first, as a running service would be
                search(store, settings, query, mode=mode)
            times = []
            for query in queries:
                started = time.perf_counter()
                search(store, settings, query, mode=mode)
                times.append((time.perf_counter() - started) * 1000)
            # The first set keeps the old keys ("hybrid": ...); the others are prefixed.
            key = mode if name == "titles" else f"{name} {mode}"
            result[key] = {"queries": len(queries), "p50_ms": round(percentile(times, 50), 2),
                           "p95_ms": round(percentile(times, 95), 2),
                           "max_ms": round(max(times), 2)}
            print(json.dumps({key: result[key]}), flush=True)
    result["rss_mb_at_start"] = round(rss_start)
    result["rss_mb_now"] = round(current_rss_mb())
    result["peak_rss_mb"] = round(peak_rss_mb())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=["throughput", "latency"])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-runs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, default=BENCH_DIR / "recent")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sets", default="titles",
                        help="comma-separated query sets: titles, questions, hostile")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = throughput(args) if args.what == "throughput" else latency(args)
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} cores (shared)"
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
