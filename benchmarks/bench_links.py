"""Links and threads over the recent corpus in memory: a full build, then a day of new papers.

Usage:
  PYTHONPATH=src python benchmarks/bench_links.py --vectors V.npy --ids IDS.json \\
      [--old-names old-names.tsv] [--new 2000] [--min-similarity 0.30]

The vectors are every paper's unit vector (benchmarks/export_vectors.py's files); the old names
come from `papersift eval threads --old-papers` (its cache file). Targets (issue 34): the full
build < 5 min, 2,000 new papers < 30 s.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from papersift.links.corpus import load_papers, matrix_source
from papersift.links.linker import LinkParams, LinkState, update
from papersift.links.stoplist import read_old_names
from papersift.links.threads import Corpus, build_threads

DATA = Path(os.environ.get("PAPERSIFT_SHARED_DATA", "../shared/data"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=Path, default=DATA / "arxiv-2025-2026.jsonl.gz")
    parser.add_argument("--vectors", type=Path, required=True)
    parser.add_argument("--ids", type=Path, required=True)
    parser.add_argument("--old-names", type=Path)
    parser.add_argument("--new", type=int, default=2000, help="papers of the incremental run")
    parser.add_argument("--min-similarity", type=float, default=LinkParams.min_similarity)
    parser.add_argument("--save-threads", type=Path, help="write the threads here (JSON)")
    parser.add_argument("--save-links", type=Path, help="write the links here (JSON lines)")
    args = parser.parse_args()
    params = LinkParams(min_similarity=args.min_similarity,
                        risky_similarity=args.min_similarity + 0.10)
    old = read_old_names(args.old_names) if args.old_names else {}
    papers = sorted(load_papers(args.papers), key=lambda p: (p.announced, p.id))
    source = matrix_source(args.vectors, args.ids)
    corpus = Corpus([p.id for p in papers], [p.announced for p in papers],
                    source([p.id for p in papers]))
    figures: dict[str, object] = {"papers": len(papers)}

    clock = time.perf_counter()
    state = LinkState()
    result = update(state, papers, source, old, params)
    figures["links_seconds"] = round(time.perf_counter() - clock, 1)
    clock = time.perf_counter()
    threads = build_threads(result.artefacts, result.links, corpus)
    figures["threads_seconds"] = round(time.perf_counter() - clock, 1)
    figures |= {"artefacts": len(result.artefacts), "retracted": len(result.retracted),
                "links": sum(k.status == "linked" for k in result.links),
                "ambiguous": sum(k.status == "ambiguous" for k in result.links),
                "threads": len(threads),
                "threads_with_close_papers": sum(any(m["role"] == "close" for m in t.members)
                                                 for t in threads)}
    figures["full_seconds"] = round(figures["links_seconds"] + figures["threads_seconds"], 1)
    if args.save_threads:
        args.save_threads.write_text(json.dumps([t.__dict__ for t in threads]))
    if args.save_links:
        with args.save_links.open("w") as out:
            for link in result.links:
                out.write(json.dumps(link.__dict__) + "\n")
    figures |= incremental(papers, source, corpus, old, params, args.new)
    print(json.dumps(figures, indent=1))


def incremental(papers: list, source, corpus: Corpus, old: dict, params: LinkParams,
                new: int) -> dict[str, object]:
    """State after all but the newest `new` papers, then the timed update with them and the
    rebuild of the threads they touch."""
    before, after = papers[:-new], papers[-new:]
    state = LinkState()
    earlier = update(state, before, source, old, params)
    clock = time.perf_counter()
    result = update(state, after, source, old, params)
    touched = {(k.name, k.target) for k in result.links if k.status == "linked"}
    artefacts = [a for a in earlier.artefacts + result.artefacts if (a.name, a.origin) in touched]
    retracted = set(result.retracted)
    links = [k for k in earlier.links if f"{k.name}@{k.target}" not in retracted] + result.links
    threads = build_threads(artefacts, links, corpus)
    return {"incremental_papers": len(after), "incremental_days": len({p.announced for p in after}),
            "incremental_seconds": round(time.perf_counter() - clock, 2),
            "incremental_links": len(result.links), "incremental_threads_rebuilt": len(threads)}


if __name__ == "__main__":
    main()
