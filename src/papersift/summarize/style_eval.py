"""`papersift eval style`: how many blurbs break each house-style rule, over a store or a JSONL file, with examples."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from papersift.errors import UsageError
from papersift.store import Store
from papersift.summarize import style
from papersift.summarize.evaluate import json_lines

# The rates the built-in writer is held to (issue 18): at most, except the name (at least).
TARGETS = {style.HYPE: 0.01, style.SELF_REFERENCE: 0.0, style.DANGLING: 0.01,
           style.TITLE_NAME: 0.01}


class StyleDataError(UsageError):
    """The blurbs file is missing or not JSON lines with a 'blurb'."""


def store_blurbs(store: Store, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every visible blurb of the store with its paper's id, title and abstract."""
    papers: list[dict[str, Any]] = []

    def flush() -> Iterator[dict[str, Any]]:
        found = store.summaries.summaries_for([p["id"] for p in papers])
        for paper in papers:
            summary = found.get(paper["id"])
            if summary and summary.get("blurb"):
                yield {"id": paper["id"], "title": paper.get("title") or "",
                       "abstract": paper.get("abstract") or "", "blurb": summary["blurb"]}

    for paper in store.papers.iter_papers(batch=batch):
        papers.append(paper)
        if len(papers) >= batch:
            yield from flush()
            papers = []
    yield from flush()


def file_blurbs(path: Path | str, skipped: list[dict[str, str]]) -> Iterator[dict[str, Any]]:
    """Records of a JSON-lines file: `blurb` (required), `title`, `abstract`, `id`. A line that
    is not such a record is appended to `skipped` with where and why."""
    path = Path(path)
    if not path.is_file():
        raise StyleDataError(f"no such file: {path}")
    for number, record in json_lines(path):
        if isinstance(record, json.JSONDecodeError):
            skipped.append({"where": f"{path}:{number}", "reason": f"not JSON ({record.msg})"})
            continue
        if not isinstance(record, dict) or not isinstance(record.get("blurb"), str):
            skipped.append({"where": f"{path}:{number}", "reason": "no 'blurb' text"})
            continue
        yield {"id": str(record.get("id") or f"line {number}"),
               "title": str(record.get("title") or ""),
               "abstract": str(record.get("abstract") or ""), "blurb": record["blurb"]}


def evaluate_style(records: Iterable[dict[str, Any]], examples: int = 3) -> dict[str, Any]:
    """Per rule: blurbs breaking it, out of how many it applies to, the rate, and examples.

    Every rule applies to every blurb but the name rule, which applies to the blurbs whose
    title has a name.
    """
    counts = dict.fromkeys(style.RULES, 0)
    shown: dict[str, list[dict[str, str]]] = {rule: [] for rule in style.RULES}
    blurbs = named = 0
    for record in records:
        blurbs += 1
        if style.title_name(record["title"], record["abstract"]):
            named += 1
        findings = style.check_style(record["blurb"], record["title"], record["abstract"])
        for rule in dict.fromkeys(f.rule for f in findings):
            counts[rule] += 1
            if len(shown[rule]) < examples:
                shown[rule].append({
                    "id": record["id"], "title": record["title"], "blurb": record["blurb"],
                    "evidence": "; ".join(f.evidence for f in findings if f.rule == rule)})
    rules = {}
    for rule in style.RULES:
        of = named if rule == style.TITLE_NAME else blurbs
        rate = counts[rule] / of if of else 0.0
        rules[rule] = {"blurbs": counts[rule], "of": of, "rate": rate,
                       "target": TARGETS[rule], "met": rate <= TARGETS[rule],
                       "examples": shown[rule]}
    return {"blurbs": blurbs, "titles_with_a_name": named, "rules": rules}
