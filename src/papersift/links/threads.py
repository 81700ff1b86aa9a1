"""Threads: an origin with the papers that follow up its artefact, plus papers so close in
meaning and time to a member that they tell the same story."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import numpy as np

from papersift.links.linker import Artefact, Link


@dataclass(frozen=True)
class ThreadParams:
    min_followups: int = 1
    # A paper joins a thread as "close" when its cosine to a member is at least this and it was
    # announced within close_days of that member (all-MiniLM: 0.8 is a retelling of the idea,
    # not only the same field).
    close_similarity: float = 0.80
    close_days: int = 7
    max_close: int = 10


@dataclass
class Thread:
    """One idea across days. `id` is stable: the artefact's name and its origin's id."""

    id: str
    name: str
    origin: str
    day: str
    members: list[dict[str, object]] = field(default_factory=list)  # paper, day, role, score

    @property
    def paper_ids(self) -> list[str]:
        return [str(m["paper"]) for m in self.members]


@dataclass
class Corpus:
    """Papers' ids, announced days and unit vectors (row i for ids[i]), ordered by day for the
    time-window searches."""

    ids: list[str]
    days: list[str]
    vectors: np.ndarray
    row: dict[str, int] = field(init=False)
    order: np.ndarray = field(init=False)
    sorted_days: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.row = {pid: i for i, pid in enumerate(self.ids)}
        self.order = np.array(sorted(range(len(self.ids)), key=lambda i: self.days[i]), dtype=np.int64)
        self.sorted_days = [self.days[i] for i in self.order]

    def window(self, day: str, days: int) -> np.ndarray:
        """Rows of the papers announced within `days` days of `day`."""
        start = (date.fromisoformat(day) - timedelta(days=days)).isoformat()
        end = (date.fromisoformat(day) + timedelta(days=days)).isoformat()
        lo = bisect.bisect_left(self.sorted_days, start)
        hi = bisect.bisect_right(self.sorted_days, end)
        return self.order[lo:hi]


def thread_id(artefact: Artefact) -> str:
    return f"{artefact.name}-{artefact.origin}"


def build_threads(artefacts: Iterable[Artefact], links: Iterable[Link], corpus: Corpus,
                  params: ThreadParams = ThreadParams()) -> list[Thread]:
    """Threads of every artefact with at least `min_followups` linked follow-ups, each with its
    close papers, newest origin last."""
    followups: dict[tuple[str, str], list[Link]] = defaultdict(list)
    for link in links:
        if link.status == "linked":
            followups[(link.name, link.target)].append(link)
    threads = []
    for artefact in sorted(artefacts, key=lambda a: (a.day, a.origin, a.name)):
        found = followups.get((artefact.name, artefact.origin), [])
        if len(found) < params.min_followups:
            continue
        thread = Thread(thread_id(artefact), artefact.name, artefact.origin, artefact.day)
        thread.members.append({"paper": artefact.origin, "day": artefact.day, "role": "origin",
                               "score": 1.0})
        for link in sorted(found, key=lambda k: (k.day, k.source)):
            thread.members.append({"paper": link.source, "day": link.day, "role": "followup",
                                   "score": link.similarity})
        _add_close(thread, corpus, params)
        threads.append(thread)
    return threads


def _add_close(thread: Thread, corpus: Corpus, params: ThreadParams) -> None:
    """Papers near a member in meaning and time that are not members yet (best first)."""
    members = [corpus.row[p] for p in thread.paper_ids if p in corpus.row]
    if not members:
        return
    taken = set(thread.paper_ids)
    best: dict[int, float] = {}
    for row in members:
        window = corpus.window(corpus.days[row], params.close_days)
        scores = corpus.vectors[window] @ corpus.vectors[row]
        for i in np.flatnonzero(scores >= params.close_similarity):
            candidate = int(window[i])
            if corpus.ids[candidate] not in taken:
                best[candidate] = max(best.get(candidate, 0.0), float(scores[i]))
    for candidate, score in sorted(best.items(), key=lambda kv: -kv[1])[:params.max_close]:
        thread.members.append({"paper": corpus.ids[candidate], "day": corpus.days[candidate],
                               "role": "close", "score": round(score, 4)})
    thread.members.sort(key=lambda m: (str(m["day"]), m["role"] != "origin", str(m["paper"])))


def touched_threads(threads: Sequence[Thread], new_links: Iterable[Link],
                    new_ids: Iterable[str]) -> set[str]:
    """Ids of the threads a day's new links or new papers may change (for incremental rebuilds:
    only these need build_threads again)."""
    new = set(new_ids)
    ids = {f"{link.name}-{link.target}" for link in new_links if link.status == "linked"}
    return ids | {t.id for t in threads if new & set(t.paper_ids)}
