"""SciFact's relevance among 98,752 arXiv papers: what the keyword plan's budget of postings costs when posting lists are long.

Usage:
  python benchmarks/bench_search_scale.py [--workdir DIR] [--budgets 8000:30000,4000:15000,...]
      [--scored 1000,300,100]

On SciFact alone (5,183 abstracts) no budget binds: its words are in a few thousand papers at
most. Among the recent arXiv papers the common words of its claims ("increased", "associated",
"cells") are in tens of thousands, as at a million papers, so the budget decides which words
rank. The store (kept in DIR/sqlite) holds SciFact's corpus, embedded by the real model, and
the recent papers with their real vectors (/work/cache/recent-embeddings.npy, see
export_vectors.py). The arXiv papers are judged irrelevant: SciFact's judgments cover its own
corpus only, so a distractor ranked above a relevant abstract costs nDCG, as it should.

Each budget is POSTINGS_BUDGET:WORK_CAP (search/keyword.py), set for the run; the first is the
baseline. Then, at the first budget, hybrid search with each number of keyword matches it
takes (KEYWORD_SCORED, search/service.py). Reported per run: nDCG@10, recall@100, the plans'
postings (mean, p95) and the single-client latency of the queries (p50, p95; query vectors
cached after the first run, so that the runs differ only in their keyword work).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from papersift.ingest.stage import Ingest
from papersift.search import keyword, service
from papersift.search.embed import default_embedder, text_hash
from papersift.search.evaluate import read_corpus, read_qrels, read_queries, run_config
from papersift.search.hybrid import DEFAULT_FUSION
from papersift.search.keyword import parse_query, plan_keywords
from papersift.search.metrics import percentile
from papersift.search.stage import Embed
from papersift.settings import load_settings
from papersift.store import add_records, open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_million import CACHE, MODEL, RECENT, LookupEmbedder, lookup_embedder  # noqa: E402
from bench_search_relevance import SCIFACT, CachedEmbedder  # noqa: E402


class KnownOrModel:
    """The recent papers' stored vectors, looked up by text; anything else by the real model."""

    def __init__(self, model, known: LookupEmbedder) -> None:  # noqa: ANN001
        self.model, self.known = model, known
        self.model_id, self.dim = model.model_id, model.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows = [self.known.by_hash.get(text_hash(t)) for t in texts]
        fresh = [i for i, row in enumerate(rows) if row is None]
        if fresh:
            out[fresh] = self.model.embed([texts[i] for i in fresh])
        known = [i for i, row in enumerate(rows) if row is not None]
        if known:
            out[known] = self.known.vectors[[rows[i] for i in known]]
        return out


def build(workdir: Path):  # noqa: ANN201
    settings = load_settings(data_dir=str(workdir / "sqlite"), threads=2)
    model = default_embedder(settings)
    assert model.model_id == MODEL, model.model_id
    store = open_store(settings)
    if store.papers.count_papers(include_duplicates=True) == 0:
        Ingest([f"file:{RECENT}"]).run(store, settings)  # first: an empty store bulk-loads
        add_records(store, list(read_corpus(SCIFACT / "corpus.jsonl.gz")))
    known = lookup_embedder(store, CACHE / "recent-embeddings.npy", CACHE / "recent-ids.json")
    Embed(embedder=KnownOrModel(model, known)).run(store, settings)
    return store, settings, model


def plan_work(store, queries: dict[str, str]) -> list[int]:  # noqa: ANN001
    return [plan_keywords(store.search, parse_query(q), rank=True).work for q in queries.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=CACHE / "scifact-arxiv")
    parser.add_argument("--budgets", default="8000:30000,4000:30000,4000:15000,2000:8000")
    parser.add_argument("--scored", default="1000,300,100")
    args = parser.parse_args()
    budgets = [tuple(int(x) for x in b.split(":")) for b in args.budgets.split(",")]
    queries = read_queries(SCIFACT / "queries.jsonl")
    qrels = read_qrels(SCIFACT / "qrels-train.tsv")
    judged = {qid: queries[qid] for qid in qrels if qid in queries}
    store, settings, model = build(args.workdir)
    embedder = CachedEmbedder(model)
    out = {"papers": store.papers.count_papers(), "queries": len(judged), "runs": []}
    print(f"{out['papers']:,} papers, {len(judged)} judged queries", file=sys.stderr)
    runs = [(budget, cap, mode, service.KEYWORD_SCORED) for budget, cap in budgets
            for mode in ("keyword", "hybrid")]
    runs += [(*budgets[0], "hybrid", int(n)) for n in args.scored.split(",")]
    try:
        for budget, cap, mode, scored in runs:
            keyword.POSTINGS_BUDGET, keyword.WORK_CAP = budget, cap
            service.KEYWORD_SCORED = scored
            work = plan_work(store, judged)
            started = time.perf_counter()
            result = run_config(store, settings, embedder, judged, qrels, mode, mode,
                                DEFAULT_FUSION)
            row = {"budget": budget, "cap": cap, "mode": mode, "keyword_scored": scored,
                   "ndcg10": round(result.ndcg10, 4), "recall100": round(result.recall100, 4),
                   "work_mean": round(statistics.mean(work)),
                   "work_p95": round(percentile(work, 95)),
                   "p50_ms": round(result.p50_ms, 1), "p95_ms": round(result.p95_ms, 1),
                   "seconds": round(time.perf_counter() - started, 1)}
            out["runs"].append(row)
            print(json.dumps(row), flush=True)
    finally:
        store.close()
    (args.workdir / "results.json").write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
