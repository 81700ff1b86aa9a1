"""Fusing the keyword and semantic rankings: plain reciprocal rank fusion, and the tuned score fusion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
                 keyword_weight: float) -> list[tuple[int, float]]:
    """alpha * bm25 / max bm25 + (1 - alpha) * min-max normalized cosine, over the union.

    `keyword` holds bm25 (higher is better) of every candidate that matches the keywords (the
    others score 0); `semantic` holds the cosine of every candidate. Dividing bm25 by its max keeps
    its zero meaningful ("no keyword matched"), while cosines only matter relative to each other.
    """
    items = set(keyword) | set(semantic)
    if not items:
        return []
    ids = np.fromiter(items, dtype=np.int64, count=len(items))
    listed = ids.tolist()
    kw = np.fromiter((keyword.get(i, 0.0) for i in listed), dtype=np.float64, count=len(listed))
    has_sem = np.fromiter((i in semantic for i in listed), dtype=bool, count=len(listed))
    sem = np.fromiter((semantic.get(i, 0.0) for i in listed), dtype=np.float64,
                      count=len(listed))
    fused = fused_scores(kw, sem, has_sem, keyword_weight)
    order = np.lexsort((ids, -fused))  # best first, ties by pk
    return list(zip(ids[order].tolist(), fused[order].tolist(), strict=True))


def fused_scores(kw: np.ndarray, sem: np.ndarray, has_sem: np.ndarray,
                 keyword_weight: float) -> np.ndarray:
    """score_fusion's scores of aligned arrays: bm25 (0: no match), cosine, whether it is known."""
    positive = kw[kw > 0]
    top_kw = float(positive.max()) if positive.size else 0.0
    cosines = sem[has_sem]
    low, high = (float(cosines.min()), float(cosines.max())) if cosines.size else (0.0, 0.0)
    span = high - low
    kw_part = np.maximum(kw / top_kw, 0.0) if top_kw > 0 else np.zeros_like(kw)
    sem_part = np.where(has_sem, (sem - low) / span if span > 0 else 1.0, 0.0)
    return keyword_weight * kw_part + (1.0 - keyword_weight) * sem_part


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
