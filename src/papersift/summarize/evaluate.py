"""ROUGE evaluation of TL;DRs on SciTLDR-layout data, beside the lead-sentence baseline."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from papersift.errors import UsageError
from papersift.summarize.builtin import write_builtin
from papersift.summarize.text import clean_latex

METRICS = ("rouge1", "rouge2", "rougeL")


class EvalDataError(UsageError):
    """The evaluation file is missing or not in SciTLDR layout."""


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value, or the JSONDecodeError of a line that is not JSON) for each
    non-blank line of a JSON-lines file: the caller decides whether a bad line is fatal."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                yield number, exc


def load_scitldr(path: Path | str) -> list[dict[str, Any]]:
    """Records with `source` (list of abstract sentences), `target` (list of TL;DRs), `title`."""
    path = Path(path)
    if not path.is_file():
        raise EvalDataError(f"no such file: {path}")
    records = []
    for number, record in json_lines(path):
        if isinstance(record, json.JSONDecodeError):
            raise EvalDataError(f"{path}:{number}: not JSON ({record.msg})")
        source, target = record.get("source"), record.get("target")
        if not isinstance(source, list) or not isinstance(target, list | str) or not target:
            raise EvalDataError(f"{path}:{number}: needs 'source' (list) and 'target'")
        record["target"] = [target] if isinstance(target, str) else target
        records.append(record)
    if not records:
        raise EvalDataError(f"{path}: no records")
    return records


def rouge_scores(predictions: list[str], references: list[list[str]]) -> dict[str, float]:
    """Mean over papers of the best F1 over each paper's references, for ROUGE-1/2/L."""
    try:
        from rouge_score import rouge_scorer  # a dev dependency; only evaluation needs it
    except ImportError:
        raise EvalDataError("ROUGE needs the rouge-score package: pip install rouge-score") from None

    scorer = rouge_scorer.RougeScorer(list(METRICS), use_stemmer=True)
    totals = dict.fromkeys(METRICS, 0.0)
    for prediction, refs in zip(predictions, references, strict=True):
        best = dict.fromkeys(METRICS, 0.0)
        for ref in refs:
            scores = scorer.score(ref, prediction)
            for metric in METRICS:
                best[metric] = max(best[metric], scores[metric].fmeasure)
        for metric in METRICS:
            totals[metric] += best[metric]
    n = max(1, len(predictions))
    return {metric: totals[metric] / n for metric in METRICS}


def _summary_row(predictions: list[str], references: list[list[str]]) -> dict[str, float]:
    row = rouge_scores(predictions, references)
    row["mean_words"] = sum(len(p.split()) for p in predictions) / max(1, len(predictions))
    return row


def lead_sentence(record: dict[str, Any]) -> str:
    return clean_latex(record["source"][0]) if record["source"] else ""


def builtin_tldr(record: dict[str, Any]) -> str:
    paper = {"title": record.get("title") or "", "abstract": " ".join(record["source"]),
             "authors": record.get("authors") or []}
    return write_builtin(paper).tldr


def evaluate_tldr(
    records: Iterable[dict[str, Any]],
    systems: dict[str, Callable[[dict[str, Any]], str]] | None = None,
) -> dict[str, Any]:
    """Scores of each system (default: the built-in writer and the lead sentence) on these records."""
    records = list(records)
    systems = systems or {"builtin": builtin_tldr, "lead": lead_sentence}
    references = [r["target"] for r in records]
    report: dict[str, Any] = {"papers": len(records), "systems": {}}
    for name, system in systems.items():
        started = time.perf_counter()
        predictions = [system(r) for r in records]
        seconds = time.perf_counter() - started
        row = _summary_row(predictions, references)
        row["seconds"] = seconds
        report["systems"][name] = row
    return report


def evaluate_file(path: Path | str) -> dict[str, Any]:
    """`papersift eval tldr`: the built-in writer beside the lead-sentence baseline on one file."""
    report = evaluate_tldr(load_scitldr(path))
    report["data"] = str(path)
    return report
