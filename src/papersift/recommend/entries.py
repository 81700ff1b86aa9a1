"""Profile entries at work: which candidates a "more:", "less:" or "exclude:" entry matches, and how scores move.

An entry matches a paper by one of two facts a reader can check:
- its phrase names a topic (the topic's label, key-phrase label or slug): the topic's papers;
- otherwise, the paper's title or abstract holds the phrase's words: all of them, in order,
  for an exclusion (1.0); for more/less, the share of its words it holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papersift.recommend.features import Papers

ENTRY_KINDS = ("more", "less", "exclude")
MORE_BOOST = 3.0      # standardized score units: a full match lifts a paper past most others
LESS_PENALTY = 3.0
_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset(["a", "an", "the", "of", "on", "about", "in", "for", "and", "to", "with",
                     "papers", "paper", "work", "works", "stuff", "things", "topics"])


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def phrase_words(phrase: str) -> list[str]:
    return [w for w in _words(phrase) if w not in _FILLER] or _words(phrase)


@dataclass
class EntryEffect:
    """What a reader's entries did to a list of candidates."""

    adjustment: np.ndarray               # added to each candidate's score
    excluded: np.ndarray                 # bool: never shown
    matched: list[list[dict[str, Any]]] = field(default_factory=list)  # per candidate


def topic_for(phrase: str, topics: Mapping[int, Mapping[str, Any]]) -> int | None:
    """The topic a phrase names, if it names one."""
    wanted = " ".join(_words(phrase))
    for topic_id, topic in topics.items():
        names = (topic.get("label"), topic.get("key_label"), topic.get("slug"))
        if any(name and " ".join(_words(name)) == wanted for name in names):
            return topic_id
    return None


def match(phrase: str, candidates: Papers, topics: Mapping[int, Mapping[str, Any]],
          whole: bool) -> np.ndarray:
    """How much each candidate matches a phrase, 0..1 (whole: all its words, in order)."""
    topic = topic_for(phrase, topics)
    if topic is not None:
        return np.array([1.0 if r.get("topic_id") == topic else 0.0 for r in candidates.rows])
    words = phrase_words(phrase)
    if not words:
        return np.zeros(len(candidates.rows))
    joined = " ".join(words)
    strengths = []
    for row in candidates.rows:
        text = " ".join(_words(f"{row['title']} {row['abstract']}"))
        if f" {joined} " in f" {text} ":
            strengths.append(1.0)
        elif whole:
            strengths.append(0.0)
        else:
            present = set(text.split())
            strengths.append(sum(w in present for w in words) / len(words) * 0.5)
    return np.array(strengths)


def apply_entries(entries: Sequence[Mapping[str, Any]], candidates: Papers,
                  topics: Mapping[int, Mapping[str, Any]]) -> EntryEffect:
    n = len(candidates.rows)
    effect = EntryEffect(np.zeros(n), np.zeros(n, dtype=bool), [[] for _ in range(n)])
    for entry in entries:
        kind, phrase = entry["kind"], entry["phrase"]
        strength = match(phrase, candidates, topics, whole=kind == "exclude")
        if kind == "exclude":
            effect.excluded |= strength >= 1.0
        else:
            sign = MORE_BOOST if kind == "more" else -LESS_PENALTY
            effect.adjustment += sign * strength
        for i in np.flatnonzero(strength > 0):
            effect.matched[i].append({"kind": kind, "phrase": phrase,
                                      "strength": round(float(strength[i]), 2)})
    return effect
