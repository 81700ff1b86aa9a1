"""Relevance of keyword, semantic, plain-RRF and hybrid search on SciFact (training judgments), and the fusion sweep.

Usage:
  python benchmarks/bench_search_relevance.py [--workdir DIR] [--sweep]
With --workdir the embedded corpus is kept there and reused by later runs (the sweep needs it);
without, a temporary store is used, exactly like `papersift eval search`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import numpy as np

from papersift.search.embed import default_embedder
from papersift.search.evaluate import (
    CONFIGS,
    benchmark_store,
    read_corpus,
    read_qrels,
    read_queries,
    run_config,
)
from papersift.search.hybrid import DEFAULT_FUSION
from papersift.search.stage import Embed
from papersift.settings import load_settings
from papersift.store import add_records, open_store

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
SCIFACT = SHARED / "scifact"


class CachedEmbedder:
    """Embeds each distinct query once across the sweep's many configurations."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.stack([self.cache[t] for t in texts])


@contextmanager
def kept_store(workdir: Path, settings):  # noqa: ANN001, ANN201
    """Like benchmark_store, but in a folder that survives the run."""
    embedder = default_embedder(settings)
    bench_settings = settings.replace(data_dir=str(workdir))
    store = open_store(bench_settings)
    if store.papers.count_papers() == 0:
        add_records(store, list(read_corpus(SCIFACT / "corpus.jsonl.gz")))
    Embed(embedder=embedder).run(store, bench_settings)
    try:
        yield store, bench_settings, embedder
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workdir", type=Path, help="keep the embedded corpus here")
    parser.add_argument("--sweep", action="store_true", help="also sweep the fusion parameters")
    parser.add_argument("--qrels", default="qrels-train.tsv")
    args = parser.parse_args()
    if not SCIFACT.is_dir():
        sys.exit(f"SciFact not found at {SCIFACT} (set PAPERSIFT_SHARED_DATA)")
    settings = load_settings()
    queries = read_queries(SCIFACT / "queries.jsonl")
    qrels = read_qrels(SCIFACT / args.qrels)
    opener = kept_store(args.workdir, settings) if args.workdir else benchmark_store(
        SCIFACT / "corpus.jsonl.gz", settings)
    with opener as (store, bench_settings, embedder):
        results = [run_config(store, bench_settings, embedder, queries, qrels, name, *CONFIGS[name])
                   for name in CONFIGS]
        for result in results:
            print(json.dumps(result.as_dict()))
        if args.sweep:
            cached = CachedEmbedder(embedder)  # the sweep reports relevance, not latency
            grid = [(alpha, 2.0) for alpha in (0.3, 0.4, 0.6, 0.7)] + [
                (0.5, title) for title in (1.0, 3.0, 5.0)]
            for alpha, title_weight in grid:
                fusion = replace(DEFAULT_FUSION, keyword_weight=alpha, title_weight=title_weight)
                result = run_config(store, bench_settings, cached, queries, qrels,
                                    f"score a={alpha} title={title_weight}", "hybrid", fusion)
                print(json.dumps(result.as_dict()), flush=True)


if __name__ == "__main__":
    main()
