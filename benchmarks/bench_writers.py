"""Many writers while logged-in readers use the site: ingests of overlapping files and `papersift update` while `serve --workers 4` answers readers who rate papers.

Usage:
  python benchmarks/bench_writers.py --backend sqlite|postgresql [--database-url URL]
         [--workdir DIR] [--base 20000] [--file-size 4000] [--readers 8]

The base store: the first --base records of ../shared/data/arxiv-2025-2026.jsonl.gz that have a
vector in /work/cache/recent-embeddings.npy (the real all-MiniLM vectors of the recent papers:
no hours of embedding), with topics and summaries built by the real stages. Then three files
of the next records: A, B (its first half is A's second half) and C (for `update`: half of it
repeats B). With PostgreSQL, `ingest A`, `ingest B` and `update` (ingest C, embed every new
paper, assign topics, summarize) run at once as three processes; with SQLite one after the
other. Meanwhile --readers logged-in readers loop over the front page, a paper page, a topic
page and their feed, and rate a paper. Reported: papers before and after against the ids of
the files (nothing lost, nothing doubled: each id once, linked as a sequential reference
ingest links it), ratings stored against ratings accepted, error pages and transport errors
(must be 0; "database is locked" is counted apart), PostgreSQL's deadlock counter, and the
reader pages' p50/p95 alone (20 s before the writers start) and while the writers ran. A GET
sent on a kept-alive connection that the server's 5-s idle timer closed at that moment (no
byte of an answer) is sent again once, as browsers do; those are counted apart.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from papersift.ingest.stage import Ingest
from papersift.search.ann import update_index
from papersift.search.embed import default_embedder, embedding_text, text_hash
from papersift.settings import Settings, load_settings
from papersift.store import open_store
from papersift.summarize import Summarize
from papersift.topics import BuildTopics
from papersift.web import urls

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
CACHE = Path("/work/cache")
PASSWORD = "correct horse battery"
PAPERSIFT = str(Path(sys.executable).parent / "papersift")


def write_files(folder: Path, base: int, size: int) -> dict[str, list[str]]:
    """base.jsonl and the writers' files A, B, C; returns each file's ids."""
    with_vectors = set(json.loads((CACHE / "recent-ids.json").read_text()))
    rows: list[str] = []
    ids: list[str] = []
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if record["id"] in with_vectors:
                rows.append(line)
                ids.append(record["id"])
            if len(rows) >= base + 2 * size:
                break
    half = size // 2
    cut = {"base": (0, base), "a": (base, base + size), "b": (base + half, base + size + half),
           "c": (base + size, base + 2 * size)}
    found = {}
    for name, (start, end) in cut.items():
        (folder / f"{name}.jsonl").write_text("".join(rows[start:end]))
        found[name] = ids[start:end]
    return found


def build_base(settings: Settings, folder: Path) -> None:
    """Ingest the base file, store its real vectors, build topics and summaries."""
    vectors = np.load(CACHE / "recent-embeddings.npy", mmap_mode="r")
    row_of = {pid: i for i, pid in enumerate(json.loads((CACHE / "recent-ids.json").read_text()))}
    model = default_embedder(settings).model_id
    with open_store(settings) as store:
        Ingest([f"file:{folder / 'base.jsonl'}"]).run(store, settings)
        for batch in store.embeddings.iter_embedding_inputs(model, batch=2000):
            store.embeddings.put_embeddings(model, [
                (pid, text_hash(embedding_text(title, abstract)), np.asarray(vectors[row_of[pid]]))
                for pid, title, abstract, _ in batch if pid in row_of])
        if not store.embeddings.indexes_vectors():  # the local index `papersift embed` builds
            update_index(store, settings, model)
        for stage in (BuildTopics(), Summarize()):
            report = stage.run(store, settings)
            print(f"base: {report.stage} {report.counts} {report.seconds:.0f} s", file=sys.stderr)


class Readers:
    """Logged-in readers: front page, a paper, a topic, their feed, a rating; every answer timed."""

    def __init__(self, url: str, papers: list[str], topics: list[str], count: int) -> None:
        self.url, self.papers, self.topics = url, papers, topics
        self.stop = threading.Event()
        self.samples: list[tuple[float, float, int, str]] = []  # (at, seconds, status, path)
        self.problems: list[str] = []
        self.locked = 0
        self.keepalive_retries = 0
        self.first = threading.Barrier(count + 1)  # every reader signed in and reading
        self.rated: dict[str, set[str]] = {}
        self.clients = [self._sign_up(f"bench-reader-{i}") for i in range(count)]

    def _sign_up(self, name: str) -> httpx.Client:
        client = httpx.Client(base_url=self.url, timeout=120)
        token = re.search(r'name="form_token" value="([^"]+)"', client.get("/signup").text)
        answer = client.post("/signup", data={"form_token": token.group(1), "name": name,
                                              "password": PASSWORD})
        assert answer.status_code == 303, answer.text[:300]
        return client

    def run(self, index: int) -> None:
        client, rng = self.clients[index], random.Random(index)
        rated = self.rated.setdefault(f"bench-reader-{index}", set())
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/me/profile").text).group(1)
        self.first.wait()
        while not self.stop.is_set():
            paper = rng.choice(self.papers)
            for method, path, data in (
                    ("GET", "/", None), ("GET", urls.paper(paper), None),
                    ("GET", urls.topic(rng.choice(self.topics)), None), ("GET", "/me", None),
                    ("POST", "/me/react", {"csrf": csrf, "paper_id": paper, "reaction": "up"})):
                self._one(client, method, path, data, rated, paper)

    def _one(self, client: httpx.Client, method: str, path: str, data: Any,
             rated: set[str], paper: str) -> None:
        started = time.perf_counter()
        try:
            try:
                answer = client.request(method, path, data=data)
            except httpx.RemoteProtocolError:
                if method != "GET":
                    raise
                # The server's keep-alive timer (5 s) closed this idle connection as the
                # request went out, before any byte of an answer: a browser sends a GET
                # again on a new connection (RFC 9110, 9.2.2), and so does this reader.
                self.keepalive_retries += 1
                answer = client.request(method, path, data=data)
        except httpx.HTTPError as exc:
            self.problems.append(f"{method} {path}: {type(exc).__name__} {exc}")
            return
        seconds = time.perf_counter() - started
        self.samples.append((time.time(), seconds, answer.status_code, path.split("/")[1]))
        if "database is locked" in answer.text:
            self.locked += 1
        if answer.status_code >= 400:
            self.problems.append(f"{method} {path}: {answer.status_code} {answer.text[:120]!r}")
        elif method == "POST":
            rated.add(paper)


def serve(settings: Settings, env: dict[str, str], port: int) -> subprocess.Popen:
    server = subprocess.Popen([PAPERSIFT, "serve", "--port", str(port), "--workers", "4"],
                              env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                              stderr=open(settings.data_path / "serve.log", "w"))  # noqa: SIM115
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("papersift serve did not come up (see serve.log)")
        time.sleep(0.5)


def writers(folder: Path, env: dict[str, str], together: bool) -> list[dict[str, Any]]:
    """The three writer processes, at once or one after the other: (command, exit, seconds)."""
    commands = [[PAPERSIFT, "ingest", f"file:{folder / 'a.jsonl'}", "--json"],
                [PAPERSIFT, "ingest", f"file:{folder / 'b.jsonl'}", "--json"],
                [PAPERSIFT, "update", "--json"]]
    update_env = {**env, "PAPERSIFT_SOURCES": f"file:{folder / 'c.jsonl'}"}
    done: list[dict[str, Any]] = []

    def run(command: list[str]) -> None:
        started = time.perf_counter()
        result = subprocess.run(command, env=update_env if "update" in command else env,
                                capture_output=True, text=True)
        done.append({"command": " ".join(command[1:3]), "exit": result.returncode,
                     "seconds": round(time.perf_counter() - started, 1),
                     "stderr": result.stderr[-300:] if result.returncode not in (0, 3) else ""})

    threads = [threading.Thread(target=run, args=(c,)) for c in commands]
    for thread in threads:
        thread.start()
        if not together:
            thread.join()
    for thread in threads:
        thread.join()
    return done


def deadlocks(url: str) -> int | None:
    if not url:
        return None
    import psycopg

    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT deadlocks FROM pg_stat_database"
                                " WHERE datname = current_database()").fetchone()[0])


def check(settings: Settings, folder: Path, ids: dict[str, list[str]],
          rated: dict[str, set[str]]) -> dict[str, Any]:
    """Papers against the files' ids and a sequential reference ingest; ratings kept."""
    wanted = sorted(set().union(*ids.values()))
    reference_settings = settings.replace(data_dir=str(folder / "reference"), database_url="")
    with open_store(reference_settings) as reference:
        Ingest([f"file:{folder / n}.jsonl" for n in ("base", "a", "b", "c")]).run(
            reference, reference_settings)
        expected = {pid: reference.papers.get_paper(pid)["duplicate_of"] for pid in wanted}
    with open_store(settings) as store:
        found = {pid: (store.papers.get_paper(pid) or {"duplicate_of": "LOST"})["duplicate_of"]
                 for pid in wanted}
        ratings_kept = all(
            {r["paper_id"] for r in store.readers.reactions_of(
                store.readers.find_reader(name)["id"])} == papers
            for name, papers in rated.items())
        return {"papers_after": store.papers.count_papers(include_duplicates=True),
                "live_after": store.papers.count_papers(),
                "ids_in_files": len(wanted),
                "lost": sum(1 for v in found.values() if v == "LOST"),
                "linked_unlike_reference": sum(1 for p in wanted if found[p] != expected[p]),
                "embedded": store.embeddings.count_embeddings(default_embedder(settings).model_id),
                "ratings_accepted": sum(len(p) for p in rated.values()),
                "ratings_all_kept": ratings_kept}


def percentiles(samples: list[tuple[float, float, int, str]], since: float, until: float
                ) -> dict[str, Any]:
    during = [s for s in samples if since <= s[0] <= until]
    by_page: dict[str, list[float]] = {}
    for _, seconds, _, page in during:
        by_page.setdefault(page or "front", []).append(seconds * 1000)
    every = [s[1] * 1000 for s in during]

    def p(values: list[float], q: int) -> float:
        return round(float(np.percentile(values, q)), 1) if values else 0.0

    return {"requests": len(during), "p50_ms": p(every, 50), "p95_ms": p(every, 95),
            "by_page_p95_ms": {k: p(v, 95) for k, v in sorted(by_page.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), required=True)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--workdir", type=Path,
                        default=Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data")) / "writers")
    parser.add_argument("--base", type=int, default=20_000)
    parser.add_argument("--file-size", type=int, default=4_000)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--port", type=int, default=8731)
    args = parser.parse_args()
    if args.backend == "postgresql" and not args.database_url:
        sys.exit("--database-url postgresql://... is needed (an empty database)")
    folder = args.workdir / args.backend
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    ids = write_files(folder, args.base, args.file_size)
    settings = load_settings(environ={}, config=folder / "none.toml",
                             data_dir=str(folder / "data"), database_url=args.database_url)
    models = CACHE / "recent" / "models"
    if models.is_dir():  # the exported ONNX model (a cache): no export in the measured run
        shutil.copytree(models, settings.data_path / "models")
    started = time.perf_counter()
    build_base(settings, folder)
    print(f"base built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(settings.data_path),
           "PAPERSIFT_DATABASE_URL": args.database_url, "PAPERSIFT_THREADS": "1"}
    with open_store(settings) as store:
        before = store.papers.count_papers(include_duplicates=True)
        topics = [t["slug"] for t in store.topics.list_topics(include_other=False)][:50]
    deadlocks_before = deadlocks(args.database_url)
    server = serve(settings, env, args.port)
    try:
        readers = Readers(f"http://127.0.0.1:{args.port}", ids["base"], topics, args.readers)
        threads = [threading.Thread(target=readers.run, args=(i,)) for i in range(args.readers)]
        for thread in threads:
            thread.start()
        readers.first.wait()
        quiet_from = time.time()
        time.sleep(20)  # readers alone first: their pages' baseline
        quiet_until = time.time()
        load_before = os.getloadavg()
        done = writers(folder, env, together=args.backend == "postgresql")
        writers_until = time.time()
        time.sleep(5)
        readers.stop.set()
        for thread in threads:
            thread.join()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    result = {
        "backend": args.backend, "papers_before": before, "writers": done,
        **check(settings, folder, ids, readers.rated),
        "error_pages_or_transport_errors": len(readers.problems),
        "problems": readers.problems[:10], "database_is_locked": readers.locked,
        "keepalive_retries": readers.keepalive_retries,
        "deadlocks": None if deadlocks_before is None
        else deadlocks(args.database_url) - deadlocks_before,
        "readers_alone": percentiles(readers.samples, quiet_from, quiet_until),
        "readers_during_writes": percentiles(readers.samples, quiet_until, writers_until),
        "writes_seconds": round(writers_until - quiet_until, 1),
        "load_before_writes": load_before, "load_after": os.getloadavg(),
        "median_reader_ms_all": round(statistics.median(s[1] for s in readers.samples) * 1000, 1),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
