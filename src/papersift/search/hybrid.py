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
    """alpha * bm25 / max bm25 + (1 - alpha) * min-max normalized cosine, over the union
    (or over `candidates`, each looked up on both sides), best first, ties by pk.

    `keyword` holds bm25 (higher is better) of every candidate that matches the keywords (the
    others score 0); `semantic` holds the cosine of every candidate. Dividing bm25 by its max keeps
    its zero meaningful ("no keyword matched"), while cosines only matter relative to each other.
    Plain floats: for the ~200 candidates of a query the same arithmetic as numpy's, without
    building its arrays (which cost more than the sums).
    """
    ids = sorted(set(keyword).union(semantic) if candidates is None else set(candidates))
    if not ids:
        return []
    kw = [keyword.get(pk, 0.0) for pk in ids]
    top_kw = max(kw)  # the largest positive bm25, if any is
    sem = [semantic.get(pk) for pk in ids]
    cosines = [c for c in sem if c is not None]
    low, high = (min(cosines), max(cosines)) if cosines else (0.0, 0.0)
    span = high - low
    other = 1.0 - keyword_weight
    kw_part = [v / top_kw if v > 0 else 0.0 for v in kw] if top_kw > 0 else [0.0] * len(kw)
    if span > 0:
        sem_part = [0.0 if c is None else (c - low) / span for c in sem]
    else:
        sem_part = [0.0 if c is None else 1.0 for c in sem]
    fused = [keyword_weight * k + other * c for k, c in zip(kw_part, sem_part, strict=True)]
    # Best first; a stable sort keeps equal scores in pk order.
    order = sorted(range(len(ids)), key=fused.__getitem__, reverse=True)
    return [(ids[i], fused[i]) for i in order]


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
