"""Weekly briefs of every topic over the recent corpus in memory: one week timed, and the
faithfulness rule checked over every week's briefs.

Usage:
  PYTHONPATH=src python benchmarks/bench_briefs.py --vectors V.npy --ids IDS.json \\
      [--threads threads.json] [--week 2026-W26] [--all-weeks]

Topics come from the topic stage's own planner (topics.plan.plan_build) run on the same
vectors, without a store; threads from bench_links.py --save-threads. Target (issue 34): all
briefs of one week < 60 s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from papersift.briefs.check import check_briefs
from papersift.briefs.week import build_week
from papersift.briefs.weeks import week_of
from papersift.links.corpus import matrix_source
from papersift.links.threads import Thread
from papersift.topics.plan import BuildParams, plan_build

DATA = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))


def load_rows(path: Path) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            rows.setdefault(row["id"], row)
    return list(rows.values())


def topics_of(rows: list[dict[str, Any]], ids: list[str], matrix: np.ndarray
              ) -> tuple[list[dict[str, Any]], dict[str, Any], float]:
    clock = time.perf_counter()
    texts = {r["id"]: (r["title"], r["abstract"]) for r in rows}
    plan = plan_build(ids, np.ascontiguousarray(matrix, dtype=np.float32), texts, None,
                      BuildParams(), threads=2)
    topics = [{"id": t["key"], "slug": t.get("slug"), "label": t.get("label")}
              for t in plan["topics"]]
    topic_of = {pid: key for pid, key, _ in plan["assignments"]}
    return topics, topic_of, time.perf_counter() - clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=Path, default=DATA / "arxiv-2025-2026.jsonl.gz")
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--ids", type=Path, required=True)
    parser.add_argument("--threads", type=Path, help="threads JSON from bench_links.py")
    parser.add_argument("--week", help="default: the newest full week")
    parser.add_argument("--all-weeks", action="store_true",
                        help="also build and check every week's briefs (slow)")
    args = parser.parse_args()
    rows = load_rows(args.papers)
    ids = json.loads(args.ids.read_text())
    source = matrix_source(args.vectors, args.ids)
    topics, topic_of, topic_seconds = topics_of(rows, ids, source(ids))
    threads = [Thread(t["id"], t["name"], t["origin"], t["day"], t["members"])
               for t in json.loads(args.threads.read_text())] if args.threads else []
    weeks = sorted({week_of(r["announced"]) for r in rows})
    week = args.week or weeks[-2]  # the newest week may be cut short by the corpus's end
    clock = time.perf_counter()
    briefs = build_week(topics, topic_of, rows, week, source, threads)
    seconds = time.perf_counter() - clock
    by_id = {r["id"]: r for r in rows}
    figures: dict[str, Any] = {
        "papers": len(rows), "topics": len(topics), "topic_build_seconds": round(topic_seconds, 1),
        "week": week, "briefs": len(briefs), "week_seconds": round(seconds, 1),
        "violations": len(check_briefs(briefs, by_id)),
        "example": briefs[0] if briefs else None}
    if args.all_weeks:
        figures |= every_week(topics, topic_of, rows, weeks, source, threads, by_id)
    print(json.dumps(figures, indent=1))


def every_week(topics: list, topic_of: dict, rows: list, weeks: list[str], source: Any,
               threads: list[Thread], by_id: dict) -> dict[str, Any]:
    clock = time.perf_counter()
    count, broken = 0, []
    for week in weeks:
        briefs = build_week(topics, topic_of, rows, week, source, threads)
        count += len(briefs)
        broken += [str(v) for v in check_briefs(briefs, by_id)]
    return {"all_weeks": len(weeks), "all_briefs": count, "all_violations": len(broken),
            "all_violation_examples": broken[:10],
            "all_seconds": round(time.perf_counter() - clock, 1)}


if __name__ == "__main__":
    main()
