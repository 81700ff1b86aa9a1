"""The built-in writer over every recent paper (ids once, the last record of an id wins), one JSON line each, for `papersift eval style --data`.

    PYTHONPATH=src .venv/bin/python benchmarks/all_blurbs.py /tmp/blurbs.jsonl [--limit N]

Each line: id, title, abstract, blurb, tldr, gate (the faithfulness gate's reasons, empty when
it passes). Prints papers/s of the writer (CPU time of this one process).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

from papersift.summarize import gate
from papersift.summarize.builtin import write_builtin_checked

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    papers: dict[str, dict] = {}
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            paper = json.loads(line)
            papers[paper["id"]] = paper
    chosen = list(papers.values())[: args.limit or None]
    cpu = 0.0
    with args.out.open("w", encoding="utf-8") as out:
        for paper in chosen:
            started = time.process_time()
            summary, _ = write_builtin_checked(paper)
            cpu += time.process_time() - started
            reasons = gate.check(summary.tldr, summary.blurb, paper)
            out.write(json.dumps({"id": paper["id"], "title": paper["title"],
                                  "abstract": paper["abstract"], "authors": paper.get("authors") or [],
                                  "blurb": summary.blurb,
                                  "tldr": summary.tldr, "gate": reasons}) + "\n")
    print(f"{len(chosen):,} papers, writer {len(chosen) / cpu:,.0f} papers/s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
