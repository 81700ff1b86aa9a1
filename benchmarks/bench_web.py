"""Benchmark the site: server-side render times per page type, and topic-page throughput under load.

    python benchmarks/bench_web.py --data-dir $PAPERSIFT_BENCH_DIR/web [--stand-in-topics] [--load]

Render: each sampled page is built (store queries + page dict) and rendered to HTML in-process,
exactly what an endpoint does; p50/p95 per run, medians over --runs runs. The baseline is the
404 page (template only, no queries). Load: `papersift serve --workers 2` on loopback, driven by
wrk (Debian package) over a rotating list of topic pages; the baseline is /healthz.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift.clock import utc_now
from papersift.latex import _readable
from papersift.settings import load_settings
from papersift.store.sqlite.db import transaction
from papersift.web import views
from papersift.web.render import Linker, render_page

# Scratch stores and matrices of the benchmarks (big; never in the repository).
BENCH_DIR = Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data"))

readable_cache_clear = _readable.cache_clear



def stand_in_topics(db: Any) -> None:
    """Topics from (primary category, quarter) so pages have topics before the topics stage runs.

    Sizes run from a handful to several thousand papers, which exercises both listing plans.
    """
    conn = db.conn
    with transaction(conn):
        build = conn.execute(
            "INSERT INTO topic_builds(created_at, method, n_papers) VALUES (?, 'bench-stand-in', 0)",
            (utc_now(),)).lastrowid
        section = conn.execute(
            "INSERT INTO sections(slug, label, position) VALUES ('bench', 'Bench section', 0)"
        ).lastrowid
        conn.execute(
            "INSERT INTO topics(slug, label, section_id, created_build)"
            " SELECT DISTINCT lower(replace(primary_category, '.', '-')) || '-' ||"
            " substr(sort_date, 1, 4) || 'q' || ((cast(substr(sort_date, 6, 2) AS int) + 2) / 3),"
            " primary_category || ' ' || substr(sort_date, 1, 4) || ' Q' ||"
            " ((cast(substr(sort_date, 6, 2) AS int) + 2) / 3), ?, ?"
            " FROM papers WHERE duplicate_of IS NULL AND primary_category IS NOT NULL",
            (section, build))
        conn.execute(
            "INSERT INTO paper_topics(paper_id, topic_id, similarity, assigned_by)"
            " SELECT p.id, t.id, 1.0, 'build' FROM papers p JOIN topics t ON t.slug ="
            " lower(replace(p.primary_category, '.', '-')) || '-' || substr(p.sort_date, 1, 4)"
            " || 'q' || ((cast(substr(p.sort_date, 6, 2) AS int) + 2) / 3)"
            " WHERE p.duplicate_of IS NULL")
        conn.execute("UPDATE topics SET size = (SELECT count(*) FROM paper_topics pt"
                     " WHERE pt.topic_id = topics.id)")


def samples(db: Any, site: views.Site, n: int, rng: random.Random) -> dict[str, list[Callable]]:
    size = site.page_size
    # Topics a reader browses: at least one full page (stand-in topics include tiny ones).
    topics = db.conn.execute("SELECT t.slug, count(*) FROM topics t JOIN paper_topics pt"
                             " ON pt.topic_id = t.id WHERE t.retired_build IS NULL"
                             " GROUP BY t.id HAVING count(*) >= ?", (size,)).fetchall()
    # Prolific authors are the expensive ones: half the sample from the top, half at random.
    top_authors = [r[0] for r in db.conn.execute(
        "SELECT a.slug FROM paper_authors pa JOIN authors a ON a.id = pa.author_id"
        " GROUP BY a.id ORDER BY count(*) DESC LIMIT 200")]
    max_author = db.conn.execute("SELECT max(id) FROM authors").fetchone()[0]
    random_authors = [r[0] for r in (db.conn.execute(
        "SELECT slug FROM authors WHERE id = ?", (rng.randint(1, max_author),)).fetchone()
        for _ in range(n)) if r]
    paper_ids = [r[0] for r in db.conn.execute(
        "SELECT id FROM papers WHERE duplicate_of IS NULL ORDER BY random() LIMIT ?", (n,))]
    days = db.pages.all_days()
    out: dict[str, list[Callable]] = {"topic": [], "author": [], "paper": [], "daily": []}
    for _ in range(n):
        slug, count = rng.choice(topics)
        page = rng.randint(1, max(1, -(-count // size)))
        out["topic"].append(lambda s=slug, p=page: views.topic(site, s, str(p)))
    for slug in rng.sample(top_authors, min(n // 2, len(top_authors))) + random_authors[: n // 2]:
        out["author"].append(lambda s=slug: views.author(site, s, None))
    for pid in paper_ids:
        out["paper"].append(lambda p=pid: views.paper(site, p))
    for day in rng.sample(days, min(n, len(days))):
        out["daily"].append(lambda d=day: views.daily(site, d, "1"))
    return out


def render_times(site: views.Site, builders: list[Callable]) -> list[float]:
    linker = Linker()
    times = []
    for build in builders:
        readable_cache_clear()  # measure cold renders: no text cleaned by an earlier sample
        started = time.perf_counter()
        render_page(build(), site.settings.site_title, linker)
        times.append((time.perf_counter() - started) * 1000)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def bench_render(site: views.Site, runs: int, n: int, seed: int) -> dict[str, Any]:
    db = site.store
    rng = random.Random(seed)
    cases = samples(db, site, n, rng)
    baseline_data = {"page": "error", "title": "Page not found", "heading": "Page not found",
                     "message": "There is nothing here.", "status": 404, "path": "/x",
                     "feed": None}
    cases["baseline-404"] = [lambda: baseline_data] * n
    for builders in cases.values():  # warm the page cache and the template cache
        render_times(site, builders)
    results: dict[str, Any] = {}
    for kind, builders in cases.items():
        p50s, p95s = [], []
        for _ in range(runs):
            times = render_times(site, builders)
            p50s.append(pct(times, 0.5))
            p95s.append(pct(times, 0.95))
        results[kind] = {"samples": len(builders), "p50_ms": round(statistics.median(p50s), 2),
                         "p95_ms": round(statistics.median(p95s), 2),
                         "p95_runs": [round(v, 2) for v in p95s]}
    base = results["baseline-404"]["p50_ms"] or 0.01
    for entry in results.values():
        entry["p50_vs_baseline"] = round(entry["p50_ms"] / base, 1)
    return results


def wait_for(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"server at {url} did not come up")


def wrk(url: str, paths: list[str], seconds: int, connections: int) -> dict[str, Any]:
    quoted = ", ".join(json.dumps(p) for p in paths)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(
            f"local paths = {{{quoted}}}\nlocal i = 0\n"
            "request = function()\n  i = i % #paths + 1\n  return wrk.format('GET', paths[i])\n"
            "end\n")
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency",
                          "-s", script.name, url], capture_output=True, text=True, check=True)
    os.unlink(script.name)
    text = out.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    errors = 0
    for pattern in (r"Non-2xx or 3xx responses: (\d+)", r"Socket errors: connect (\d+), "
                    r"read (\d+), write (\d+), timeout (\d+)"):
        match = re.search(pattern, text)
        if match:
            errors += sum(int(g) for g in match.groups())
    latency = re.search(r"99%\s+([\d.]+\w+)", text)
    return {"rps": rps, "errors": errors, "p99": latency.group(1) if latency else None,
            "raw": text}


def bench_load(data_dir: str, workers: int, seconds: int, connections: int, runs: int,
               db: Any, site: views.Site, cache_mb: int = 64) -> dict[str, Any]:
    port = 8765
    env = {**os.environ, "PAPERSIFT_DATA_DIR": data_dir, "PAPERSIFT_WEB_CACHE_MB": str(cache_mb)}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "papersift"), "serve", "--port", str(port),
         "--workers", str(workers)], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(url + "/healthz")
        rng = random.Random(7)
        size = site.page_size
        topics = db.conn.execute("SELECT t.slug, count(*) FROM topics t JOIN paper_topics pt"
                                 " ON pt.topic_id = t.id GROUP BY t.id HAVING count(*) >= ?",
                                 (size,)).fetchall()
        paths = []
        for _ in range(200):
            slug, count = rng.choice(topics)
            page = rng.randint(1, min(3, max(1, -(-count // size))))
            paths.append(f"/topics/{slug}" + (f"?page={page}" if page > 1 else ""))
        for path in paths[:50]:  # warm every worker's caches and templates
            urllib.request.urlopen(url + path, timeout=30).read()
        topic_runs = [wrk(url, paths, seconds, connections) for _ in range(runs)]
        base_runs = [wrk(url, ["/healthz"], seconds, connections) for _ in range(runs)]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    topic_rps = statistics.median(r["rps"] for r in topic_runs)
    base_rps = statistics.median(r["rps"] for r in base_runs)
    return {
        "cache_mb": cache_mb,
        "workers": workers, "connections": connections, "seconds": seconds, "runs": runs,
        "topic_rps_median": round(topic_rps, 1), "topic_rps_runs": [r["rps"] for r in topic_runs],
        "topic_errors": sum(r["errors"] for r in topic_runs),
        "topic_p99": [r["p99"] for r in topic_runs],
        "healthz_rps_median": round(base_rps, 1), "ratio_to_healthz": round(topic_rps / base_rps, 2),
        "healthz_errors": sum(r["errors"] for r in base_runs),
    }


def write_markdown(path: Path, command: str, info: dict[str, Any], render: dict[str, Any],
                   loads: list[dict[str, Any]]) -> None:
    lines = [
        "# Web benchmarks", "",
        f"Date: {info['date']}. Machine: {info['machine']}. Store: {info['papers']:,} papers, "
        f"{info['topics']} topics ({info['topic_source']}), {info['summaries']:,} summaries.", "",
        "Command:", "", f"    {command}", "",
        "## Server-side render (store queries + page dict + HTML), milliseconds", "",
        f"Medians over {info['runs']} runs of each run's p50 and p95; baseline = the 404 page "
        "(template only).", "",
        "| page | samples | p50 | p95 | p95 per run | p50 vs baseline |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for kind, r in render.items():
        lines.append(f"| {kind} | {r['samples']} | {r['p50_ms']} | {r['p95_ms']} | "
                     f"{', '.join(map(str, r['p95_runs']))} | {r['p50_vs_baseline']}x |")
    lines.append("")
    if loads:
        first = loads[0]
        lines += [
            "## Throughput: topic pages over HTTP on loopback", "",
            f"`papersift serve --workers {first['workers']}`, wrk -t1 -c{first['connections']} "
            f"-d{first['seconds']}s over 200 topic page URLs (pages 1-3), {first['runs']} runs "
            "each; baseline /healthz (JSON, one tiny query) against the same server. "
            "`web_cache_mb` is the per-worker page cache (dropped whenever the database "
            "changes); 0 renders every request.", "",
            "| web_cache_mb | topic req/s (median) | runs | errors | topic p99 | /healthz req/s "
            "| topic / healthz |", "|---:|---:|---|---:|---|---:|---:|",
        ]
        for load in loads:
            lines.append(
                f"| {load['cache_mb']} | {load['topic_rps_median']} | {load['topic_rps_runs']} | "
                f"{load['topic_errors'] + load['healthz_errors']} | {load['topic_p99']} | "
                f"{load['healthz_rps_median']} | {load['ratio_to_healthz']} |")
        lines += ["", "wrk shares the 2 cores with the two workers.", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(BENCH_DIR / "web"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stand-in-topics", action="store_true",
                        help="Create stand-in topics when the store has none.")
    parser.add_argument("--load", action="store_true", help="Also run the wrk load test.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--load-runs", type=int, default=3)
    parser.add_argument("--out", default="/dev/stdout",
                        help="Where the Markdown results go (paste them into docs/benchmarks.md).")
    args = parser.parse_args()
    settings = load_settings(data_dir=args.data_dir)
    site = views.Site(settings)
    db = site.store
    if not db.topics.has_topics() and args.stand_in_topics:
        stand_in_topics(db)
    method = db.conn.execute(
        "SELECT method FROM topic_builds ORDER BY id DESC LIMIT 1").fetchone()
    info = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python "
                   f"{platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}",
        "papers": db.papers.count_papers(), "runs": args.runs,
        "topics": db.conn.execute("SELECT count(*) FROM topics WHERE retired_build IS NULL"
                                  ).fetchone()[0],
        "topic_source": "stand-in topics: primary category x quarter"
        if method and method[0] == "bench-stand-in" else "topics stage",
        "summaries": db.conn.execute("SELECT count(*) FROM summaries").fetchone()[0],
    }
    render = bench_render(site, args.runs, args.samples, args.seed)
    print(json.dumps(render, indent=1))
    loads = []
    if args.load:
        for cache_mb in (64, 0):
            load = bench_load(args.data_dir, args.workers, args.seconds, args.connections,
                              args.load_runs, db, site, cache_mb=cache_mb)
            print(json.dumps({k: v for k, v in load.items() if k != "raw"}, indent=1))
            loads.append(load)
    command = "python benchmarks/bench_web.py " + " ".join(sys.argv[1:])
    write_markdown(Path(args.out), command, info, render, loads)


if __name__ == "__main__":
    main()
