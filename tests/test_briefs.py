"""Weekly briefs on a real week of papers: growth, threads, five to read for coverage, and a brief
that passes the faithfulness rule; the checker catches each kind of break."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from papersift.briefs.check import check_brief, check_briefs
from papersift.briefs.week import build_brief, build_week, builtin_writer
from papersift.briefs.weeks import growth, parse_week, week_of, weeks_before
from papersift.errors import UsageError
from papersift.links.threads import Thread
from tests.conftest import shared_file

WEEK = "2025-06-09"  # a Monday; its ISO week below


@lru_cache(maxsize=1)
def _window() -> tuple[dict[str, Any], ...]:
    """Papers of the week of WEEK and the four weeks before (first copy of each id)."""
    week = week_of(WEEK)
    keep = {week, *weeks_before(week)}
    found: dict[str, dict[str, Any]] = {}
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if week_of(row["announced"]) in keep:
                found.setdefault(row["id"], row)
    return tuple(found.values())


def _vectors(papers: Sequence[dict[str, Any]]) -> Any:
    hashing = HashingVectorizer(n_features=2**14, stop_words="english", alternate_sign=False)
    matrix = hashing.transform([f"{p['title']}. {p['abstract']}" for p in papers]).toarray()
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
    row = {p["id"]: i for i, p in enumerate(papers)}
    return lambda ids: matrix[[row[i] for i in ids]].astype(np.float32)


def test_weeks() -> None:
    assert week_of("2025-06-09") == "2025-W24"
    assert week_of("2026-01-01") == "2026-W01"
    assert [d.isoformat() for d in parse_week("2025-W24")] == ["2025-06-09", "2025-06-15"]
    assert weeks_before("2026-W02", 4) == ["2025-W50", "2025-W51", "2025-W52", "2026-W01"]
    with pytest.raises(UsageError):
        parse_week("2025-24")
    grown = growth(["2025-06-10"] * 6 + ["2025-06-02"] * 2 + ["2025-05-20"] * 2, "2025-W24")
    assert grown["papers"] == 6 and grown["before"] == [0, 2, 0, 2]
    assert grown["mean_before"] == 1.0 and grown["growth"] == 6.0


def _topics(papers: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Primary categories as the topics (the topic stage's clustering needs a store)."""
    top = [c for c, _ in Counter(p["categories"][0] for p in papers).most_common(6)]
    topics = [{"id": c, "slug": c.lower().replace(".", "-"), "label": c} for c in top]
    return topics, {p["id"]: p["categories"][0] for p in papers if p["categories"][0] in top}


def test_a_real_week_of_briefs_keeps_the_rule() -> None:
    papers = list(_window())
    topics, topic_of = _topics(papers)
    week = week_of(WEEK)
    briefs = build_week(topics, topic_of, papers, week, _vectors(papers), [])
    assert len(briefs) == len(topics)
    by_id = {p["id"]: p for p in papers}
    assert check_briefs(briefs, by_id) == []
    for brief in briefs:
        ids = set(brief["paper_ids"])
        assert brief["growth"]["papers"] == len(ids) > 0
        assert all(week_of(by_id[i]["announced"]) == week and topic_of[i] == brief["topic"]
                   for i in ids)
        assert len(brief["five"]) == min(5, len(ids))
        assert len({f["id"] for f in brief["five"]}) == len(brief["five"])
        assert all(f["why"] for f in brief["five"])
        sentences = brief["brief"]["sentences"]
        assert min(3, len(ids)) <= len(sentences) <= 5
        assert brief["brief"]["writer"] == "builtin"


def test_five_to_read_take_one_paper_a_thread() -> None:
    papers = list(_window())
    topics, topic_of = _topics(papers)
    week = week_of(WEEK)
    first = topics[0]["id"]
    mine = [p for p in papers if topic_of.get(p["id"]) == first and week_of(p["announced"]) == week]
    # One made-up thread holding every paper of the topic's week: at most one of them is picked.
    thread = Thread("X-1", "X", mine[0]["id"], mine[0]["announced"],
                    [{"paper": p["id"], "day": p["announced"], "role": "followup", "score": 1.0}
                     for p in mine])
    brief = build_brief(topics[0], week, [p for p in papers if topic_of.get(p["id"]) == first],
                        _vectors(papers), [thread])
    assert sum(f["thread"] == "X-1" for f in brief["five"]) == 1
    assert brief["threads"][0]["id"] == "X-1"
    assert len(brief["threads"][0]["papers_this_week"]) == len(mine)


def _one_paper() -> dict[str, Any]:
    return next(p for p in _window() if any(c.isdigit() for c in p["abstract"]))


def test_the_checker_finds_each_break() -> None:
    paper = _one_paper()
    pid = paper["id"]
    papers = {pid: paper}
    good = {"sentences": [{"text": f"The authors of {pid} study this.", "cites": [pid]}]}
    assert check_brief(good, papers, {pid}, min_sentences=1) == []
    rules = {
        "no-citation": {"text": "Nothing is cited here.", "cites": []},
        "cite-not-named": {"text": "A sentence.", "cites": [pid]},
        "number-not-in-cited-abstract": {"text": f"{pid} reaches 987654.", "cites": [pid]},
        "named-not-cited": {"text": f"{pid} and 2501.99999 agree.", "cites": [pid]},
        "name-not-in-cited-abstract": {"text": f"{pid} beats ZorgNet-9.", "cites": [pid]},
    }
    for rule, sentence in rules.items():
        found = check_brief({"sentences": [sentence]}, papers, {pid}, min_sentences=1)
        assert rule in {v.rule for v in found}, (rule, found)
    outside = check_brief(good, papers, set(), min_sentences=1)
    assert {v.rule for v in outside} == {"cite-outside-week"}
    assert {v.rule for v in check_brief(good, papers, {pid})} == {"length"}


def test_a_writer_that_breaks_the_rule_gives_way_to_the_builtin_one() -> None:
    papers = list(_window())
    topics, topic_of = _topics(papers)

    def liar(picks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"text": f"{p['id']} improves accuracy by 987654 points.", "cites": [p["id"]]}
                for p in picks]

    brief = build_brief(topics[0], week_of(WEEK),
                        [p for p in papers if topic_of.get(p["id"]) == topics[0]["id"]],
                        _vectors(papers), [], writer=liar)
    assert brief["brief"]["writer"] == "builtin"
    assert "987654" not in json.dumps(brief["brief"])


def test_a_paper_whose_summary_names_another_paper_is_cited_by_its_title() -> None:
    """2504.15349's abstract names arXiv:2106.06981: its sentence must not name an uncited id."""
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        paper = next(row for row in map(json.loads, handle) if row["id"] == "2504.15349")
    sentences = builtin_writer([paper])
    assert check_brief({"sentences": sentences}, {paper["id"]: paper}, {paper["id"]},
                       min_sentences=1) == []
