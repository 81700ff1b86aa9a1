"""Benchmark of the built-in summary writer: speed, faithfulness-gate pass rate, house style, SciTLDR ROUGE.

    .venv/bin/python benchmarks/bench_summarize.py [--papers 10000] [--runs 3] [--json]
    .venv/bin/python benchmarks/bench_summarize.py --fit   # refit roles.WEIGHTS on SciTLDR train
    .venv/bin/python benchmarks/bench_summarize.py --papers 2000 --runs 3 --before /tmp/old/src

With --before (a `src` tree, e.g. from `git archive`): only the writer's speed, in a fresh
process per writer (cold caches), the older writer and this one alternating, --runs rounds;
medians, their ratio and the load average.

Speed is single-process (one core): papers/s of write_builtin on the first N papers of
arxiv-2025-2026.jsonl.gz, median of several runs, in CPU time (what the machine's other load
cannot distort) and wall time, beside a baseline measured in the same run (clean the abstract
and take its first sentence). Gate: share of those papers whose built-in TL;DR and blurb pass
papersift.summarize.gate.check. Style: the house-style rules (docs/style.md) over the same
blurbs, as `papersift eval style` counts them. ROUGE: `papersift eval tldr` on scitldr/dev.jsonl.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from papersift.summarize import gate
from papersift.summarize.builtin import write_builtin
from papersift.summarize.evaluate import evaluate_file
from papersift.summarize.style_eval import evaluate_style
from papersift.summarize.text import clean_latex, split_sentences

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))


def load_papers(n: int) -> list[dict[str, Any]]:
    papers = []
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            if len(papers) >= n:
                break
            papers.append(json.loads(line))
    return papers


def lead_baseline(paper: dict[str, Any]) -> str:
    sentences = split_sentences(clean_latex(paper["abstract"]))
    return sentences[0] if sentences else ""


def clear_caches() -> None:
    """Empty every cache of papersift's functions (clean_latex, the kept splits and rewrites)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("papersift"):
            for value in vars(module).values():
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def timed(function: Any, papers: list[dict[str, Any]], runs: int) -> dict[str, float]:
    cpu, wall = [], []
    for _ in range(runs):
        clear_caches()  # every run pays for the LaTeX cleanup and the writer's kept rewrites
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        for paper in papers:
            function(paper)
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started_wall)
    return {"cpu_papers_per_s": len(papers) / statistics.median(cpu),
            "wall_papers_per_s": len(papers) / statistics.median(wall),
            "cpu_seconds_runs": [round(c, 3) for c in cpu]}


def gate_pass_rate(papers: list[dict[str, Any]], blurbs: list[dict[str, Any]] | None = None
                   ) -> dict[str, Any]:
    """The gate's pass rate; each blurb is appended to `blurbs` (for the style count)."""
    failures: collections.Counter[str] = collections.Counter()
    examples = []
    passed = 0
    for paper in papers:
        summary = write_builtin(paper)
        if blurbs is not None:
            blurbs.append({"id": paper["id"], "title": paper["title"],
                           "abstract": paper["abstract"], "blurb": summary.blurb})
        reasons = gate.check(summary.tldr, summary.blurb, paper)
        if not reasons:
            passed += 1
            continue
        for reason in reasons:
            failures[reason.split(":")[0] + ":" + reason.split(":")[1]] += 1
        if len(examples) < 10:
            examples.append({"id": paper["id"], "reasons": reasons})
    return {"papers": len(papers), "passed": passed, "pass_rate": passed / max(1, len(papers)),
            "failures": dict(failures), "examples": examples}


def fit_weights() -> dict[str, float]:
    """Least squares (per-abstract centred) of each sentence's ROUGE-1 as a TL;DR on SciTLDR train."""
    import numpy as np
    from rouge_score import rouge_scorer

    from papersift.summarize import builtin, person, roles

    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    names = [k for k in roles.WEIGHTS if k != "bias"]
    rows, targets, groups = [], [], []
    with (SHARED / "scitldr" / "train.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            record = json.loads(line)
            prepared = builtin.prepare({"title": record["title"], "abstract": " ".join(record["source"])})
            texts = [s.text for s in prepared.sentences]
            for sentence, (_role, features) in zip(
                    prepared.sentences, roles.feature_table(texts, prepared.title), strict=True):
                tldr = builtin.compress(person.to_third_person(
                    person.strip_openers(sentence.text), "The authors", False), 30)[0]
                score = max(scorer.score(ref, tldr)["rouge1"].fmeasure for ref in record["target"])
                rows.append([features[k] for k in names])
                targets.append(score)
                groups.append(number)
    x, y, g = np.array(rows), np.array(targets), np.array(groups)
    for group in np.unique(g):
        mask = g == group
        x[mask] -= x[mask].mean(0)
        y[mask] -= y[mask].mean()
    ridge = 0.1 * np.eye(x.shape[1])
    weights = np.linalg.solve(x.T @ x + ridge, x.T @ y)
    return {name: round(float(w), 3) for name, w in zip(names, weights, strict=True)}


# One fresh process's measure: the first N records' write_builtin in CPU time, in papers/s.
_FRESH_RUN = """
import gzip, itertools, json, sys, time
from papersift.summarize.builtin import write_builtin
with gzip.open(sys.argv[1], "rt", encoding="utf-8") as handle:
    papers = [json.loads(line) for line in itertools.islice(handle, int(sys.argv[2]))]
started = time.process_time()
for paper in papers:
    write_builtin(paper)
print(len(papers) / (time.process_time() - started))
"""


def compare_fresh(before: Path, papers: int, rounds: int) -> dict[str, Any]:
    """papers/s of the writer under `before` and of this one, a fresh process each, alternating."""
    import subprocess

    trees = {"before": before.resolve(), "after": Path(__file__).resolve().parents[1] / "src"}
    runs: dict[str, list[float]] = {name: [] for name in trees}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    for _ in range(rounds):
        for name, tree in trees.items():
            done = subprocess.run(
                [sys.executable, "-c", _FRESH_RUN, str(SHARED / "arxiv-2025-2026.jsonl.gz"),
                 str(papers)], env={**env, "PYTHONPATH": str(tree)}, cwd=tree.parent,
                capture_output=True, text=True, check=True)
            runs[name].append(float(done.stdout.strip()))
    medians = {name: statistics.median(values) for name, values in runs.items()}
    return {"papers": papers, "rounds": rounds, "runs": runs, "medians": medians,
            "ratio": medians["after"] / medians["before"], "load_average": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--fit", action="store_true", help="print refitted roles.WEIGHTS and exit")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="compare the writer's speed with this src tree's, fresh processes")
    args = parser.parse_args()
    if args.before:
        compared = compare_fresh(args.before, args.papers, args.runs)
        if args.json:
            print(json.dumps(compared, indent=2))
            return 0
        for name in ("before", "after"):
            shown = " / ".join(f"{value:,.0f}" for value in compared["runs"][name])
            print(f"{name:6s} median {compared['medians'][name]:,.1f} papers/s CPU (runs {shown})")
        load = " ".join(f"{value:.2f}" for value in compared["load_average"])
        print(f"ratio {compared['ratio']:.3f}; load average {load}")
        return 0
    if args.fit:
        print(json.dumps(fit_weights(), indent=1))
        return 0
    papers = load_papers(args.papers)
    report = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores (shared), python {sys.version.split()[0]}",
        "speed_builtin": timed(write_builtin, papers, args.runs),
        "speed_lead_baseline": timed(lead_baseline, papers, args.runs),
    }
    blurbs: list[dict[str, Any]] = []
    report["gate"] = gate_pass_rate(papers, blurbs)
    report["style"] = evaluate_style(blurbs, examples=2)
    report["scitldr_dev"] = evaluate_file(SHARED / "scitldr" / "dev.jsonl")
    report["speed_ratio_builtin_vs_lead"] = (report["speed_builtin"]["cpu_papers_per_s"]
                                             / report["speed_lead_baseline"]["cpu_papers_per_s"])
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    speed, base = report["speed_builtin"], report["speed_lead_baseline"]
    print(f"builtin writer: {speed['cpu_papers_per_s']:,.0f} papers/s CPU "
          f"({speed['wall_papers_per_s']:,.0f} wall), median of {args.runs} runs on {len(papers):,} papers")
    print(f"lead baseline:  {base['cpu_papers_per_s']:,.0f} papers/s CPU; builtin costs "
          f"{1 / report['speed_ratio_builtin_vs_lead']:.1f}x the baseline")
    g = report["gate"]
    print(f"gate: {g['passed']:,}/{g['papers']:,} pass ({100 * g['pass_rate']:.2f}%) {g['failures'] or ''}")
    for rule, row in report["style"]["rules"].items():
        print(f"style {rule:15s} {row['blurbs']:,}/{row['of']:,} ({100 * row['rate']:.2f}%)")
    for name, row in report["scitldr_dev"]["systems"].items():
        print(f"SciTLDR dev {name:8s} R1 {row['rouge1']:.4f} R2 {row['rouge2']:.4f} "
              f"RL {row['rougeL']:.4f} mean words {row['mean_words']:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
