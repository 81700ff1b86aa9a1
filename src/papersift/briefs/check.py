"""The faithfulness rule of a weekly brief, for any writer: 3-5 sentences, each naming the
papers it cites, every cited paper one of the week's five to read in that topic and week, every
number and every name-like word found in a cited paper's title or abstract."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from papersift.summarize import gate

MIN_SENTENCES = 3
MAX_SENTENCES = 5
# An arXiv id as a brief cites it: "(2506.01234)"; old-style ids "cs/0101001" too.
RE_CITE = re.compile(r"\b(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})\b")


@dataclass(frozen=True)
class Violation:
    sentence: int  # 0-based; -1 for the brief as a whole
    rule: str
    detail: str

    def __str__(self) -> str:
        where = "brief" if self.sentence < 0 else f"sentence {self.sentence + 1}"
        return f"{where}: {self.rule}: {self.detail}"


def check_brief(brief: Mapping[str, Any], papers: Mapping[str, Mapping[str, Any]],
                allowed: set[str], min_sentences: int = MIN_SENTENCES) -> list[Violation]:
    """Violations of the rule. `brief` is {"sentences": [{"text", "cites": [ids]}]};
    `papers` maps ids to paper dicts (title, abstract, authors); `allowed` are the ids a
    sentence may cite (the week's five to read, all in the topic and week)."""
    sentences = list(brief.get("sentences") or [])
    found: list[Violation] = []
    if not min_sentences <= len(sentences) <= MAX_SENTENCES:
        found.append(Violation(-1, "length", f"{len(sentences)} sentences, not "
                               f"{min_sentences}-{MAX_SENTENCES}"))
    for index, sentence in enumerate(sentences):
        found.extend(_check_sentence(index, sentence, papers, allowed))
    return found


def _check_sentence(index: int, sentence: Mapping[str, Any],
                    papers: Mapping[str, Mapping[str, Any]], allowed: set[str]) -> list[Violation]:
    text, cites = str(sentence.get("text") or ""), list(sentence.get("cites") or [])
    found = []
    if not cites:
        found.append(Violation(index, "no-citation", text[:80]))
    named = set(RE_CITE.findall(text))
    for pid in cites:
        if pid not in named:
            found.append(Violation(index, "cite-not-named", pid))
        if pid not in allowed:
            found.append(Violation(index, "cite-outside-week", pid))
        if pid not in papers:
            found.append(Violation(index, "unknown-paper", pid))
    for pid in sorted(named - set(cites)):
        found.append(Violation(index, "named-not-cited", pid))
    sources = [gate.build_source(dict(papers[p])) for p in cites if p in papers]
    bare = RE_CITE.sub(" ", text)
    numbers = set().union(*(s.numbers for s in sources)) if sources else set()
    for number in sorted(gate.numbers_in(bare) - numbers):
        found.append(Violation(index, "number-not-in-cited-abstract", number))
    names = frozenset().union(*(s.names for s in sources)) if sources else frozenset()
    for piece in _names(bare):
        if not _known(piece, names):
            found.append(Violation(index, "name-not-in-cited-abstract", piece))
    return found


def _names(text: str) -> list[str]:
    return [p for p in gate._pieces(text) if gate.name_like(p)]


def _known(piece: str, names: frozenset[str]) -> bool:
    return gate._known_name(piece, names)


def check_briefs(briefs: Sequence[Mapping[str, Any]],
                 papers: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, Violation]]:
    """(topic, week, violation) over many briefs; each brief carries topic, week, papers (ids
    of the topic's papers that week) and five (its picks, each with id)."""
    out = []
    for brief in briefs:
        allowed = {p["id"] for p in brief["five"]} & set(brief["paper_ids"])
        need = min(MIN_SENTENCES, len(brief["five"]))
        for violation in check_brief(brief["brief"], papers, allowed, need):
            out.append((str(brief["topic"]), str(brief["week"]), violation))
    return out
