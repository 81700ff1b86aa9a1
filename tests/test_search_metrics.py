"""Retrieval metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from papersift.search.hybrid import rrf, score_fusion
from papersift.search.metrics import mrr_at_k, ndcg_at_k, percentile, recall_at_k


def test_ndcg_with_graded_relevance_by_hand() -> None:
    ranked = ["d1", "d2", "d3", "d4"]
    relevance = {"d3": 2, "d1": 1, "d9": 1}
    # DCG = 1/log2(2) + 0 + 2/log2(4) = 1 + 1 = 2
    # IDCG = 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.63093 + 0.5 = 3.13093
    assert ndcg_at_k(ranked, relevance, 10) == pytest.approx(2 / (2 + 1 / math.log2(3) + 0.5))
    assert ndcg_at_k(ranked, relevance, 10) == pytest.approx(0.638788, abs=1e-6)
    # Cut at 2: DCG@2 = 1, IDCG@2 = 2 + 0.63093
    assert ndcg_at_k(ranked, relevance, 2) == pytest.approx(1 / (2 + 1 / math.log2(3)))
    assert ndcg_at_k(["d3", "d1", "d9"], relevance, 10) == pytest.approx(1.0)
    assert ndcg_at_k(ranked, {}, 10) == 0.0


def test_recall_and_mrr_by_hand() -> None:
    relevance = {"a": 1, "b": 2, "c": 0, "z": 1}
    ranked = ["c", "x", "b", "a"] + [f"n{i}" for i in range(200)]
    assert recall_at_k(ranked, relevance, 100) == pytest.approx(2 / 3)  # c is judged irrelevant
    assert recall_at_k(ranked, relevance, 3) == pytest.approx(1 / 3)
    assert mrr_at_k(ranked, relevance, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(ranked, relevance, 2) == 0.0
    assert mrr_at_k(["a"], relevance, 10) == 1.0


def test_percentile_interpolates() -> None:
    values = [10.0, 20.0, 30.0, 40.0, 50.0]
    assert percentile(values, 50) == 30.0
    assert percentile(values, 95) == pytest.approx(48.0)
    assert percentile([7.0], 95) == 7.0
    assert math.isnan(percentile([], 50))


def test_rrf_by_hand() -> None:
    fused = dict(rrf([[1, 2, 3], [3, 1]], k=60))
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert [item for item, _ in rrf([[1, 2, 3], [3, 1]], k=60)] == [1, 3, 2]


def test_score_fusion_normalizes_each_side() -> None:
    keyword = {1: 10.0, 2: 5.0}            # bm25: divided by the max
    semantic = {1: 0.2, 2: 0.6, 3: 0.4}     # cosine: min-max over the candidates
    fused = dict(score_fusion(keyword, semantic, keyword_weight=0.5))
    assert fused[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert fused[2] == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    assert fused[3] == pytest.approx(0.5 * 0.0 + 0.5 * 0.5)
    assert score_fusion({}, {}, 0.5) == []
