"""Links, threads and weekly briefs in a store of the recent corpus: stand-in topics, a random
sample of links to read, and the stages' times (full, a day of new papers, one week's briefs).

Usage (PYTHONPATH=src, one step at a time; the store: `papersift --data-dir D ingest
file:../shared/data/arxiv-2025-2026.jsonl.gz`, then `papersift --data-dir D links build`):
  python benchmarks/bench_links_store.py standin-topics --data-dir D
  python benchmarks/bench_links_store.py sample --data-dir D [--n 50 --seed 34]
  python benchmarks/bench_links_store.py full --data-dir D [--runs 1]
  python benchmarks/bench_links_store.py incremental --data-dir D --work W [--new 2000]
  python benchmarks/bench_links_store.py briefs --data-dir D --week 2026-W20 [--runs 3]
  python benchmarks/bench_links_store.py threads-full --data-dir D

`standin-topics` gives each paper a topic by its primary category (categories with fewer than
--min-papers go to "other"): the topic stage needs every paper's vector, which this shared
machine could not make in time. `incremental` makes a second store in W holding every paper but
the newest --new, with D's vectors, builds its links, then ingests the newest and times the
links stage on them. Targets (issue 34): links + threads of the 98,742 papers < 5 min, 2,000
new < 30 s, every topic's brief of one week < 60 s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from papersift.briefs.stage import Briefs
from papersift.ingest.stage import Ingest
from papersift.links.linker import Artefact, Link
from papersift.links.stage import Links
from papersift.links.threads import Corpus, build_threads
from papersift.search.embed import embedding_text, model_id, text_hash
from papersift.settings import Settings, load_settings
from papersift.store import Store, open_store

DATA = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))
PAPERS = DATA / "arxiv-2025-2026.jsonl.gz"
OLD = DATA / "arxiv-cs-1993-2019.snapshot.jsonl.gz"


def _settings(data_dir: Path, embed: bool = True) -> Settings:
    return load_settings(data_dir=str(data_dir), links_old_papers=str(OLD.resolve()),
                         links_embed_missing=embed)


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def standin_topics(store: Store, min_papers: int) -> None:
    categories = store.papers.primary_categories()
    sizes = Counter(c for c in categories.values() if c)
    kept = sorted(c for c, n in sizes.items() if n >= min_papers)
    topics = [{"key": c, "id": None, "slug": c.lower().replace(".", "-"), "label": c,
               "key_phrases": [], "section": "all", "is_other": False, "centroid": None}
              for c in kept]
    topics.append({"key": "other", "id": None, "slug": "other", "label": "Other",
                   "key_phrases": [], "section": None, "is_other": True, "centroid": None})
    store.topics.replace_topics({
        "method": "stand-in: primary category", "n_papers": len(categories),
        "sections": [{"key": "all", "slug": "all", "label": "All", "position": 0}],
        "topics": topics,
        "assignments": [(pid, c if c in sizes and sizes[c] >= min_papers else "other", None)
                        for pid, c in categories.items()]})
    print(f"{len(kept)} topics (+ other) over {len(categories):,} papers")


def sample(store: Store, n: int, seed: int) -> None:
    """Random shown links with what a reader needs to judge them: the sentence of the source
    that names the artefact, and the origin's title."""
    found = store.links.all_links()  # type: ignore[attr-defined]
    picked = random.Random(seed).sample(found, min(n, len(found)))
    papers = {p["id"]: p for p in store.papers.iter_papers(
        ids=sorted({x for s, t, *_ in picked for x in (s, t)}))}
    print(f"{len(found):,} shown links; {len(picked)} drawn (seed {seed})")
    for number, (source, target, name, day, similarity) in enumerate(picked, 1):
        text = " ".join(papers[source]["abstract"].split())
        at = text.find(name)
        context = text[max(0, at - 160): at + 160] if at >= 0 else papers[source]["title"]
        print(json.dumps({"n": number, "name": name, "source": source, "target": target,
                          "similarity": round(similarity, 3), "day": day,
                          "source_title": papers[source]["title"],
                          "target_title": papers[target]["title"], "context": context},
                         ensure_ascii=False))


def full(data_dir: Path, runs: int) -> None:
    times = []
    for _ in range(runs):
        with open_store(_settings(data_dir, embed=False)) as store:
            started = time.perf_counter()
            report = Links(redo=True).run(store, _settings(data_dir, embed=False))
            times.append(time.perf_counter() - started)
        print(json.dumps({"full_seconds": round(times[-1], 1), "counts": report.counts,
                          "load": _load()}))
    print(f"median {statistics.median(times):.1f} s over {runs} runs")


def _records() -> list[dict[str, Any]]:
    with gzip.open(PAPERS, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return sorted((r for r in rows if r.get("announced")), key=lambda r: (r["announced"], r["id"]))


def incremental(data_dir: Path, work: Path, new: int) -> None:
    records = _records()
    old, fresh = records[:-new], records[-new:]
    work.mkdir(parents=True, exist_ok=True)
    settings = _settings(work, embed=False)
    with open_store(_settings(data_dir)) as source, open_store(settings) as store:
        if not store.papers.count_papers():
            (work / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
            Ingest([f"file:{work / 'old.jsonl'}"]).run(store, settings)
            model = model_id(_settings(data_dir), source)
            ids, matrix = source.embeddings.embedding_matrix(model)
            text = {r["id"]: embedding_text(r["title"], r["abstract"]) for r in records}
            store.embeddings.put_embeddings(model, [(pid, text_hash(text.get(pid, "")), v)
                                                    for pid, v in zip(ids, matrix, strict=True)])
        started = time.perf_counter()
        first = Links().run(store, settings)
        print(json.dumps({"papers_before": first.counts["papers"],
                          "seconds": round(time.perf_counter() - started, 1), "load": _load()}))
        (work / "new.jsonl").write_text("".join(json.dumps(r) + "\n" for r in fresh))
        Ingest([f"file:{work / 'new.jsonl'}"]).run(store, settings)
        started = time.perf_counter()
        report = Links().run(store, settings)
        print(json.dumps({"new_papers": report.counts["papers"], "days": len(
            {r["announced"] for r in fresh}), "seconds": round(time.perf_counter() - started, 2),
            "counts": report.counts, "load": _load()}))


def briefs(data_dir: Path, week: str, runs: int) -> None:
    settings = _settings(data_dir)
    with open_store(settings) as store:
        for _ in range(runs):
            started = time.perf_counter()
            report = Briefs(week=week, redo=True).run(store, settings)
            print(json.dumps({"week": week, "built": report.counts["built"],
                              "seconds": round(time.perf_counter() - started, 2),
                              "load": _load()}))


def threads_full(data_dir: Path) -> None:
    """The threads step over a full-size matrix: the store's vectors where it has them, random
    unit vectors for the other papers (the same products per member, fewer close papers)."""
    settings = _settings(data_dir)
    with open_store(settings) as store:
        links = store.links  # type: ignore[attr-defined]
        model = model_id(settings, store)
        pairs = links.paper_days()
        ids, matrix = store.embeddings.embedding_matrix(model)
        have = dict(zip(ids, matrix, strict=True))
        rng = np.random.default_rng(34)
        full_matrix = rng.standard_normal((len(pairs), matrix.shape[1])).astype(np.float32)
        full_matrix /= np.linalg.norm(full_matrix, axis=1, keepdims=True)
        for i, (pid, _) in enumerate(pairs):
            if pid in have:
                full_matrix[i] = have[pid]
        artefact_rows, link_rows = links.thread_inputs(None)
        started = time.perf_counter()
        corpus = Corpus([p for p, _ in pairs], [d for _, d in pairs], full_matrix)
        threads = build_threads([Artefact(*r) for r in artefact_rows],
                                [Link(*r) for r in link_rows], corpus)
        print(json.dumps({"papers": len(pairs), "real_vectors": len(have),
                          "threads": len(threads), "seconds": round(time.perf_counter() - started, 1),
                          "load": _load()}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["standin-topics", "sample", "full", "incremental",
                                         "briefs", "threads-full"])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--new", type=int, default=2000)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--week", default="2026-W20")
    parser.add_argument("--min-papers", type=int, default=400)
    args = parser.parse_args()
    if args.step in ("standin-topics", "sample"):
        with open_store(_settings(args.data_dir)) as store:
            if args.step == "standin-topics":
                standin_topics(store, args.min_papers)
            else:
                sample(store, args.n, args.seed)
    elif args.step == "full":
        full(args.data_dir, args.runs)
    elif args.step == "incremental":
        incremental(args.data_dir, args.work, args.new)
    elif args.step == "briefs":
        briefs(args.data_dir, args.week, args.runs)
    else:
        threads_full(args.data_dir)


if __name__ == "__main__":
    main()
