"""Nearest-neighbour smoothing before clustering: exact and HNSW neighbours, self exclusion."""

from __future__ import annotations

import numpy as np
import pytest

from papersift.topics import cluster as cluster_module
from papersift.topics.cluster import exact_block, needs_graph, neighbours, normalize, smooth


def clustered(n: int, dim: int = 24, groups: int = 12, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(groups, dim))
    return normalize(centers[rng.integers(groups, size=n)] + 0.6 * rng.normal(size=(n, dim)))


def exact_top(corpus: np.ndarray, k: int) -> list[set[int]]:
    sims = corpus @ corpus.T
    np.fill_diagonal(sims, -np.inf)
    return [set(np.argsort(-row, kind="stable")[:k]) for row in sims]


def test_exact_neighbours_leave_the_paper_itself_out() -> None:
    corpus = clustered(300)
    found = neighbours(corpus, np.arange(300), k=10)
    assert found.shape == (300, 10)
    assert all(i not in row for i, row in enumerate(found))
    assert [set(row) for row in found] == exact_top(corpus, 10)


def test_a_days_papers_are_compared_exactly_however_large_the_corpus() -> None:
    assert not needs_graph(2_000, 1_000_000)       # a day's papers: exact
    assert not needs_graph(2_000, 2_700_000)
    assert needs_graph(25_000, 1_000_000)          # a month's backfill: the graph
    assert needs_graph(98_742, 98_742)             # a build of the recent corpus: the graph
    assert not needs_graph(20_000, 20_000)         # a small build: exact


def test_exact_blocks_shrink_with_the_corpus_and_change_no_neighbour(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert exact_block(98_742) == 256
    assert exact_block(1_000_000) == 64
    assert all(256 % exact_block(n) == 0 for n in (1, 300_000, 2_700_000, 10**9))
    corpus = clustered(3000)
    whole = neighbours(corpus, np.arange(3000), k=10)
    monkeypatch.setattr(cluster_module, "_BLOCK_CELLS", 8 * 3000)  # 8 rows per product
    assert exact_block(3000) == 8
    # The same neighbours; two of a row may swap places when their similarities tie to the
    # last bit (another block shape sums in another order: seen once in 3,000 rows).
    blocked = neighbours(corpus, np.arange(3000), k=10)
    assert [set(row) for row in blocked] == [set(row) for row in whole]
    assert np.mean([np.array_equal(a, b) for a, b in zip(blocked, whole, strict=True)]) > 0.99
    assert [set(row) for row in whole] == exact_top(corpus, 10)


def test_hnsw_neighbours_find_nearly_all_exact_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = clustered(3000)
    monkeypatch.setattr(cluster_module, "_EXACT_PAIRS", 0)  # force the HNSW graph
    monkeypatch.setattr(cluster_module, "_GRAPH_ROWS", 0)
    found = neighbours(corpus, np.arange(3000), k=10, threads=2)
    assert all(i not in row for i, row in enumerate(found))
    truth = exact_top(corpus, 10)
    recall = np.mean([len(set(row) & t) / 10 for row, t in zip(found, truth, strict=True)])
    assert recall >= 0.9


@pytest.mark.parametrize("force_hnsw", [False, True])
def test_an_exact_copy_is_a_neighbour_not_the_paper_itself(
        force_hnsw: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = clustered(200)
    corpus[7] = corpus[3]
    if force_hnsw:
        monkeypatch.setattr(cluster_module, "_EXACT_PAIRS", 0)
        monkeypatch.setattr(cluster_module, "_GRAPH_ROWS", 0)
    found = neighbours(corpus, np.array([3, 7]), k=5)
    assert 3 not in found[0] and 7 in found[0]
    assert 7 not in found[1] and 3 in found[1]


def test_smooth_adds_the_mean_of_the_neighbours() -> None:
    corpus = normalize(np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0, 0.9, 0.1]],
                                dtype=np.float32))
    smoothed = smooth(corpus, k=1, weight=1.0)
    expected = normalize(corpus + corpus[[1, 0, 3, 2]])
    assert np.allclose(smoothed, expected, atol=1e-6)
    assert np.allclose(smooth(corpus, np.array([2]), k=1), expected[[2]], atol=1e-6)
    assert np.array_equal(smooth(corpus, k=0), corpus)


def test_smoothing_a_single_paper_leaves_it_as_it_is() -> None:
    corpus = normalize(np.array([[1.0, 2.0, 3.0]], dtype=np.float32))
    assert np.array_equal(smooth(corpus, k=10), corpus)
