"""Fine topics from embeddings: each paper's vector smoothed with its nearest neighbours, then
spherical k-means (warm-started from the previous build's centroids) with an "other" rule for
papers that fit no topic."""

from __future__ import annotations

from dataclasses import dataclass

import hnswlib
import numpy as np
from sklearn.cluster import KMeans

# Below this many query x corpus pairs the exact neighbours are cheap (and deterministic);
# above it (~22,000 papers) an HNSW graph finds them (98,742 papers: ~20 s instead of minutes).
_EXACT_PAIRS = 500_000_000
# ...but only for more rows than this. Both costs grow with the corpus: exact neighbours take
# ~21 ms a row among 1,000,000 papers, the graph ~197 s to build (2 threads, M=16), so the
# graph pays past ~9,000 rows whatever the corpus size (docs/benchmark-log.md, issue 16): a
# day's new papers are compared exactly, a backfill's through the graph.
_GRAPH_ROWS = 8_000
# Rows whose exact neighbours are computed in one product (a 256 x corpus matrix of cosines,
# fewer rows past _BLOCK_CELLS cells: the matrix and its argpartition's int64 indices).
EXACT_BLOCK = 256
_BLOCK_CELLS = 1 << 26


@dataclass
class Clustering:
    """labels[i] is the cluster of paper i, or -1 for "other"; centroids are unit vectors."""

    labels: np.ndarray
    similarity: np.ndarray  # cosine of each paper to the centroid of its cluster (or nearest)
    centroids: np.ndarray
    iterations: int = 0


def choose_k(n_papers: int, papers_per_topic: int, min_topic_size: int = 12,
             max_k: int = 400) -> int:
    """Number of fine topics: about papers_per_topic papers each, but at least 20 topics
    (of at least three times the minimum size) on a small corpus, so a new install with a
    few days of papers still gets topics rather than two or three buckets."""
    floor = min(20, n_papers // max(1, 3 * min_topic_size))
    return int(max(1, min(max_k, max(floor, round(n_papers / max(1, papers_per_topic))))))


def normalize(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def nearest(vectors: np.ndarray, centroids: np.ndarray, batch: int = 8192
            ) -> tuple[np.ndarray, np.ndarray]:
    """(index, cosine) of the nearest centroid for each (unit) vector."""
    index = np.empty(len(vectors), dtype=np.int64)
    cosine = np.empty(len(vectors), dtype=np.float32)
    for start in range(0, len(vectors), batch):
        sims = vectors[start:start + batch] @ centroids.T
        best = sims.argmax(axis=1)
        index[start:start + batch] = best
        cosine[start:start + batch] = sims[np.arange(len(best)), best]
    return index, cosine


def needs_graph(n_rows: int, n_corpus: int) -> bool:
    """Whether the neighbours of n_rows papers among n_corpus are found with an HNSW graph
    (else exactly)."""
    return n_rows > _GRAPH_ROWS and n_rows * n_corpus > _EXACT_PAIRS


def exact_block(n_corpus: int) -> int:
    """Rows per product of exact neighbours: 256, halved while the product's cells exceed
    _BLOCK_CELLS (a million papers: 64 rows, 256 MB of cosines instead of 1 GB). Always a
    divisor of EXACT_BLOCK, so chunks of its multiples still cut the rows where one run would."""
    block = EXACT_BLOCK
    while block > 1 and block * n_corpus > _BLOCK_CELLS:
        block //= 2
    return block


def neighbour_graph(corpus: np.ndarray, seed: int = 0, threads: int = 1) -> hnswlib.Index:
    """An HNSW graph of the (unit) corpus vectors, queried by neighbours()."""
    # Recall matters: at recall@10 ~0.87 (M=8) the smoothing's gain in NMI disappears;
    # M=16, ef 80/40 gives ~0.96 (docs/benchmark-log.md, Topics).
    graph = hnswlib.Index(space="ip", dim=corpus.shape[1])
    graph.init_index(max_elements=len(corpus), ef_construction=80, M=16, random_seed=seed)
    graph.set_num_threads(max(1, threads))
    graph.add_items(corpus, np.arange(len(corpus)))
    return graph


def neighbours(corpus: np.ndarray, rows: np.ndarray, k: int, seed: int = 0, threads: int = 1,
               graph: hnswlib.Index | None = None) -> np.ndarray:
    """Indices of the k nearest corpus vectors (by cosine) of corpus[rows], each row's own
    vector excluded. corpus holds unit vectors.

    Exact when that is cheap, else through `graph` (built here when not given). A row's
    neighbours do not depend on the other rows asked with it (exact rows go exact_block(n) at
    a time from the first: asking in chunks of multiples of 256 gives the same bits), so the
    papers may be split into chunks computed apart, given one graph.
    """
    n = len(corpus)
    k = min(k, n - 1)
    if k <= 0 or len(rows) == 0:
        return np.zeros((len(rows), 0), dtype=np.int64)
    if graph is None and not needs_graph(len(rows), n):
        found = np.empty((len(rows), k + 1), dtype=np.int64)
        step = exact_block(n)
        for start in range(0, len(rows), step):
            block = rows[start:start + step]
            sims = corpus[block] @ corpus.T
            top = np.argpartition(sims, n - k - 1, axis=1)[:, n - k - 1:]
            order = np.argsort(-np.take_along_axis(sims, top, axis=1), axis=1, kind="stable")
            found[start:start + step] = np.take_along_axis(top, order, axis=1)
    else:
        graph = graph if graph is not None else neighbour_graph(corpus, seed, threads)
        graph.set_num_threads(max(1, threads))  # each query is answered alone: same answers
        graph.set_ef(max(40, 2 * (k + 1)))
        found, _ = graph.knn_query(corpus[rows], k=k + 1)
        found = found.astype(np.int64)
    # Drop each row itself (or, when an exact copy took its place, the last neighbour).
    not_self = found != rows[:, None]
    keep = np.argsort(~not_self, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(found, keep, axis=1)


def smooth(corpus: np.ndarray, rows: np.ndarray | None = None, k: int = 10,
           weight: float = 1.0, seed: int = 0, threads: int = 1,
           graph: hnswlib.Index | None = None) -> np.ndarray:
    """normalize(x + weight * mean of x's k nearest papers) for corpus[rows] (all by default).

    One step of smoothing over the nearest-neighbour graph: a paper is read partly through
    the papers nearest to it, which measured +0.008 NMI against arXiv categories over k-means
    on the raw vectors (docs/benchmark-log.md, Topics). `graph`: see neighbours().
    """
    rows = np.arange(len(corpus)) if rows is None else np.asarray(rows, dtype=np.int64)
    if k <= 0 or weight <= 0:
        return corpus[rows]
    near = neighbours(corpus, rows, k, seed=seed, threads=threads, graph=graph)
    if near.shape[1] == 0:
        return corpus[rows]
    mean = np.zeros((len(rows), corpus.shape[1]), dtype=np.float32)
    for j in range(near.shape[1]):  # one column at a time: no (rows x k x dim) temporary
        mean += corpus[near[:, j]]
    return normalize(corpus[rows] + weight * mean / near.shape[1])


def _initial_centroids(vectors: np.ndarray, k: int, previous: np.ndarray | None,
                       seed: int) -> np.ndarray | str:
    """Previous centroids first (so topics stay where they were), then new ones where the
    previous centroids serve papers worst."""
    if previous is None or len(previous) == 0:
        return "k-means++"
    previous = normalize(previous)[:k]
    extra = k - len(previous)
    if extra <= 0:
        return previous
    _, cosine = nearest(vectors, previous)
    worst = np.argsort(cosine, kind="stable")[: max(extra * 20, extra)]
    if len(worst) <= extra:
        return np.vstack([previous, vectors[worst]])
    seeds = KMeans(n_clusters=extra, n_init=1, random_state=seed, max_iter=50).fit(vectors[worst])
    return np.vstack([previous, normalize(seeds.cluster_centers_)])


def cluster(
    vectors: np.ndarray,
    k: int,
    other_similarity: float,
    min_size: int,
    previous: np.ndarray | None = None,
    seed: int = 0,
    max_iter: int = 100,
) -> Clustering:
    """Cluster unit vectors into at most k topics.

    A paper whose cosine to its nearest centroid is below other_similarity fits no topic
    and goes to "other" (label -1); clusters smaller than min_size are dissolved and their
    papers reassigned to the nearest remaining topic (or "other").
    """
    n = len(vectors)
    if n == 0:
        return Clustering(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32),
                          np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0),
                                   dtype=np.float32))
    k = max(1, min(k, n))
    init = _initial_centroids(vectors, k, previous, seed)
    kmeans = KMeans(n_clusters=k, init=init, n_init=1, random_state=seed, max_iter=max_iter,
                    tol=1e-4, algorithm="lloyd")
    kmeans.fit(vectors)
    centroids = normalize(kmeans.cluster_centers_)
    # Dissolve small clusters until every remaining one is large enough.
    while True:
        index, cosine = nearest(vectors, centroids)
        fits = cosine >= other_similarity
        sizes = np.bincount(index[fits], minlength=len(centroids))
        small = sizes < min_size
        if not small.any() or small.all():
            break
        centroids = centroids[~small]
    # Centroids of the final members, so a centroid describes the papers it holds.
    labels = np.where(fits, index, -1)
    centroids = _member_centroids(vectors, labels, centroids)
    index, cosine = nearest(vectors, centroids)
    labels = np.where(cosine >= other_similarity, index, -1)
    return Clustering(labels=labels, similarity=cosine, centroids=centroids,
                      iterations=int(kmeans.n_iter_))


def _member_centroids(vectors: np.ndarray, labels: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    sums = np.zeros_like(fallback, dtype=np.float64)
    members = labels >= 0
    np.add.at(sums, labels[members], vectors[members])
    empty = np.linalg.norm(sums, axis=1) == 0
    sums[empty] = fallback[empty]
    return normalize(sums)
