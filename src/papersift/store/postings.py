"""BM25 over posting lists a store keeps of its own: FTS5's bm25() arithmetic (PostgreSQL's ranking uses it too), in numpy, on whole lists at once."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from papersift.store.contracts import KeywordQuery, StoreError, Term

# FTS5's constants (sqlite/ext/fts5/fts5_aux.c), so that scores equal bm25()'s.
K1 = 1.2
B = 0.75
FIELDS = 3          # title, abstract, authors: the columns of the keyword index
MAX_COUNT = 255     # a field's count of one term is kept in a byte (more is unheard of)


@dataclass(frozen=True)
class Postings:
    """One term's papers: pks (int64), the term's count in each field ((n, 3) uint8) and each
    paper's length (all fields: tokens on SQLite, bytes on PostgreSQL)."""

    pks: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray

    @classmethod
    def empty(cls) -> Postings:
        return cls(np.zeros(0, np.int64), np.zeros((0, FIELDS), np.uint8), np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.pks)

    def without(self, pks: np.ndarray) -> Postings:
        """These postings but those of the papers in `pks` (sorted)."""
        if not len(pks) or not len(self.pks):
            return self
        keep = ~np.isin(self.pks, pks, assume_unique=False)
        return Postings(self.pks[keep], self.counts[keep], self.lengths[keep])

    def since(self, first: int) -> Postings:
        """The postings of papers with pk >= first."""
        if first <= 0:
            return self
        keep = self.pks >= first
        return Postings(self.pks[keep], self.counts[keep], self.lengths[keep])

    @staticmethod
    def join(parts: Sequence[Postings]) -> Postings:
        parts = [p for p in parts if len(p)]
        if not parts:
            return Postings.empty()
        if len(parts) == 1:
            return parts[0]
        return Postings(np.concatenate([p.pks for p in parts]),
                        np.concatenate([p.counts for p in parts]),
                        np.concatenate([p.lengths for p in parts]))


def plain_terms(query: KeywordQuery) -> list[Term] | None:
    """The query's words if the postings can rank it: an OR of plain words (one word alone may
    be joined by AND); None for phrases, prefixes and written operators."""
    terms = query.terms
    if not terms or len(terms) != len(query.items):
        return None
    if query.default_operator != "OR" and len(terms) > 1:
        return None
    if any(t.phrase or t.prefix for t in terms):
        return None
    return terms


@dataclass(frozen=True)
class IndexState:
    """The keyword_index row of a store: the build queries read and the tail's position."""

    build: int           # 0: none finished
    watermark: int       # the build's highest pk
    tail_watermark: int  # the highest pk in the build or the tail
    tail_version: int    # moves with every tail update
    papers: int          # papers in the build


# The keyword_index columns an IndexState holds, and the duplicates' pks: the statements of
# `state` and `_best_live`, and of PostgreSQL's ranking, which reads both in one round trip.
STATE_COLUMNS = "build, watermark, tail_watermark, tail_version, papers"
DUPLICATES_SQL = "SELECT pk FROM papers WHERE duplicate_of IS NOT NULL"

TAIL_PAPERS = 2_000  # papers per tail transaction: the write lock is held about a second

# Per database: the build's paper lengths, and the tail's changed papers (read once a version).
_LENGTHS: dict[str, tuple[int, np.ndarray]] = {}
_CHANGED: dict[str, tuple[tuple[int, int], np.ndarray]] = {}
_LOCK = threading.Lock()


class StoredPostings:
    """What both backends' postings share: the index state and status, the tail update, the
    build's lengths and the tail's changed papers (each read once per version), and the
    final ranking. A backend gives `_query` (the rows of a statement without parameters: the
    same SQL on both), `_database` (its key in the caches), `_tail_added` and
    `_tail_changed` (one transaction each: (rows taken, papers counted))."""

    def _query(self, sql: str) -> list[Any]:
        raise NotImplementedError

    def _database(self) -> str:
        raise NotImplementedError

    def _tail_added(self) -> tuple[int, int]:
        raise NotImplementedError

    def _tail_changed(self) -> tuple[int, int]:
        raise NotImplementedError

    def state(self) -> IndexState | None:
        rows = self._query(f"SELECT {STATE_COLUMNS} FROM keyword_index")
        return IndexState(*(int(v) for v in rows[0])) if rows else None

    def _newest(self) -> int:
        return int(self._query("SELECT coalesce(max(pk), 0) FROM papers")[0][0])

    def status(self) -> dict[str, Any]:
        """Whether a build is in use, its papers, and the papers it is behind by."""
        state = self.state()
        newest = self._newest()
        if state is None or not state.build:
            return {"built": False, "papers": 0, "tail": 0, "behind": newest}
        tail = int(self._query("SELECT count(*) FROM keyword_tail_papers")[0][0])
        changed = int(self._query("SELECT count(DISTINCT pk) FROM keyword_changed")[0][0])
        return {"built": True, "build": state.build, "papers": state.papers, "tail": tail,
                "behind": newest - state.tail_watermark + changed}

    def update_tail(self) -> dict[str, int]:
        """Postings for the papers added since the tail's watermark and those changed since
        they were indexed."""
        state = self.state()
        if state is None or not state.build:
            raise StoreError("no keyword postings are built yet")
        return {"added": _drain(self._tail_added), "changed": _drain(self._tail_changed)}

    def _lengths(self, state: IndexState) -> np.ndarray:
        """Each paper's length in the build, indexed by pk."""
        key = self._database()
        cached = _LENGTHS.get(key)
        if cached is None or cached[0] != state.build:
            blob = self._query("SELECT lengths FROM keyword_index")[0][0]
            cached = (state.build, np.frombuffer(bytes(blob or b""), dtype="<i4").astype(np.int64))
            with _LOCK:
                _LENGTHS[key] = cached
        return cached[1]

    def _changed(self, state: IndexState) -> np.ndarray:
        """The build's papers that the tail holds anew (changed or deleted since), sorted."""
        key, version = self._database(), (state.build, state.tail_version)
        cached = _CHANGED.get(key)
        if cached is None or cached[0] != version:
            pks = [r[0] for r in self._query(
                "SELECT pk FROM keyword_tail_papers WHERE pk <= (SELECT watermark FROM"
                " keyword_index) ORDER BY pk")]
            cached = (version, np.asarray(pks, dtype=np.int64))
            with _LOCK:
                _CHANGED[key] = cached
        return cached[1]

    def _best_live(self, pks: np.ndarray, scores: np.ndarray, fresh: list[tuple[int, float]],
                   limit: int, duplicates: Sequence[int] | None = None
                   ) -> list[tuple[int, float]]:
        """The best `limit` of the scored papers and those the database ranked itself
        (`fresh`), duplicates left out as the database's ranking leaves them out (read from
        their partial index, a few hundred at a million papers, unless the caller has them)."""
        if fresh:
            pks = np.concatenate([pks, np.asarray([pk for pk, _ in fresh], np.int64)])
            scores = np.concatenate([scores, np.asarray([s for _, s in fresh])])
        if duplicates is None:
            duplicates = [r[0] for r in self._query(DUPLICATES_SQL)]
        # The best `limit` live papers are among the best `limit` + duplicates of them all
        # (the order is total): only those are looked up among the duplicates.
        chosen = best_first(pks, scores, limit + len(duplicates))
        if len(duplicates):
            chosen = chosen[~np.isin(pks[chosen], np.asarray(duplicates, dtype=np.int64))]
        return [(int(pks[i]), float(scores[i])) for i in chosen[:limit]]


def _drain(step: Callable[[], tuple[int, int]]) -> int:
    counted = 0
    while True:
        taken, items = step()
        counted += items
        if taken < TAIL_PAPERS:
            return counted


def pack_counts(counts: np.ndarray) -> bytes:
    """(n, 3) counts as the bytes a store keeps (saturated at MAX_COUNT)."""
    return np.minimum(counts, MAX_COUNT).astype(np.uint8).tobytes()


def unpack_counts(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.uint8).reshape(-1, FIELDS)


def idf(papers: int, docs: int) -> float:
    """FTS5's idf: log((N - n + 0.5) / (n + 0.5)), and 1e-6 where that is not positive (a term
    in more than half the papers)."""
    value = math.log((papers - docs + 0.5) / (docs + 0.5)) if papers > 0 else 0.0
    return value if value > 0 else 1e-6


def bm25(lists: Sequence[tuple[Postings, float]], field_weights: Sequence[float],
         average_length: float) -> tuple[np.ndarray, np.ndarray]:
    """(pks, scores) of every paper in any list, pks ascending; `lists` holds each query
    term's postings with its idf times its weight in the query.

    Each term adds idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average)), with f
    the field-weighted count, as bm25() does for each phrase of an FTS5 query."""
    weights = np.asarray(field_weights, dtype=np.float64)
    pks: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    for postings, factor in lists:
        if not len(postings):
            continue
        freq = postings.counts @ weights
        norm = K1 * (1.0 - B + B * postings.lengths / max(average_length, 1e-9))
        pks.append(postings.pks)
        scores.append(factor * (freq * (K1 + 1.0)) / (freq + norm))
    if not pks:
        return np.zeros(0, np.int64), np.zeros(0, np.float64)
    every = np.concatenate(pks)
    papers, inverse = np.unique(every, return_inverse=True)
    # bincount adds in list order, as bm25() adds its phrases in query order.
    return papers, np.bincount(inverse, weights=np.concatenate(scores), minlength=len(papers))


def best_first(pks: np.ndarray, scores: np.ndarray, count: int) -> np.ndarray:
    """Indices of the `count` best, by score then pk (a stable order for equal scores)."""
    if count <= 0 or not len(pks):
        return np.zeros(0, np.int64)
    if count < len(pks):
        # Keep every paper tied with the count-th score, then order them all.
        threshold = np.partition(-scores, count - 1)[count - 1]
        chosen = np.flatnonzero(-scores <= threshold)
    else:
        chosen = np.arange(len(pks))
    order = np.lexsort((pks[chosen], -scores[chosen]))
    return chosen[order][:count]
