"""Benchmark of the topics stage on the recent arXiv corpus, beside a k-means k=50 baseline.

Measures (see docs/benchmark-log.md, Topics): NMI/ARI against primary categories, share in
"other", stability when the newest week is added and topics rebuilt, full rebuild time with
the embeddings given, and incremental assignment of 1,000 new papers.

    .venv/bin/python benchmarks/bench_topics.py \
        --embeddings $PAPERSIFT_BENCH_DIR/recent-embeddings.npy --ids $PAPERSIFT_BENCH_DIR/recent-ids.json \
        --data-dir $PAPERSIFT_BENCH_DIR/topics-bench --runs 3 --json /tmp/topics-bench.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from papersift.records import PaperRecord
from papersift.search.embed import FALLBACK_MODEL_ID
from papersift.settings import load_settings
from papersift.store import add_records, open_store
from papersift.topics import AssignTopics, BuildParams, BuildTopics
from papersift.topics.evaluate import agreement, baseline_kmeans, label_checks, stability
from papersift.topics.phrases import choose_labels, class_tfidf, doc_terms
from papersift.topics.plan import paper_text, plan_build

# Scratch stores and matrices of the benchmarks (big; never in the repository).
BENCH_DIR = Path(os.environ.get("PAPERSIFT_BENCH_DIR", "bench-data"))

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".."
                             / "shared" / "data")).resolve()


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_corpus(path: Path, wanted: set[str]) -> dict[str, dict]:
    papers = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["id"] in wanted:
                papers[row["id"]] = row
    return papers


def ensure_store(data_dir: Path, corpus: dict[str, dict], model: str, ids: list[str],
                 vectors: np.ndarray):
    """A store holding the corpus and these embeddings (filled once, reused after)."""
    settings = load_settings(data_dir=str(data_dir))
    store = open_store(settings)
    if store.papers.count_papers() == 0:
        log(f"loading {len(corpus):,} papers into {data_dir}")
        records = [PaperRecord(id=row["id"], title=row["title"], abstract=row["abstract"],
                               authors=row.get("authors") or [], categories=row["categories"],
                               source="file:bench", announced=row.get("announced"))
                   for row in corpus.values()]
        for start in range(0, len(records), 5000):
            add_records(store, records[start:start + 5000])
    # A store left by another run (e.g. the timing proxy) may hold other vectors for the
    # same ids: compare a sample, and rewrite them all if they differ.
    sample = range(0, len(ids), max(1, len(ids) // 200))
    stale = any(
        (stored := store.embeddings.get_embedding(ids[i], model)) is None
        or not np.allclose(stored, vectors[i], atol=1e-5) for i in sample)
    if stale or store.embeddings.count_embeddings(model) < len(ids):
        log("writing embeddings into the store")
        known = set(store.papers.paper_dates())
        rows = [(pid, "bench", vectors[i]) for i, pid in enumerate(ids) if pid in known]
        for start in range(0, len(rows), 5000):
            store.embeddings.put_embeddings(model, rows[start:start + 5000])
    return settings, store


def label_baseline(ids: list[str], labels: np.ndarray, texts: dict) -> tuple[float, list]:
    started = time.perf_counter()
    terms = doc_terms([paper_text(*texts[pid]) for pid in ids])
    n = int(labels.max()) + 1
    phrases = choose_labels(class_tfidf(terms, labels, n), terms.terms, truncated=terms.truncated())
    return time.perf_counter() - started, phrases


def in_memory(results: dict, ids: list[str], vectors: np.ndarray, texts: dict,
              categories: list, dates: dict, params: BuildParams, threads: int,
              with_stability: bool = True) -> None:
    """Quality figures and in-memory build times, beside the k-means k=50 baseline."""
    log("baseline: k-means k=50 + the same phrase labels")
    started = time.perf_counter()
    base_labels = baseline_kmeans(vectors, seed=params.seed)
    cluster_seconds = time.perf_counter() - started
    label_seconds, base_phrases = label_baseline(ids, base_labels, texts)
    results["baseline_kmeans50"] = agreement(list(base_labels), categories) | {
        "seconds": round(cluster_seconds + label_seconds, 1),
        "labels_sample": [", ".join(p[:3]) for p in base_phrases[:10]]}
    log(f"baseline {results['baseline_kmeans50']}")

    log("topics: in-memory build (cold)")
    started, started_cpu = time.perf_counter(), time.process_time()
    plan = plan_build(ids, vectors, texts, None, params, on_progress=log, threads=threads)
    plan_seconds = time.perf_counter() - started
    plan_cpu = time.process_time() - started_cpu
    topic_of = {pid: key for pid, key, _ in plan["assignments"]}
    labels = [topic_of[pid] for pid in ids]
    in_topic = [(t, c) for t, c in zip(labels, categories, strict=True) if t != "other"]
    results["topics"] = {
        "topics": plan["report"]["topics"], "sections": plan["report"]["sections"],
        "other_share": plan["report"]["other_share"],
        "vs_primary_category": agreement(labels, categories),
        "vs_primary_category_excluding_other": agreement(
            [t for t, _ in in_topic], [c for _, c in in_topic]),
        "labels": label_checks(plan["topics"]),
        "seconds_in_memory": round(plan_seconds, 1), "cpu_seconds": round(plan_cpu, 1),
        "phase_seconds": plan["report"]["seconds"],
    }
    log(f"topics {results['topics']}")

    if not with_stability:
        return
    log("stability: hold out the newest week, build, add it back, rebuild")
    results["stability"] = stability(ids, vectors, texts, dates, params, on_progress=log,
                                     threads=threads)
    log(f"stability (warm start) {results['stability']}")
    results["stability_cold"] = stability(
        ids, vectors, texts, dates, replace(params, warm_start=False), on_progress=log,
        threads=threads)
    log(f"stability (cold rebuild) {results['stability_cold']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embeddings", type=Path, default=BENCH_DIR / "recent-embeddings.npy")
    parser.add_argument("--ids", type=Path, default=BENCH_DIR / "recent-ids.json")
    parser.add_argument("--corpus", type=Path, default=SHARED / "arxiv-2025-2026.jsonl.gz")
    parser.add_argument("--data-dir", type=Path, default=BENCH_DIR / "topics-bench")
    parser.add_argument("--model", default=FALLBACK_MODEL_ID)
    parser.add_argument("--runs", type=int, default=3, help="timed full rebuilds (median)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--papers-per-topic", type=int, default=BuildParams.papers_per_topic)
    parser.add_argument("--other-similarity", type=float, default=BuildParams.other_similarity)
    parser.add_argument("--neighbours", type=int, default=BuildParams.neighbours,
                        help="smoothing neighbours (0: cluster the raw vectors)")
    parser.add_argument("--seed", type=int, default=BuildParams.seed)
    parser.add_argument("--skip-store", action="store_true", help="only the in-memory measures")
    parser.add_argument("--skip-stability", action="store_true",
                        help="leave out the two stability rebuilds (e.g. for other seeds)")
    parser.add_argument("--skip-memory", action="store_true",
                        help="only the timings through the store (rebuild, assign)")
    parser.add_argument("--until", help="leave out papers announced after this date (when the "
                        "embeddings cover a contiguous stretch of the corpus, plus strays)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    params = replace(BuildParams(), papers_per_topic=args.papers_per_topic,
                     other_similarity=args.other_similarity, neighbours=args.neighbours,
                     seed=args.seed)
    ids = json.loads(args.ids.read_text())
    vectors = np.load(args.embeddings).astype(np.float32)
    assert len(ids) == len(vectors), "ids and embeddings differ in length"
    log(f"{len(ids):,} embeddings of dim {vectors.shape[1]}")
    corpus = load_corpus(args.corpus, set(ids))
    keep = [i for i, pid in enumerate(ids) if pid in corpus and (
        not args.until or (corpus[pid].get("announced") or "") <= args.until)]
    ids = [ids[i] for i in keep]
    vectors = vectors[keep]
    texts = {pid: (corpus[pid]["title"], corpus[pid]["abstract"]) for pid in ids}
    categories = [(corpus[pid]["categories"] or [None])[0] for pid in ids]
    dates = {pid: corpus[pid].get("announced") for pid in ids}
    results: dict = {"papers": len(ids), "until": args.until, "machine": f"{os.cpu_count()} cores",
                     "date": time.strftime("%Y-%m-%d"), "params": params.__dict__}

    with threadpool_limits(limits=args.threads):
        if not args.skip_memory:
            in_memory(results, ids, vectors, texts, categories, dates, params, args.threads,
                      with_stability=not args.skip_stability)

    if not args.skip_store:
        settings, store = ensure_store(args.data_dir, corpus, args.model, ids, vectors)
        settings = settings.replace(threads=args.threads)
        timings, cpu = [], []
        for run in range(args.runs):
            log(f"full rebuild through the store, run {run + 1}/{args.runs}")
            started, started_cpu = time.perf_counter(), time.process_time()
            report = BuildTopics(params=params).run(store, settings)
            timings.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            log(f"  {timings[-1]:.1f}s ({cpu[-1]:.1f}s CPU): kept {report.counts['kept']}, "
                f"new {len(report.details['new'])}")
        # Wall time depends on what else runs on the machine; CPU time (all threads) less so.
        results["full_rebuild_seconds"] = {"median": round(statistics.median(timings), 1),
                                           "runs": [round(t, 1) for t in timings],
                                           "cpu_median": round(statistics.median(cpu), 1)}
        # Incremental: unassign the newest 1,000 papers, then assign them back.
        newest = sorted(ids, key=lambda pid: (dates.get(pid) or "", pid))[-1000:]
        assign_times, assign_cpu = [], []
        for _ in range(args.runs):
            store.conn.execute("BEGIN IMMEDIATE")
            store.conn.executemany("DELETE FROM paper_topics WHERE paper_id = ?",
                                   [(pid,) for pid in newest])
            store.conn.execute("COMMIT")
            started, started_cpu = time.perf_counter(), time.process_time()
            done = AssignTopics().run(store, settings)
            assign_times.append(time.perf_counter() - started)
            assign_cpu.append(time.process_time() - started_cpu)
            assert done.counts["assigned"] == len(newest), done
        results["assign_1000_seconds"] = {"median": round(statistics.median(assign_times), 3),
                                          "runs": [round(t, 3) for t in assign_times],
                                          "cpu_median": round(statistics.median(assign_cpu), 3)}
        store.close()
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
