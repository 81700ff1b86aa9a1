"""A personal-feed task and the papers it ranks, featurized once: what the evaluations share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from papersift.recommend.features import Papers, TextSpace


@dataclass
class Task:
    cut: str
    candidates: list[str]
    readers: list[dict[str, Any]]


@dataclass
class Universe:
    """Every paper of the task store, featurized once."""

    papers: Papers
    index: dict[str, int]
    sanity: Any  # arxiv-sanity-lite's tf-idf of the same papers
    space: TextSpace
    topics: dict[int, dict[str, Any]]

    def take(self, ids: list[str]) -> Papers:
        return self.papers.subset([self.index[i] for i in ids if i in self.index])
