"""Embeddings in SQLite: vectors as float32 little-endian blobs, nearest papers by an exact scan."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from papersift.store import embeddings
from papersift.store.values import SearchFilters

# Vectors read per step of the exact nearest-neighbour scan (memory stays flat at any size).
_SCAN = 20_000


class Embeddings(embeddings.Embeddings):
    """Vectors as float32 little-endian blobs (contract: EmbeddingsStore); no vector index
    (search uses the local index file, search/ann.py)."""

    def _vector_param(self, vector: np.ndarray) -> bytes:
        return np.asarray(vector, dtype="<f4").tobytes()

    def _matrix(self, vectors: Sequence[Any]) -> np.ndarray:
        if not vectors:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(vectors), dtype="<f4")
        return matrix.reshape(len(vectors), -1).astype(np.float32, copy=False)

    def nearest_papers(self, model: str, vector: np.ndarray, k: int,
                       filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """Exact: every live paper's vector (of those passing `filters`) is read, a step at a
        time, and the best k kept. The reference an approximate index is measured against."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        allowed = None if filters is None or filters.is_empty() else \
            self._search.filtered_pks(filters)
        best_pks = np.zeros(0, dtype=np.int64)
        best_scores = np.zeros(0, dtype=np.float32)
        last = 0
        while k > 0:
            rows = self.db.rows(
                "SELECT p.pk, e.vector FROM embeddings e JOIN papers p ON p.id = e.paper_id"
                " WHERE e.model = ? AND p.duplicate_of IS NULL AND p.pk > ? AND e.dim = ?"
                " ORDER BY p.pk LIMIT ?", (model, last, query.shape[0], _SCAN))
            if not rows:
                break
            last = rows[-1][0]
            if allowed is not None:
                rows = [r for r in rows if r[0] in allowed]
            if not rows:
                continue
            scores = self._matrix([r[1] for r in rows]) @ query
            best_pks = np.concatenate([best_pks, np.fromiter((r[0] for r in rows), np.int64)])
            best_scores = np.concatenate([best_scores, scores.astype(np.float32)])
            if len(best_scores) > k:
                keep = np.argpartition(-best_scores, k - 1)[:k]
                best_pks, best_scores = best_pks[keep], best_scores[keep]
        order = np.lexsort((best_pks, -best_scores))
        return [(int(best_pks[i]), float(best_scores[i])) for i in order]
