"""Readers' feeds: ranking quality on the personal-feed task beside three public rankers, and speed on the full store.

    # quality (vectors of the same text are reused from DATA_DIR's store when it has them)
    .venv/bin/python benchmarks/bench_recommend.py quality --data-dir DIR
    # speed: 1,000 readers' feeds, /me latency, a rating's effect; on a COPY of a store with
    # every recent paper embedded (readers are added to it)
    PYTHONPATH=. .venv/bin/python benchmarks/bench_recommend.py speed --data-dir COPY --readers 1000

Results go to docs/benchmarks.md (Readers) and docs/benchmark-log.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

from papersift.readers import accounts, signals
from papersift.recommend import window as window_cache
from papersift.recommend.evaluate import evaluate_recommend, load_task
from papersift.recommend.feed import build_feed
from papersift.search.metrics import percentile
from papersift.settings import load_settings
from papersift.store import open_store

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1]
                             / ".." / "shared" / "data")).resolve()
PASSWORD = "benchmark password"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def quality(args: argparse.Namespace) -> dict:
    settings = load_settings(data_dir=str(args.data_dir), threads=args.threads)
    result = evaluate_recommend(SHARED / "recommend/readers-dev.jsonl",
                                SHARED / "arxiv-2025-2026.jsonl.gz", settings)
    rows = {r["config"]: r for r in result["rows"]}
    best = max((r for n, r in rows.items() if n.startswith("baseline:")),
               key=lambda r: r["ndcg@10"])
    ours = rows["papersift"]
    result["margin"] = {"best_baseline": best["config"],
                        "ndcg@10": round(ours["ndcg@10"] - best["ndcg@10"], 4),
                        "recall@50": round(ours["recall@50"] - best["recall@50"], 4)}
    return result


def make_readers(store, count: int, prefix: str = "bench", email: bool = False  # noqa: ANN001
                 ) -> list[int]:
    """`count` readers whose likes are the task's profiles (cycled), made once."""
    task = load_task(SHARED / "recommend/readers-dev.jsonl")
    ids = []
    for n in range(count):
        name = f"{prefix}-{n:04d}"
        found = store.readers.find_reader(name)
        if found is None:
            reader = accounts.add_reader(store, name, PASSWORD,
                                         f"{name}@example.org" if email else None)
            for paper in task.readers[n % len(task.readers)]["profile"]:
                with contextlib.suppress(signals.SignalError):  # a paper the store lacks
                    signals.react(store, reader, paper, "up")
        ids.append(found["id"] if found else reader)
    return ids


def rank_all(settings, store, readers: list[int]) -> dict:  # noqa: ANN001
    window_cache.clear()
    started, cpu = time.perf_counter(), time.process_time()
    win = window_cache.window(store, settings)
    built = time.perf_counter() - started
    for reader in readers:
        build_feed(store, settings, store.readers.get_reader(reader))
    return {"candidates": len(win.candidates.rows), "readers": len(readers),
            "window_seconds": round(built, 1),
            "seconds": round(time.perf_counter() - started, 1),
            # CPU of this process (all its threads): what the wall time would be on idle cores
            # if the ranking used one, so a loaded window can still be read.
            "cpu_seconds": round(time.process_time() - cpu, 1), "load": round(os.getloadavg()[0], 1)}


def me_latency(settings, reader: str, requests: int) -> dict:  # noqa: ANN001
    from tests.web_helpers import LiveServer  # the test suite's uvicorn-in-a-thread

    with LiveServer(settings) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        login = client.get("/login").text
        token = login.split('name="form_token" value="')[1].split('"')[0]
        client.post("/login", data={"form_token": token, "name": reader, "password": PASSWORD})
        client.get("/me")  # warm: the window and the model
        times = []
        for _ in range(requests):
            started = time.perf_counter()
            assert client.get("/me.json").status_code == 200
            times.append((time.perf_counter() - started) * 1000)
        csrf = client.get("/me/profile").text.split('name="csrf" value="')[1].split('"')[0]
        top = client.get("/me.json").json()["papers"][0]["id"]
        started = time.perf_counter()
        client.post("/me/react", data={"csrf": csrf, "paper_id": top, "reaction": "down"})
        after = client.get("/me.json").json()["papers"]
        rating_ms = (time.perf_counter() - started) * 1000
        assert top not in [p["id"] for p in after]
    return {"requests": requests, "p50_ms": round(percentile(times, 50), 1),
            "p95_ms": round(percentile(times, 95), 1),
            "rating_to_next_feed_ms": round(rating_ms, 1)}


def speed(args: argparse.Namespace) -> dict:
    settings = load_settings(data_dir=str(args.data_dir), threads=args.threads,
                             feed_days=args.feed_days)
    with open_store(settings) as store:
        log(f"making {args.readers} readers")
        readers = make_readers(store, args.readers)
        runs = []
        for run in range(args.runs):
            runs.append(rank_all(settings, store, readers))
            log(f"run {run + 1}: {runs[-1]}")
    latency = me_latency(settings, "bench-0000", args.requests)
    return {"rank_all": runs,
            "rank_all_median_seconds": statistics.median(r["seconds"] for r in runs),
            "me": latency, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("quality", "speed"))
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--readers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--feed-days", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    result = quality(args) if args.what == "quality" else speed(args)
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
