"""Issue 32's speed targets, in-process through the app: anonymous topic pages from the page cache (requests/s), a signed-in reader's topic page and /me (p50/p95).

    python benchmarks/bench_readers_act.py build --data-dir DIR --days 40 --per-day 250
    python benchmarks/bench_readers_act.py measure --data-dir DIR [--anonymous-only]

`build` ingests the newest days of the shared arXiv file and gives them stand-in topics (no
embedding: the feed ranks on words then). `measure` drives create_app one request at a
time (anonymous pages straight through the ASGI app, a reader's through Starlette's TestClient):
what the server spends, without a network in between.
Run the same store under the previous code with --anonymous-only for the before figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from papersift.settings import load_settings
from papersift.store import open_store

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "arxiv-2025-2026.jsonl.gz"
PASSWORD = "correct horse battery"


def settings_of(data_dir: str) -> Any:
    return load_settings(environ={}, config=Path(data_dir) / "none.toml", data_dir=data_dir,
                         signup_attempts=100000, login_attempts=100000)


def build(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.bench_web import stand_in_topics
    from tests.web_helpers import write_fixture

    from papersift.ingest.stage import Ingest

    Path(args.data_dir).mkdir(parents=True, exist_ok=True)
    fixture = Path(args.data_dir) / "papers.jsonl"
    write_fixture(Path(args.source), fixture, days=args.days, per_day=args.per_day)
    settings = settings_of(args.data_dir)
    with open_store(settings) as store:
        Ingest([f"file:{fixture}"]).run(store, settings)
        stand_in_topics(store)
        print(json.dumps({"papers": store.papers.count_papers()}))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(client: Any, paths: list[str], n: int) -> dict[str, float]:
    times = []
    for i in range(n):
        start = time.perf_counter()
        answer = client.get(paths[i % len(paths)])
        times.append((time.perf_counter() - start) * 1000)
        assert answer.status_code == 200, (paths[i % len(paths)], answer.status_code)
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(pct(times, .95), 2),
            "n": n}


def anonymous_rates(app: Any, paths: list[str], runs: int, seconds: float) -> dict[str, Any]:
    """Anonymous topic pages from the page cache, called straight through the ASGI app (its
    middleware included): a test client's own overhead would be most of what is timed."""

    async def call(path: str) -> int:
        scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "headers": [(b"host", b"bench")], "scheme": "http",
                 "server": ("bench", 80), "client": ("127.0.0.1", 1), "http_version": "1.1",
                 "root_path": ""}
        status = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(scope, receive, send)
        return status[0]

    async def run() -> list[float]:
        for path in paths:  # each page rendered once: from now on, the cache
            assert await call(path) == 200
        rates = []
        for _ in range(runs):
            done, start = 0, time.perf_counter()
            while time.perf_counter() - start < seconds:
                assert await call(paths[done % len(paths)]) == 200
                done += 1
            rates.append(done / (time.perf_counter() - start))
        return rates

    rates = asyncio.run(run())
    return {"anonymous_topic_req_s": [round(r) for r in rates],
            "anonymous_topic_req_s_median": round(statistics.median(rates))}


def measure(args: argparse.Namespace) -> None:
    from starlette.testclient import TestClient

    from papersift.readers import accounts, signals
    from papersift.web.app import create_app

    settings = settings_of(args.data_dir)
    with open_store(settings) as store:
        topics = [t["slug"] for t in store.topics.list_topics(include_other=False)
                  if t["size"] >= settings.page_size_web]
        papers = [r["id"] for r in store.pages.day_papers(store.pages.latest_day())]
        count = store.papers.count_papers()
    rng = random.Random(1)
    paths = [f"/topics/{s}" for s in rng.sample(topics, min(50, len(topics)))]
    out: dict[str, Any] = {"papers": count, "topic_pages": len(paths)}
    out.update(anonymous_rates(create_app(settings), paths, args.runs, args.seconds))
    if not args.anonymous_only:
        name = f"bench{time.time_ns() % 10**12}"
        with open_store(settings) as store:
            rid = accounts.add_reader(store, name, PASSWORD)
            for pid in papers[:5]:
                signals.react(store, rid, pid, "up")
            signals.save(store, rid, "Reading list", papers[5])
            signals.follow(store, rid, f"topic:{topics[0]}")
        with TestClient(create_app(settings)) as client:
            page = client.get("/login").text
            token = re.search(r'name="form_token" value="([^"]+)"', page).group(1)
            client.post("/login", data={"form_token": token, "name": name,
                                        "password": PASSWORD})
            timed(client, paths[:5], 5)  # warm: the window and the reader's model
            signed = timed(client, paths, args.requests)
            out["controls"] = 'class="react"' in client.get(paths[0]).text  # False before
            out["signed_in_topic"] = signed
            out["me"] = timed(client, ["/me"], args.requests // 2)
            out["signed_in_front"] = timed(client, ["/"], args.requests // 4)
    print(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["build", "measure"])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--source", default=str(SHARED))
    parser.add_argument("--days", type=int, default=40)
    parser.add_argument("--per-day", type=int, default=250)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--anonymous-only", action="store_true")
    args = parser.parse_args()
    build(args) if args.step == "build" else measure(args)


if __name__ == "__main__":
    main()
