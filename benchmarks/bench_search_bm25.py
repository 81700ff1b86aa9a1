"""papersift's search against a stock BM25 (bm25s, Porter stemmer, English stop words), in one run.

For SciFact (training judgments) and each collection of shared/data/ir (Cranfield, CISI, MED):
nDCG@10 and Recall@100 of papersift's keyword, semantic, plain-RRF and hybrid modes (through
`papersift.search.search`, as `papersift eval search` runs them), of the stock BM25, and of a
plain RRF (k=60) of the stock BM25 and papersift's semantic ranking; then the issue's targets:
keyword >= stock BM25 - 0.005, hybrid >= plain RRF + 0.01, SciFact hybrid >= 0.7433.

Usage:
  python benchmarks/bench_search_bm25.py [--workdir DIR] [--collections scifact,cranfield,...]
      [--ablation]
With --workdir each corpus is embedded once into DIR/<collection> and reused by later runs
(relevance does not depend on it); without, temporary stores are used. --ablation also runs
keyword and hybrid with each change of issue 17 undone, one at a time.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from unittest import mock

from papersift.search import keyword, search
from papersift.search.evaluate import CONFIGS, benchmark_store, read_qrels, read_queries, run_config
from papersift.search.hybrid import DEFAULT_FUSION, rrf
from papersift.search.metrics import ndcg_at_k, recall_at_k
from papersift.settings import load_settings

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA",
                             Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
COLLECTIONS = {
    "scifact": (SHARED / "scifact", "qrels-train.tsv"),
    "cranfield": (SHARED / "ir" / "cranfield", "qrels.tsv"),
    "cisi": (SHARED / "ir" / "cisi", "qrels.tsv"),
    "medline": (SHARED / "ir" / "medline", "qrels.tsv"),
}
SCIFACT_HYBRID_BEFORE = 0.7433  # the hybrid's SciFact train nDCG@10 before issue 17
DEPTH = 100


def stock_bm25(folder: Path, queries: dict[str, str], stemmer_name: str
               ) -> dict[str, list[str]]:
    """Top DEPTH document ids per query from bm25s as it comes (lucene BM25, k1 1.5, b 0.75),
    title and text as one field, its English stop words and PyStemmer's `stemmer_name`."""
    import bm25s
    import Stemmer

    with gzip.open(folder / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle if line.strip()]
    ids = [str(d["_id"]) for d in docs]
    stemmer = Stemmer.Stemmer(stemmer_name)
    tokens = bm25s.tokenize([f"{d.get('title') or ''} {d.get('text') or ''}" for d in docs],
                            stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    ranked: dict[str, list[str]] = {}
    for qid, text in queries.items():
        query = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not query.vocab:
            ranked[qid] = []
            continue
        found, scores = model.retrieve(query, k=min(DEPTH, len(ids)), show_progress=False)
        ranked[qid] = [ids[int(i)] for i, s in zip(found[0], scores[0], strict=True) if s > 0]
    return ranked


# Each change of issue 17 undone alone: (name, modes, keyword constants, fusion changes).
ABLATIONS = [
    ("repeats count once", ("keyword", "hybrid"), {"MAX_WEIGHT": 1}, {}),
    ("32 words", ("keyword", "hybrid"), {"MAX_WORDS": 32}, {}),
    ("alpha 0.5", ("hybrid",), {}, {"keyword_weight": 0.5}),
    ("no feedback", ("hybrid",), {}, {"feedback_docs": 0}),
    ("alpha 0.5, no feedback", ("hybrid",), {}, {"keyword_weight": 0.5, "feedback_docs": 0}),
]


def ablations(store, settings, embedder, queries, qrels) -> list[dict]:  # noqa: ANN001
    rows = []
    for name, modes, constants, fusion in ABLATIONS:
        with mock.patch.multiple(keyword, **constants) if constants else nullcontext():
            for mode in modes:
                result = run_config(store, settings, embedder, queries, qrels,
                                    f"{mode}, {name}", mode, replace(DEFAULT_FUSION, **fusion))
                rows.append(result.as_dict())
    return rows


def figures(name: str, ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict:
    judged = [q for q in qrels if q in ranked]
    count = max(1, len(judged))
    return {"config": name, "queries": len(judged),
            "ndcg@10": round(sum(ndcg_at_k(ranked[q], qrels[q], 10) for q in judged) / count, 4),
            "recall@100": round(sum(recall_at_k(ranked[q], qrels[q], DEPTH) for q in judged)
                                / count, 4)}


def run_collection(name: str, settings, workdir: Path | None, configs: list[str],  # noqa: ANN001
                   ablation: bool = False) -> list[dict]:
    folder, qrels_name = COLLECTIONS[name]
    queries = read_queries(folder / "queries.jsonl")
    qrels = read_qrels(folder / qrels_name)
    judged = {q: queries[q] for q in qrels if q in queries}
    rows = []
    stock = {}
    for stemmer_name in ("porter", "english"):
        stock[stemmer_name] = stock_bm25(folder, judged, stemmer_name)
        rows.append(figures(f"stock bm25 ({stemmer_name})", stock[stemmer_name], qrels))
    keep = workdir / name if workdir else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    with benchmark_store(folder / "corpus.jsonl.gz", settings, keep_in=keep) as (
            store, bench_settings, embedder):
        for config in configs:
            result = run_config(store, bench_settings, embedder, queries, qrels, config,
                                *CONFIGS[config])
            rows.append(result.as_dict())
        if ablation:
            rows += ablations(store, bench_settings, embedder, queries, qrels)
        semantic = {q: [h.paper_id for h in search(store, bench_settings, text, mode="semantic",
                                                   limit=DEPTH, embedder=embedder,
                                                   snippets=False).hits]
                    for q, text in judged.items()}
    fused = {q: [d for d, _ in rrf([stock["porter"][q], semantic[q]])][:DEPTH] for q in judged}
    rows.append(figures("plain rrf (stock bm25 porter + semantic)", fused, qrels))
    for row in rows:
        row["collection"] = name
        print(json.dumps(row), flush=True)
    return rows


def verdicts(name: str, rows: list[dict]) -> list[str]:
    by = {r["config"]: r for r in rows}
    out = []
    stock = max(by["stock bm25 (porter)"]["ndcg@10"], by["stock bm25 (english)"]["ndcg@10"])
    if "keyword" in by:
        gap = by["keyword"]["ndcg@10"] - stock
        out.append(f"{name}: keyword - best stock bm25 = {gap:+.4f} "
                   f"({'met' if gap >= -0.005 else 'NOT met'}: >= -0.005)")
    if "hybrid" in by and "rrf" in by:
        gap = by["hybrid"]["ndcg@10"] - by["rrf"]["ndcg@10"]
        out.append(f"{name}: hybrid - plain rrf = {gap:+.4f} "
                   f"({'met' if gap >= 0.01 else 'NOT met'}: >= +0.01)")
    if name == "scifact" and "hybrid" in by:
        value = by["hybrid"]["ndcg@10"]
        out.append(f"scifact: hybrid {value:.4f} "
                   f"({'met' if value >= SCIFACT_HYBRID_BEFORE else 'NOT met'}: >= 0.7433)")
    return out


def table(all_rows: list[dict]) -> str:
    lines = ["| collection | config | nDCG@10 | Recall@100 |", "|---|---|---:|---:|"]
    lines += [f"| {r['collection']} | {r['config']} | {r['ndcg@10']:.4f} | {r['recall@100']:.4f} |"
              for r in all_rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, help="keep each embedded corpus here")
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--ablation", action="store_true", help="undo each change alone")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = [n.strip() for n in args.collections.split(",") if n.strip()]
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for name in names:
        if name not in COLLECTIONS or not COLLECTIONS[name][0].is_dir():
            sys.exit(f"collection {name!r} not found under {SHARED} (set PAPERSIFT_SHARED_DATA)")
    settings = load_settings()
    all_rows, checks = [], []
    for name in names:
        rows = run_collection(name, settings, args.workdir, configs, args.ablation)
        all_rows += rows
        checks += verdicts(name, rows)
    print(table(all_rows))
    print("\n".join(checks))
    print(json.dumps({"machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
                      "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}))


if __name__ == "__main__":
    main()
