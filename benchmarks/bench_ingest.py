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
import threading
import time
from datetime import date
from pathlib import Path

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
DEFAULT_FILE = SHARED / "arxiv-cs-1993-2019.snapshot.jsonl.gz"


_TICK = os.sysconf("SC_CLK_TCK")


def _sample_tree(pid: int, helper_cpu: dict[int, float]) -> float:
    """RSS (MB) of a process and all its descendants, from /proc (Linux); records in
    `helper_cpu` the CPU seconds each descendant has used so far."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += next(int(line.split()[1]) for line in status.splitlines()
                          if line.startswith("VmRSS:"))
            if current != pid:
                stat = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
                helper_cpu[current] = (int(stat[11]) + int(stat[12])) / _TICK
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total / 1024


def timed_ingest(data_dir: Path, path: Path) -> dict[str, float]:
    """One `papersift ingest` process: wall and CPU seconds, papers, peak memory.

    Peak memory is sampled every 50 ms as the summed RSS of the ingest process and its
    helper processes (ru_maxrss would only give the largest single process).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "papersift.cli.main", "ingest", f"file:{path}", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PAPERSIFT_DATA_DIR": str(data_dir)},
    )
    peak_tree = 0.0
    helper_cpu: dict[int, float] = {}
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.extend(proc.communicate()), daemon=True)
    reader.start()
    while reader.is_alive():
        peak_tree = max(peak_tree, _sample_tree(proc.pid, helper_cpu))
        time.sleep(0.05)
    wall = time.perf_counter() - started
    run = subprocess.CompletedProcess(proc.args, proc.returncode, out[0], out[1])
    if run.returncode not in (0, 3):
        raise SystemExit(f"ingest failed ({run.returncode}): {run.stderr[-2000:]}")
    report = json.loads(run.stdout)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU seconds (user + sys, every thread and helper process of the ingest) are far less
    # sensitive than wall time to other work on a shared machine.
    cpu = (usage.ru_utime + usage.ru_stime) - (before.ru_utime + before.ru_stime)
    # A helper's last sample is at most 50 ms before it ends: the split is that exact.
    counts = report["counts"]
    seen = counts["new"] + counts["updated"] + counts["unchanged"]
    return {"wall": wall, "cpu": cpu, "helper_cpu": sum(helper_cpu.values()), "seen": seen,
            "new": counts["new"], "skipped": counts["skipped"],
            "peak_mb": max(usage.ru_maxrss, before.ru_maxrss) / 1024,
            "peak_tree_mb": peak_tree,
            "load": os.getloadavg()[0]}


def copy_probe() -> float:
    """Seconds to copy 256 MB into a new buffer eight times: a gauge of the host's page-fault
    speed, which moves this benchmark more than most code changes do (~1.6 s when the host
    is fast; 2-18 s has been seen on this shared machine)."""
    buffer = bytearray(256 << 20)
    started = time.perf_counter()
    for _ in range(8):
        bytes(buffer)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE)
    args = parser.parse_args()
    if not args.file.exists():
        raise SystemExit(f"{args.file} not found (set PAPERSIFT_SHARED_DATA)")
    first, second = [], []
    probes = [copy_probe()]
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
        probes.append(copy_probe())
        print(f"run {run + 1}: first {a['seen'] / a['wall']:,.0f} papers/s "
              f"({a['wall']:.1f} s wall, {a['cpu']:.1f} s CPU of which helpers {a['helper_cpu']:.1f} s, peak {a['peak_tree_mb']:.0f} MB, "
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
    writer = statistics.median(r["cpu"] - r["helper_cpu"] for r in first)
    print(f"| CPU seconds of the writing process alone, first ingest | {writer:.1f} s "
          f"(helper processes {med(first, 'helper_cpu'):.1f} s) |")
    print(f"| peak memory, first ingest (RSS of the ingest process + its helpers, sampled) | "
          f"{med(first, 'peak_tree_mb'):.0f} MB (largest single process {med(first, 'peak_mb'):.0f} MB) |")
    print(f"| re-ingest of the same file | {rate2:,.0f} papers/s ({med(second, 'wall'):.1f} s) |")
    print(f"| CPU seconds (user+sys), re-ingest | {med(second, 'cpu'):.1f} s |")
    print(f"| re-ingest speed-up | {rate2 / rate1:.1f}x wall, "
          f"{med(first, 'cpu') / med(second, 'cpu'):.1f}x CPU |")
    loads = ", ".join(f"{r['load']:.1f}" for r in first + second)
    print(f"| load average (1 min) at the end of each ingest | {loads} |")
    print(f"| host copy probe before and after each run (see copy_probe) | "
          f"{', '.join(f'{p:.2f} s' for p in probes)} |")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(timed_ingest(Path(sys.argv[2]), Path(sys.argv[3]))))
    else:
        main()
