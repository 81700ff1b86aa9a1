"""`papersift eval style`: how many blurbs break each house-style rule, over a store or a JSONL file, with examples."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from papersift.errors import UsageError
from papersift.store import Store
from papersift.summarize import gate, style
from papersift.summarize.authors import author_naming
from papersift.summarize.evaluate import json_lines
from papersift.summarize.text import split_sentences

# The rates of blurbs breaking each rule that the built-in writer is held to (issues 18 and
# 33), at most; for the name, the rate of named titles whose blurb misses the name.
TARGETS = {style.REGISTER: 0.15, style.HYPE: 0.01, style.SELF_REFERENCE: 0.0,
           style.DANGLING: 0.01, style.FRAGMENT: 0.005, style.RELEASE: 0.0,
           style.SENTENCES: 0.01, style.TITLE_NAME: 0.01}
MEDIAN_SENTENCES_TARGET = 3


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
                       "abstract": paper.get("abstract") or "", "blurb": summary["blurb"],
                       "authors": list(paper.get("authors") or [])}

    for paper in store.papers.iter_papers(batch=batch):
        papers.append(paper)
        if len(papers) >= batch:
            yield from flush()
            papers = []
    yield from flush()


def file_blurbs(path: Path | str, skipped: list[dict[str, str]]) -> Iterator[dict[str, Any]]:
    """Records of a JSON-lines file: `blurb` (required), `title`, `abstract`, `id`, `authors`
    (a list of names). A line that is not such a record is appended to `skipped` with where
    and why."""
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
               "abstract": str(record.get("abstract") or ""), "blurb": record["blurb"],
               "authors": [str(a) for a in record.get("authors") or [] if a]}


def _gate_reasons(record: dict[str, Any]) -> list[str] | None:
    """The faithfulness gate's reasons for a blurb, or None without the abstract to check it
    against. Without authors the blurb's opening is not checked."""
    if not record["abstract"]:
        return None
    authors = record.get("authors") or []
    naming = author_naming(authors)[0] if authors else ""
    return gate.check_blurb(record["blurb"], gate.build_source(record, naming))


def evaluate_style(records: Iterable[dict[str, Any]], examples: int = 3) -> dict[str, Any]:
    """Per rule: blurbs breaking it, out of how many it applies to, the rate, and examples;
    the median number of sentences; how many blurbs pass the faithfulness gate.

    Every rule applies to every blurb but the name rule, which applies to the blurbs whose
    title has a name. The gate applies to the blurbs whose record has the abstract.
    """
    counts = dict.fromkeys(style.RULES, 0)
    shown: dict[str, list[dict[str, str]]] = {rule: [] for rule in style.RULES}
    blurbs = named = gated = passed = 0
    sentence_counts: list[int] = []
    failed: list[dict[str, str]] = []
    for record in records:
        blurbs += 1
        if style.title_name(record["title"], record["abstract"]):
            named += 1
        sentence_counts.append(len(split_sentences(record["blurb"])))
        findings = style.check_style(record["blurb"], record["title"], record["abstract"])
        for rule in dict.fromkeys(f.rule for f in findings):
            counts[rule] += 1
            if len(shown[rule]) < examples:
                shown[rule].append({
                    "id": record["id"], "title": record["title"], "blurb": record["blurb"],
                    "evidence": "; ".join(f.evidence for f in findings if f.rule == rule)})
        reasons = _gate_reasons(record)
        if reasons is not None:
            gated += 1
            if not reasons:
                passed += 1
            elif len(failed) < examples:
                failed.append({"id": record["id"], "blurb": record["blurb"],
                               "evidence": "; ".join(reasons)})
    rules = {}
    for rule in style.RULES:
        of = named if rule == style.TITLE_NAME else blurbs
        rate = counts[rule] / of if of else 0.0
        rules[rule] = {"blurbs": counts[rule], "of": of, "rate": rate,
                       "target": TARGETS[rule], "met": rate <= TARGETS[rule],
                       "examples": shown[rule]}
    median = statistics.median(sentence_counts) if sentence_counts else 0
    return {"blurbs": blurbs, "titles_with_a_name": named, "rules": rules,
            "sentences": {"median": median, "target": MEDIAN_SENTENCES_TARGET,
                          "met": median <= MEDIAN_SENTENCES_TARGET,
                          "counts": {str(n): sentence_counts.count(n)
                                     for n in sorted(set(sentence_counts))}},
            "gate": {"passed": passed, "of": gated, "met": passed == gated,
                     "examples": failed}}
