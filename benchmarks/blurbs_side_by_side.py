"""Twenty random blurbs of two built-in writers side by side, as a Markdown table (docs/benchmarks.md, "Issue 33: blurbs before and after").

    PYTHONPATH=src .venv/bin/python benchmarks/blurbs_side_by_side.py --before /tmp/old-src > /tmp/table.md

The papers: `random.Random(seed).sample` of `n` line numbers of arxiv-2025-2026.jsonl.gz, shown
in id order ("*(the same)*" where the two agree). "After" is the writer of this checkout; "before" the writer whose `src` directory
`--before` names (e.g. `git archive 47cf37e src | tar -x -C /tmp/old` for the writer before
issue 33), run in its own process so that the two never share a module.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
_WRITE = """
import json, sys
from papersift.summarize.builtin import WRITER_VERSION, write_builtin
papers = json.load(sys.stdin)
json.dump({"version": WRITER_VERSION, "blurbs": [write_builtin(p).blurb for p in papers]}, sys.stdout)
"""


def sample(seed: int, n: int) -> list[dict]:
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as handle:
        lines = handle.readlines()
    chosen = [json.loads(lines[i]) for i in random.Random(seed).sample(range(len(lines)), n)]
    return sorted(chosen, key=lambda paper: paper["id"])


def write(src: Path, papers: list[dict]) -> dict:
    """The blurbs of the writer in `src`, from a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", _WRITE], input=json.dumps(papers), env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the src directory of the earlier writer")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("-n", type=int, default=20)
    args = parser.parse_args()
    papers = sample(args.seed, args.n)
    before = write(args.before, papers)
    after = write(Path(__file__).resolve().parents[1] / "src", papers)
    print(f"| # | paper | before (writer {before['version']}) | after (writer {after['version']}) |")
    print("|---|---|---|---|")
    same = 0
    for number, (paper, old, new) in enumerate(zip(papers, before["blurbs"], after["blurbs"],
                                                   strict=True), 1):
        same += old == new
        shown = "*(the same)*" if old == new else cell(new)
        print(f"| {number} | {paper['id']}: {cell(' '.join(paper['title'].split()))} | {cell(old)} | {shown} |")
    print(f"\n{same} of {len(papers)} the same.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
