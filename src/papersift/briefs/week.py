"""A topic's week: its papers, growth against the four weeks before, its threads, five papers to
read chosen for coverage (each with why), and a brief of 3-5 sentences drawn from their abstracts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from papersift.briefs.check import RE_CITE, check_brief
from papersift.briefs.weeks import growth, parse_week, week_of
from papersift.links.threads import Thread
from papersift.summarize.authors import author_naming
from papersift.summarize.builtin import write_builtin

FIVE = 5
THREAD_BONUS = 0.05
_WORDS = ENGLISH_STOP_WORDS | {"based", "using", "learning", "model", "models", "large", "language",
                               "towards", "via", "data", "approach", "framework", "method", "new",
                               "neural", "deep", "efficient", "improving", "study", "analysis"}

# A writer turns the picks (paper dicts, in order) into sentences {"text", "cites"}.
Writer = Callable[[Sequence[Mapping[str, Any]]], list[dict[str, Any]]]


def builtin_writer(picks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One sentence a pick: the built-in TL;DR (third person, checked against its abstract by
    summarize.gate) with the paper's id after its authors."""
    sentences = []
    for paper in picks[:FIVE]:
        tldr = write_builtin(dict(paper)).tldr.strip()
        subject, _ = author_naming(list(paper.get("authors") or []))
        pid = paper["id"]
        if set(RE_CITE.findall(tldr)) - {pid}:
            # The TL;DR names another paper by id ("extends arXiv:2106.06981"): a brief
            # sentence names only what it cites, so say what the paper is called instead.
            text = f"{pid} is titled \"{' '.join(str(paper['title']).split())}\"."
        elif subject and tldr.startswith(subject):
            text = f"{subject} ({pid}){tldr[len(subject):]}"
        else:
            text = f"In {pid}, {tldr[:1].lower()}{tldr[1:]}"
        sentences.append({"text": text, "cites": [pid]})
    return sentences


def _label(members: Sequence[Mapping[str, Any]], everyone: Counter[str]) -> str:
    """Two title words most typical of a group against the whole week."""
    counts = Counter(w for p in members for w in set(_title_words(p["title"])))
    total = max(1, sum(everyone.values()))
    scored = sorted(counts, key=lambda w: (-counts[w] * counts[w] / (everyone[w] or 1), w))
    return " / ".join(scored[:2]) if scored and total else "the rest"


def _title_words(title: str) -> list[str]:
    return [w for w in "".join(c.lower() if c.isalnum() else " " for c in title).split()
            if len(w) > 2 and w not in _WORDS and not w.isdigit()]


def _groups(vectors: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Spherical k-means labels (few papers: a dozen steps are plenty)."""
    rng = np.random.default_rng(seed)
    centres = vectors[rng.choice(len(vectors), size=k, replace=False)]
    labels = np.zeros(len(vectors), dtype=np.int64)
    for _ in range(12):
        labels = np.argmax(vectors @ centres.T, axis=1)
        for c in range(k):
            members = vectors[labels == c]
            if len(members):
                centre = members.sum(axis=0)
                centres[c] = centre / (np.linalg.norm(centre) or 1.0)
    return labels


def choose_five(papers: Sequence[Mapping[str, Any]], vectors: np.ndarray,
                thread_of: Mapping[str, Thread]) -> list[dict[str, Any]]:
    """Five papers that cover the week: the most central paper of each of the five largest
    groups (k-means on their vectors), at most one a thread, members of threads preferred."""
    if not papers:
        return []
    k = min(FIVE, len(papers))
    labels = _groups(vectors, k) if len(papers) > k else np.arange(len(papers))
    everyone = Counter(w for p in papers for w in set(_title_words(p["title"])))
    picks: list[dict[str, Any]] = []
    used_threads: set[str] = set()
    for group in [g for g, _ in Counter(labels.tolist()).most_common()]:
        rows = np.flatnonzero(labels == group)
        centre = vectors[rows].sum(axis=0)
        centre /= np.linalg.norm(centre) or 1.0
        scores = vectors[rows] @ centre + np.array(
            [THREAD_BONUS if papers[r]["id"] in thread_of else 0.0 for r in rows])
        for r in rows[np.argsort(-scores, kind="stable")]:
            thread = thread_of.get(papers[r]["id"])
            if thread is None or thread.id not in used_threads:
                picks.append(_pick(papers[r], thread, [papers[i] for i in rows], len(papers),
                                   _label([papers[i] for i in rows], everyone)))
                if thread is not None:
                    used_threads.add(thread.id)
                break
        if len(picks) == FIVE:
            break
    return picks


def _pick(paper: Mapping[str, Any], thread: Thread | None, group: Sequence[Mapping[str, Any]],
          week_papers: int, label: str) -> dict[str, Any]:
    if week_papers == 1:
        why = "the week's only paper in this topic"
    elif len(group) > 1:
        why = f"the most central of {len(group)} of the week's {week_papers} papers, on {label}"
    else:
        why = f"stands apart from the week's other {week_papers - 1} papers"
    if thread is not None:
        role = next((m["role"] for m in thread.members if m["paper"] == paper["id"]), "close")
        others = len(thread.members) - 1
        why += {"origin": f"; it coined {thread.name}, followed up by {others} papers",
                "followup": f"; it builds on {thread.name} ({thread.origin})",
                "close": f"; it belongs to the {thread.name} thread"}[str(role)]
    return {"id": paper["id"], "title": paper["title"], "why": why, "subtheme": label,
            "thread": thread.id if thread else None}


def week_threads(paper_ids: set[str], threads: Sequence[Thread]) -> list[dict[str, Any]]:
    """Threads with papers of this topic's week, most such papers first."""
    found = []
    for thread in threads:
        here = [p for p in thread.paper_ids if p in paper_ids]
        if here:
            found.append({"id": thread.id, "name": thread.name, "origin": thread.origin,
                          "day": thread.day, "papers_this_week": here,
                          "papers": len(thread.members)})
    return sorted(found, key=lambda t: (-len(t["papers_this_week"]), t["id"]))


def build_brief(topic: Mapping[str, Any], week: str, papers: Sequence[Mapping[str, Any]],
                vectors: Callable[[Sequence[str]], np.ndarray], threads: Sequence[Thread],
                writer: Writer | None = None) -> dict[str, Any]:
    """The week of one topic. `papers` are the topic's papers of at least that week and the four
    before (dicts: id, title, abstract, authors, announced); `vectors` gives unit vectors by id;
    `threads` those that may touch the week. A writer's sentences that break the rule give way
    to the built-in writer's."""
    monday, sunday = parse_week(week)
    this_week = sorted((p for p in papers if week_of(p["announced"]) == week),
                       key=lambda p: (p["announced"], p["id"]))
    ids = {p["id"] for p in this_week}
    thread_of = {pid: t for t in threads for pid in t.paper_ids if pid in ids}
    matrix = vectors([p["id"] for p in this_week]) if this_week else np.zeros((0, 1))
    five = choose_five(this_week, np.asarray(matrix, dtype=np.float32), thread_of)
    by_id = {p["id"]: p for p in this_week}
    picks = [by_id[f["id"]] for f in five]
    sentences, used = _write(writer, picks, by_id, {f["id"] for f in five})
    return {"topic": topic.get("id"), "slug": topic.get("slug"), "label": topic.get("label"),
            "week": week, "start": monday.isoformat(), "end": sunday.isoformat(),
            "growth": growth([p["announced"] for p in papers], week),
            "paper_ids": [p["id"] for p in this_week],
            "threads": week_threads(ids, threads), "five": five,
            "brief": {"sentences": sentences, "writer": used}}


def _write(writer: Writer | None, picks: list[Mapping[str, Any]],
           by_id: Mapping[str, Mapping[str, Any]], allowed: set[str]
           ) -> tuple[list[dict[str, Any]], str]:
    need = min(3, len(picks))
    if writer is not None:
        sentences = writer(picks)
        if not check_brief({"sentences": sentences}, by_id, allowed, need):
            return sentences, "custom"
    return builtin_writer(picks), "builtin"


def build_week(topics: Sequence[Mapping[str, Any]], topic_of: Mapping[str, Any],
               papers: Sequence[Mapping[str, Any]], week: str,
               vectors: Callable[[Sequence[str]], np.ndarray], threads: Sequence[Thread],
               writer: Writer | None = None) -> list[dict[str, Any]]:
    """The briefs of one week for every topic with papers that week. `topic_of` maps paper ids
    to topic ids; `papers` may hold every paper (only the week and the four before are read)."""
    monday, sunday = parse_week(week)
    start = date_from(monday, -28)
    window = [p for p in papers if start <= p["announced"][:10] <= sunday.isoformat()]
    by_topic: dict[Any, list[Mapping[str, Any]]] = {}
    for paper in window:
        topic = topic_of.get(paper["id"])
        if topic is not None:
            by_topic.setdefault(topic, []).append(paper)
    week_ids = {p["id"] for p in window if week_of(p["announced"]) == week}
    near = [t for t in threads if week_ids & set(t.paper_ids)]
    briefs = []
    for topic in topics:
        mine = by_topic.get(topic["id"], [])
        if any(week_of(p["announced"]) == week for p in mine):
            briefs.append(build_brief(topic, week, mine, vectors, near, writer))
    return briefs


def date_from(day: date, days: int) -> str:
    return (day + timedelta(days=days)).isoformat()
