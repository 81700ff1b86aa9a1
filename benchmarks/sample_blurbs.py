"""Ten built-in blurbs for papers drawn at random (fixed seed) from the recent corpus, unedited.

    .venv/bin/python benchmarks/sample_blurbs.py [--seed 2026] [--n 10] [--markdown]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
from pathlib import Path

from papersift.summarize import write_builtin
from papersift.summarize.gate import check
from papersift.summarize.style import check_style
from papersift.summarize.text import clean_latex

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as handle:
        lines = handle.readlines()
    chosen = sorted(random.Random(args.seed).sample(range(len(lines)), args.n))
    for number, index in enumerate(chosen, 1):
        paper = json.loads(lines[index])
        summary = write_builtin(paper)
        reasons = check(summary.tldr, summary.blurb, paper)
        reasons += [f"style {f.rule}: {f.evidence}" for f in check_style(
            summary.blurb, paper["title"], paper["abstract"])]
        title = clean_latex(paper["title"])
        if args.markdown:
            print(f"{number}. **{title}** ({paper['id']})  \n   TL;DR: {summary.tldr}  \n"
                  f"   Blurb: {summary.blurb}" + (f"  \n   gate: {reasons}" if reasons else "") + "\n")
        else:
            print(f"[{number}] {title} ({paper['id']})\n  TL;DR: {summary.tldr}\n"
                  f"  Blurb: {summary.blurb}\n  gate: {reasons or 'pass'}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
