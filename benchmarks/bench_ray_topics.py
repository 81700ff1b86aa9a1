"""Topic assignment of new papers through the ray engine (a local Ray on this machine) against the in-process path, on the same stores in the same run.

Usage:
  python benchmarks/bench_ray_topics.py [--dir /tmp/bench-ray-topics] [--runs 3]
      [--build 60000] [--week 4000] [--configs 1x2,2x1] [--scenarios week,backfill]

The store is the recent corpus (../shared/data/arxiv-2025-2026.jsonl.gz) with its real
all-MiniLM vectors (/work/cache/recent-embeddings.npy, recent-ids.json, 98,742 vectors).
Topics are built (BuildTopics, default parameters) on the first --build ids of
recent-ids.json; then two stores are made from it: "week" adds the vectors of the next --week
papers (few enough that their neighbours are exact), "backfill" adds all the rest (their
neighbours come from an HNSW graph of the whole corpus, built once by the driver). Both are
kept in --dir and reused by later runs.

Each run copies the scenario's store (untimed) and times AssignTopics.run on it: reading the
matrix, deciding and building the graph, the chunks of 1,024 and writing them. The engines
alternate: in-process with `threads` 2, then ray with each configuration ACTORSxTHREADS (1x2:
one actor of two threads; 2x1: two actors of one thread). Ray itself is started once before
the runs (a cluster runs for days); each ray run includes putting the corpus (and graph) in
its object store and creating its actors. Each run's assignments are compared with the first
in-process run's: the share of papers given the same topic and the largest cosine
difference. Reported: papers/s per run with `uptime`'s load, medians, each configuration's
ratio to the in-process median.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from papersift.ingest.stage import Ingest
from papersift.search.embed import embedding_text, text_hash
from papersift.settings import Settings, load_settings
from papersift.store import open_store
from papersift.topics import AssignTopics, BuildTopics

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
CACHE = Path("/work/cache")
MODEL = "local:all-MiniLM-L6-v2:int8"


def _put_vectors(store, wanted: set[str]) -> int:  # noqa: ANN001
    vectors = np.load(CACHE / "recent-embeddings.npy", mmap_mode="r")
    row_of = {pid: i for i, pid in enumerate(json.loads((CACHE / "recent-ids.json").read_text()))}
    count = 0
    for batch in store.embeddings.iter_embedding_inputs(MODEL, batch=5000):
        rows = [(pid, text_hash(embedding_text(t, a)), np.asarray(vectors[row_of[pid]]))
                for pid, t, a, _ in batch if pid in wanted and pid in row_of]
        store.embeddings.put_embeddings(MODEL, rows)
        count += len(rows)
    return count


def prepare(root: Path, settings: Settings, build: int, week: int) -> dict[str, Path]:
    """The built store, then the week and backfill stores made from it (each made once)."""
    ids = json.loads((CACHE / "recent-ids.json").read_text())
    built = root / "built.db"
    if not built.exists():
        started = time.perf_counter()
        partial = root / "built.partial.db"
        with open_store(partial) as store:
            Ingest([f"file:{SHARED / 'arxiv-2025-2026.jsonl.gz'}"]).run(store, settings)
            _put_vectors(store, set(ids[:build]))
            report = BuildTopics().run(store, settings)
        partial.rename(built)
        print(json.dumps({"built": report.counts, "seconds": round(time.perf_counter() - started)}),
              file=sys.stderr)
    stores = {}
    for name, new in (("week", ids[build:build + week]), ("backfill", ids[build:])):
        path = root / f"{name}.db"
        if not path.exists():
            shutil.copy(built, root / f"{name}.partial.db")
            with open_store(root / f"{name}.partial.db") as store:
                added = _put_vectors(store, set(new))
            (root / f"{name}.partial.db").rename(path)
            print(json.dumps({"store": name, "new_vectors": added}), file=sys.stderr)
        stores[name] = path
    return stores


def timed(store_path: Path, work: Path, settings: Settings, engine: str
          ) -> tuple[dict[str, float], dict[str, tuple[int, float]]]:
    shutil.copy(store_path, work)
    with open_store(work) as store:
        before = store.topics.assigned_paper_ids()
        started = time.perf_counter()
        report = AssignTopics(engine=engine).run(store, settings)
        seconds = time.perf_counter() - started
        rows = {pid: (tid, sim) for pid, tid, sim in store.conn.execute(
            "SELECT paper_id, topic_id, similarity FROM paper_topics") if pid not in before}
    work.unlink()
    return {"papers": report.counts["assigned"], "seconds": round(seconds, 2),
            "per_second": round(report.counts["assigned"] / seconds, 1)}, rows


def agreement(rows: dict[str, tuple[int, float]], reference: dict[str, tuple[int, float]]
              ) -> dict[str, float]:
    same = sum(1 for pid, (tid, _) in rows.items() if reference.get(pid, (None,))[0] == tid)
    worst = max((abs(sim - reference[pid][1]) for pid, (_, sim) in rows.items()
                 if pid in reference), default=0.0)
    return {"same_topic": round(same / max(1, len(reference)), 6),
            "max_cosine_difference": float(worst)}


def scenario(name: str, path: Path, root: Path, settings: Settings, runs: int,
             configs: list[tuple[int, int]]) -> dict[str, object]:
    results: dict[str, list[dict[str, float]]] = {}
    reference = None
    for run in range(runs):
        plan = [("in-process 2 threads", "local", settings)] + [
            (f"ray {a}x{t}", "ray", settings.replace(ray_actors=a, threads=t)) for a, t in configs]
        for label, engine, run_settings in plan:
            row, rows = timed(path, root / "run.db", run_settings, engine)
            reference = reference if reference is not None else rows
            row |= agreement(rows, reference) | {"load": os.getloadavg()[0]}
            results.setdefault(label, []).append(row)
            print(json.dumps({"scenario": name, "run": run, "engine": label, **row}),
                  file=sys.stderr)
    base = statistics.median(r["per_second"] for r in results["in-process 2 threads"])
    return {label: {"median_per_second": statistics.median(r["per_second"] for r in rows),
                    "median_seconds": statistics.median(r["seconds"] for r in rows),
                    "ratio_to_in_process": round(statistics.median(
                        r["per_second"] for r in rows) / base, 3),
                    "min_same_topic": min(r["same_topic"] for r in rows),
                    "max_cosine_difference": max(r["max_cosine_difference"] for r in rows),
                    "papers": rows[0]["papers"]}
            for label, rows in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", default="/tmp/bench-ray-topics")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build", type=int, default=60_000)
    parser.add_argument("--week", type=int, default=4_000)
    parser.add_argument("--configs", default="1x2,2x1")
    parser.add_argument("--scenarios", default="week,backfill")
    args = parser.parse_args()
    import ray

    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    settings = load_settings(environ={}, data_dir=str(root / "data"), threads=2)
    stores = prepare(root, settings, args.build, args.week)
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    summary = {name: scenario(name, stores[name], root, settings, args.runs, configs)
               for name in args.scenarios.split(",")}
    ray.shutdown()
    print(json.dumps({"build": args.build, "week": args.week, "summary": summary,
                      "load": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
