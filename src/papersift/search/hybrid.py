"""Fusing the keyword and semantic rankings: plain reciprocal rank fusion, and the tuned score fusion."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FusionParams:
    """Chosen on SciFact's training judgments and the ir/ collections together (see
    benchmarks/bench_search_bm25.py and docs/benchmark-log.md, issue 17)."""

    method: str = "score"         # "score": normalized score fusion; "rrf": plain RRF (k=60)
    keyword_weight: float = 0.4   # alpha: share of the normalized bm25 in the final score
    pool: int = 100               # candidates taken from each side
    # Feedback: the query vector moves toward the best fused papers, then the fusion runs again.
    feedback_docs: int = 5        # 0 turns feedback off
    feedback_weight: float = 0.5  # beta: how far the query vector moves
    feedback_temperature: float = 0.1  # on fused scores (0..1): lower trusts the first more
    title_weight: float = 2.0     # bm25 field weights: title > abstract > authors
    abstract_weight: float = 1.0
    authors_weight: float = 0.5

    @property
    def bm25_weights(self) -> tuple[float, float, float]:
        return (self.title_weight, self.abstract_weight, self.authors_weight)


DEFAULT_FUSION = FusionParams()


def rrf(rankings: Sequence[Sequence[int]], k: float = 60.0,
        weights: Sequence[float] | None = None) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: sum of w / (k + rank) over the rankings (rank from 1), best first."""
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[i]
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def score_fusion(keyword: Mapping[int, float], semantic: Mapping[int, float],
                 keyword_weight: float, candidates: Iterable[int] | None = None,
                 ) -> list[tuple[int, float]]:
    """fused_scores over the union of both sides (or over `candidates`, each looked up on both
    sides), best first, ties by pk. `keyword` holds the bm25 of every candidate that matches
    the keywords (the others score 0), `semantic` the cosine of every candidate that has one."""
    ids = np.asarray(sorted(set(keyword).union(semantic) if candidates is None
                            else set(candidates)), dtype=np.int64)
    pks = ids.tolist()
    fused = fused_scores(np.asarray([keyword.get(pk, 0.0) for pk in pks], dtype=np.float64),
                         np.asarray([semantic.get(pk, np.nan) for pk in pks], dtype=np.float64),
                         keyword_weight)
    order = best_first(ids, fused)
    return list(zip(ids[order].tolist(), fused[order].tolist(), strict=True))


def fused_scores(keyword: np.ndarray, cosines: np.ndarray, keyword_weight: float) -> np.ndarray:
    """alpha * bm25 / max bm25 + (1 - alpha) * min-max normalized cosine, per candidate.

    `keyword`: each candidate's bm25 (0: no keyword matched); `cosines`: each one's cosine, NaN
    where it has none (it scores 0 on that side). Dividing bm25 by its max keeps its zero
    meaningful ("no keyword matched"), while cosines only matter relative to each other.
    float64 throughout: the same sums, bit for bit, as the plain floats this replaced.
    """
    top_kw = float(keyword.max()) if len(keyword) else 0.0  # the largest positive bm25, if any
    kw_part = (np.where(keyword > 0, keyword / top_kw, 0.0) if top_kw > 0
               else np.zeros(len(keyword)))
    has = ~np.isnan(cosines)
    present = cosines[has]
    low, high = (float(present.min()), float(present.max())) if len(present) else (0.0, 0.0)
    span = high - low
    sem_part = (np.where(has, (cosines - low) / span, 0.0) if span > 0
                else has.astype(np.float64))
    return keyword_weight * kw_part + (1.0 - keyword_weight) * sem_part


def best_first(ids: np.ndarray, fused: np.ndarray) -> np.ndarray:
    """The order of the candidates by fused score, best first, equal scores by id."""
    return np.lexsort((ids, -fused))


def feedback_vector(query: np.ndarray, vectors: np.ndarray, fused: Sequence[float],
                    weight: float, temperature: float) -> np.ndarray:
    """Rocchio pseudo-relevance feedback on the query's embedding: query + weight x the mean of
    the best fused papers' vectors, each weighted by exp((score - best) / temperature), so a
    paper far below the first counts little; unit length again.

    The best papers of the fusion are ones both sides agree on: moving toward them finds papers
    like them that neither side ranked high alone (the keyword side's evidence reaches the
    semantic side)."""
    scores = np.asarray(fused, dtype=np.float32)
    shares = np.exp((scores - scores.max()) / max(temperature, 1e-6))
    centroid = (vectors * shares[:, None]).sum(axis=0) / shares.sum()
    moved = np.asarray(query, dtype=np.float32) + weight * centroid
    norm = float(np.linalg.norm(moved))
    return moved / norm if norm > 0 else np.asarray(query, dtype=np.float32)
