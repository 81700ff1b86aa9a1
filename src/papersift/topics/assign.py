"""The assignment of new papers to their nearest topic as one batch function over chunks of papers, run here or by Ray actors (papersift.engines)."""

from __future__ import annotations

from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from papersift.engines import Job
from papersift.settings import Settings
from papersift.topics.cluster import (
    EXACT_BLOCK,
    nearest,
    needs_graph,
    neighbour_graph,
    normalize,
    smooth,
)

# New papers per chunk (one transaction when written). A multiple of the exact neighbours'
# block, so a chunk's blocks are the blocks the whole set would have: the same bits.
CHUNK = 4 * EXACT_BLOCK


class _AssignActor:
    """One worker: the corpus, the centroids and the neighbour graph (if any), given once;
    (nearest centroid, cosine) of chunk after chunk of corpus rows."""

    def __init__(self, settings: Settings, corpus: np.ndarray, centroids: np.ndarray,
                 graph: Any, space: tuple[int, float, int]) -> None:
        self.threads = max(1, int(settings.threads))
        self.corpus, self.centroids, self.graph = corpus, centroids, graph
        self.neighbours, self.weight, self.seed = space

    def run(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not len(self.centroids):  # only "other" exists: nothing to compare with
            return np.zeros(len(rows), np.int64), np.zeros(len(rows), np.float32)
        with threadpool_limits(limits=self.threads):
            vectors = smooth(self.corpus, rows, k=self.neighbours, weight=self.weight,
                             seed=self.seed, threads=self.threads, graph=self.graph)
            return nearest(vectors, self.centroids)


def assign_job(settings: Settings, corpus: np.ndarray, new_rows: int, centroids: np.ndarray,
               space: tuple[int, float, int]) -> Job:
    """The job that compares new papers (rows of `corpus`, new_rows of them in all, cut in
    chunks) with the centroids, each smoothed as the build smoothed (space: neighbours,
    weight, seed; (0, 0.0, seed) is raw).

    What depends on all the new papers is decided here, once: whether neighbours are exact
    or found through an HNSW graph of the whole corpus, built here and shared by every
    worker, so cutting the papers in chunks changes no result.
    """
    threads = max(1, int(settings.threads))
    with threadpool_limits(limits=threads):
        # Embedders store unit vectors; checking is ~10x cheaper than normalizing again.
        if not np.allclose(np.einsum("ij,ij->i", corpus, corpus), 1.0, atol=1e-3):
            corpus = normalize(corpus)
    k, weight, seed = space
    graph = None
    if k > 0 and weight > 0 and len(centroids) and needs_graph(new_rows, len(corpus)):
        graph = neighbour_graph(corpus, seed=seed, threads=threads)
    return Job(worker=_AssignActor, shared=(corpus, centroids, graph, space))
