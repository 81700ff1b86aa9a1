"""Evaluate search on a benchmark in BEIR layout, indexed into a temporary store (never the user's)."""

from __future__ import annotations

import contextlib
import csv
import gzip
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papersift.errors import UsageError
from papersift.records import PaperRecord
from papersift.search.embed import Embedder, default_embedder
from papersift.search.hybrid import DEFAULT_FUSION, FusionParams
from papersift.search.keywords_stage import Keywords
from papersift.search.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k
from papersift.search.service import search
from papersift.search.stage import Embed
from papersift.settings import Settings
from papersift.stages import OnProgress, no_progress
from papersift.store import Store, add_records, open_store

# The configurations an evaluation reports: the two rankings alone, plain RRF, and ours.
CONFIGS: dict[str, tuple[str, FusionParams]] = {
    "keyword": ("keyword", DEFAULT_FUSION),
    "semantic": ("semantic", DEFAULT_FUSION),
    "rrf": ("hybrid", FusionParams(method="rrf")),
    "hybrid": ("hybrid", DEFAULT_FUSION),
}


class BenchmarkError(UsageError):
    """A benchmark file is missing or not in BEIR layout."""


@dataclass
class EvalResult:
    name: str
    queries: int
    ndcg10: float
    recall100: float
    mrr10: float
    p50_ms: float
    p95_ms: float
    per_query: dict[str, float] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"config": self.name, "queries": self.queries, "ndcg@10": round(self.ndcg10, 4),
                "recall@100": round(self.recall100, 4), "mrr@10": round(self.mrr10, 4),
                "p50_ms": round(self.p50_ms, 2), "p95_ms": round(self.p95_ms, 2)}


def _open_text(path: Path):  # noqa: ANN202
    if not path.is_file():
        raise BenchmarkError(f"file not found: {path}")
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def read_corpus(path: Path) -> Iterator[PaperRecord]:
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                yield PaperRecord(id=str(doc["_id"]), title=doc.get("title") or "",
                                  abstract=doc.get("text") or "", authors=[], categories=[],
                                  source="beir")
            except (ValueError, KeyError, TypeError) as exc:
                raise BenchmarkError(f"{path}:{number}: not a BEIR corpus line ({exc})") from None


def read_queries(path: Path) -> dict[str, str]:
    queries = {}
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    doc = json.loads(line)
                    queries[str(doc["_id"])] = doc["text"]
                except (ValueError, KeyError, TypeError) as exc:
                    raise BenchmarkError(f"{path}:{number}: not a BEIR query line ({exc})") from None
    return queries


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with _open_text(path) as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if len(row) < 3 or row[0] == "query-id":
                continue
            try:
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
            except ValueError:
                raise BenchmarkError(f"{path}: bad relevance {row[2]!r} for query {row[0]}") from None
    return qrels


@contextmanager
def benchmark_store(corpus: Path, settings: Settings, embedder: Embedder | None = None,
                    on_progress: OnProgress = no_progress, keep_in: Path | None = None,
                    ) -> Iterator[tuple[Store, Settings, Embedder]]:
    """A temporary data dir holding the corpus, embedded and indexed; deleted afterwards.

    The embedding model comes from the user's data dir (a cache), the papers never go there.
    With `keep_in` the data dir is that folder instead and survives: a later run finds the
    corpus there already embedded (benchmarks that run many configurations reuse it)."""
    embedder = embedder or default_embedder(settings)
    with contextlib.ExitStack() as stack:
        folder = str(keep_in) if keep_in else stack.enter_context(
            tempfile.TemporaryDirectory(prefix="papersift-eval-"))
        temp_settings = settings.replace(data_dir=folder, database_url="")  # never the real store
        store = open_store(temp_settings)
        stack.callback(store.close)
        if store.papers.count_papers(include_duplicates=True) == 0:
            _load_corpus(store, corpus)
        # The keyword postings too, as `papersift update` builds them: the engine that serves.
        Keywords().run(store, temp_settings, on_progress)
        Embed(embedder).run(store, temp_settings, on_progress)
        yield store, temp_settings, embedder


def _load_corpus(store: Store, corpus: Path) -> None:
    batch: list[PaperRecord] = []
    for record in read_corpus(corpus):
        batch.append(record)
        if len(batch) >= 2000:
            add_records(store, batch)
            batch = []
    add_records(store, batch)


def run_config(store: Store, settings: Settings, embedder: Embedder, queries: dict[str, str],
               qrels: dict[str, dict[str, int]], name: str, mode: str,
               fusion: FusionParams) -> EvalResult:
    """Every judged query through search(); metrics averaged over the judged queries."""
    ndcg, recall, mrr, latencies = [], [], [], []
    per_query: dict[str, float] = {}
    judged = [qid for qid in qrels if qid in queries]
    for qid in judged:
        started = time.perf_counter()
        results = search(store, settings, queries[qid], mode=mode, limit=100, fusion=fusion,
                         embedder=embedder, snippets=False)
        latencies.append((time.perf_counter() - started) * 1000)
        ranked = [hit.paper_id for hit in results.hits]
        relevance = qrels[qid]
        per_query[qid] = ndcg_at_k(ranked, relevance, 10)
        ndcg.append(per_query[qid])
        recall.append(recall_at_k(ranked, relevance, 100))
        mrr.append(mrr_at_k(ranked, relevance, 10))
    count = max(1, len(judged))
    return EvalResult(name=name, queries=len(judged), ndcg10=sum(ndcg) / count,
                      recall100=sum(recall) / count, mrr10=sum(mrr) / count,
                      p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95),
                      per_query=per_query)


def evaluate(corpus: Path, queries_path: Path, qrels_path: Path, settings: Settings,
             configs: list[str] | None = None,
             on_progress: OnProgress = no_progress) -> list[EvalResult]:
    """Index the corpus into a temporary store and evaluate each configuration on it."""
    names = configs or list(CONFIGS)
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise BenchmarkError(f"unknown mode {unknown[0]!r}; use {', '.join(CONFIGS)} or all")
    queries = read_queries(queries_path)
    qrels = read_qrels(qrels_path)
    if not any(qid in queries for qid in qrels):
        raise BenchmarkError("no query in the qrels file has a text in the queries file")
    with benchmark_store(corpus, settings, on_progress=on_progress) as (store, temp_settings, emb):
        return [run_config(store, temp_settings, emb, queries, qrels, name, *CONFIGS[name])
                for name in names]
