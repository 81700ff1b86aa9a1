"""Benchmark: ingest the arXiv bulk snapshot from scratch and again (papers/s, peak memory).

Run by hand:  .venv/bin/python benchmarks/bench_ingest.py [--runs 3] [--file PATH]
Each run is a fresh `papersift ingest` process on an empty data dir, then a second ingest of
the same file into the same store (the re-ingest). Prints a Markdown table of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
DEFAULT_FILE = SHARED / "arxiv-cs-1993-2019.snapshot.jsonl.gz"


def timed_ingest(data_dir: Path, path: Path) -> dict[str, float]:
    """One `papersift ingest` process: wall seconds, papers, peak RSS of that process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "papersift.cli.main", "ingest", f"file:{path}", "--json"],
        capture_output=True, text=True, env={**os.environ, "PAPERSIFT_DATA_DIR": str(data_dir)},
    )
    wall = time.perf_counter() - started
    if run.returncode not in (0, 3):
        raise SystemExit(f"ingest failed ({run.returncode}): {run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds (user + sys, every thread and helper process of the ingest) are far less
    # sensitive than wall time to other work on a shared machine.
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"wall": wall, "cpu": cpu, "seen": report["seen"], "new": report["new"],
            "skipped": len(report["skipped"]), "peak_mb": max(usage.ru_maxrss, before.ru_maxrss) / 1024,
            "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()
    if not args.file.exists():
        raise SystemExit(f"{args.file} not found (set PAPERSIFT_SHARED_DATA)")
    first, second = [], []
    for run in range(args.runs):
        data_dir = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
        try:
            # Peak RSS of children is a running maximum, so measure each ingest in a fresh
            # helper process to keep the figure per-run.
            a = json.loads(subprocess.check_output(
                [sys.executable, __file__, "--one", str(data_dir), str(args.file)]))
            b = json.loads(subprocess.check_output(
                [sys.executable, __file__, "--one", str(data_dir), str(args.file)]))
        finally:
            shutil.rmtree(data_dir, ignore_errors=True)
        first.append(a)
        second.append(b)
        print(f"run {run + 1}: first {a['seen'] / a['wall']:,.0f} papers/s "
              f"({a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU, peak {a['peak_mb']:.0f} MB, "
              f"load {a['load']:.1f}); again {b['seen'] / b['wall']:,.0f} papers/s "
              f"({b['wall']:.1f} s wall, {b['cpu']:.1f} s CPU)", file=sys.stderr, flush=True)

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    rate1 = statistics.median(r["seen"] / r["wall"] for r in first)
    rate2 = statistics.median(r["seen"] / r["wall"] for r in second)
    print(f"\n{args.file.name}, {first[0]['seen']:,} papers ({first[0]['skipped']} skipped), "
          f"{args.runs} runs, {date.today()}, {platform.machine()} {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, SQLite via stdlib\n")
    print("| measure | median |\n|---|---|")
    print(f"| first ingest, end to end (parse, dedupe, insert, FTS) | {rate1:,.0f} papers/s "
          f"({med(first, 'wall'):.1f} s) |")
    print(f"| CPU seconds (user+sys), first ingest | {med(first, 'cpu'):.1f} s "
          f"(= {statistics.median(r['seen'] / r['cpu'] for r in first):,.0f} papers per CPU-second) |")
    print(f"| peak RSS, first ingest | {med(first, 'peak_mb'):.0f} MB |")
    print(f"| re-ingest of the same file | {rate2:,.0f} papers/s ({med(second, 'wall'):.1f} s) |")
    print(f"| CPU seconds (user+sys), re-ingest | {med(second, 'cpu'):.1f} s |")
    print(f"| re-ingest speed-up | {rate2 / rate1:.1f}x wall, "
          f"{med(first, 'cpu') / med(second, 'cpu'):.1f}x CPU |")
    loads = ", ".join(f"{r['load']:.1f}" for r in first + second)
    print(f"| load average (1 min) at the end of each ingest | {loads} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(timed_ingest(Path(sys.argv[2]), Path(sys.argv[3]))))
    else:
        main()
