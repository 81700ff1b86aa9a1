"""Embedding throughput of the ray engine (a local Ray on this machine) against the in-process path, in the same run.

Usage:
  python benchmarks/bench_ray_embed.py [--n 2000] [--runs 2] [--configs 1x2,2x1]

The first --n abstracts of ../shared/data/arxiv-2025-2026.jsonl.gz, cut into the embed
stage's chunks (windows of 2,048 sorted by length, chunks of 256), are embedded by
`engines.run_local` (this process, `threads` 2) and by `engines.run_ray` with each
configuration ACTORSxTHREADS (1x2: one actor of two threads, what this process does; 2x1: two
actors of one thread), alternating. Ray itself is started once before the runs (a cluster runs
for days); each ray run includes creating its actors (each loads the model), and its steady
rate is the texts after the first chunk came back over the time from then to the last.
Reported: texts/s per run, medians, and each configuration's ratio to the in-process median.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

from papersift.engines import run_local, run_ray
from papersift.search.embed import LocalEmbedder, embedding_text
from papersift.search.engines import embed_job
from papersift.settings import load_settings

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
WINDOW, CHUNK = 2048, 256


def chunks(n: int) -> list[list[tuple[str, str, str]]]:
    texts = []
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            texts.append((record["id"], "h", embedding_text(record["title"], record["abstract"])))
            if len(texts) >= n:
                break
    cut = []
    for start in range(0, len(texts), WINDOW):
        window = sorted(texts[start:start + WINDOW], key=lambda row: len(row[2]))
        cut += [window[i:i + CHUNK] for i in range(0, len(window), CHUNK)]
    return cut


def timed(engine, settings, embedder, work) -> dict[str, float]:  # noqa: ANN001
    started = time.perf_counter()
    first_at, first_count, count = None, 0, 0
    for chunk, vectors in engine(settings, embed_job(embedder), iter(work)):
        assert len(vectors) == len(chunk)
        count += len(chunk)
        if first_at is None:
            first_at, first_count = time.perf_counter(), count
    ended = time.perf_counter()
    steady = (count - first_count) / (ended - first_at) if ended > first_at else 0.0
    return {"texts": count, "per_second": round(count / (ended - started), 2),
            "steady_per_second": round(steady, 2), "seconds": round(ended - started, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--configs", default="1x2,2x1")
    parser.add_argument("--data-dir", default=os.environ.get("PAPERSIFT_DATA_DIR", ""),
                        help="a data dir holding the exported model (models/)")
    args = parser.parse_args()
    import ray

    settings = load_settings(data_dir=args.data_dir or None, threads=2)
    embedder = LocalEmbedder(settings)
    embedder.embed(["warm up"])
    work = chunks(args.n)
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    rows: dict[str, list[dict[str, float]]] = {}
    for run in range(args.runs):
        row = timed(run_local, settings, embedder, work)
        rows.setdefault("in-process 2 threads", []).append(row)
        print(json.dumps({"run": run, "engine": "local", **row, "load": os.getloadavg()}),
              file=sys.stderr)
        for actors, threads in configs:
            ray_settings = settings.replace(ray_actors=actors, threads=threads)
            row = timed(run_ray, ray_settings, embedder, work)
            rows.setdefault(f"ray {actors}x{threads}", []).append(row)
            print(json.dumps({"run": run, "engine": f"ray {actors}x{threads}", **row,
                              "load": os.getloadavg()}), file=sys.stderr)
    ray.shutdown()
    local = rows["in-process 2 threads"]
    base = statistics.median(r["per_second"] for r in local)
    steady_base = statistics.median(r["steady_per_second"] for r in local)
    summary = {name: {"median_per_second": statistics.median(r["per_second"] for r in runs),
                      "median_steady_per_second": statistics.median(
                          r["steady_per_second"] for r in runs),
                      "ratio_to_in_process": round(statistics.median(
                          r["per_second"] for r in runs) / base, 3),
                      # like with like: the in-process path's rate after its first chunk too
                      # (chunks go shortest first, so the first one is the fastest)
                      "steady_ratio_to_in_process": round(statistics.median(
                          r["steady_per_second"] for r in runs) / steady_base, 3)}
               for name, runs in rows.items()}
    print(json.dumps({"n": args.n, "summary": summary, "load": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
