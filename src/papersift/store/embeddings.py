"""Embeddings per paper and model as both backends keep them, keyed by a hash of the embedded text; each backend says how a vector is stored and read, and finds nearest papers its own way."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from papersift.clock import utc_now
from papersift.store.search import Search
from papersift.store.sql import Concern, Database, dedupe_last
from papersift.store.values import SearchFilters

# The vectors of one model (the first parameter) of live papers.
_LIVE = ("FROM embeddings e JOIN papers p ON p.id = e.paper_id"
         " WHERE e.model = ? AND p.duplicate_of IS NULL")
# Vectors read per step of the exact nearest-neighbour scan (memory stays flat at any size).
_SCAN = 20_000


class Embeddings(Concern):
    """One vector per paper and model (contract: this class), written once over how a backend's
    vectors travel (_vector_param, _vector_rows, _matrix); nearest papers: an exact scan here."""

    def __init__(self, db: Database, search: Search) -> None:
        super().__init__(db)
        self._search = search  # the search filters, for nearest_papers

    # ------------------------------------------- how vectors travel (here: SQLite's blobs)
    def _vector_param(self, vector: np.ndarray) -> Any:
        """A vector as this backend's parameter for the `vector` column."""
        return np.asarray(vector, dtype="<f4").tobytes()

    def _vector_rows(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        """Every row of a query that reads `vector` columns, as _matrix takes them."""
        return self.db.rows(sql, params)

    def _matrix(self, vectors: Sequence[Any]) -> np.ndarray:
        """Vectors as read, one float32 row each; (0, 0) for none."""
        if not vectors:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(vectors), dtype="<f4")
        return matrix.reshape(len(vectors), -1).astype(np.float32, copy=False)

    # ---------------------------------------------------------------- the contract
    def iter_embedding_inputs(self, model: str, batch: int = 512
                              ) -> Iterator[list[tuple[str, str, str, str | None]]]:
        """Batches of (paper id, title, abstract, stored text hash or None) of every live
        paper: the embed stage decides by the hash what is missing or stale."""
        for rows in self.db.walk(
                "SELECT p.pk, p.id, p.title, p.abstract, e.text_hash FROM papers p"
                " LEFT JOIN embeddings e ON e.paper_id = p.id AND e.model = ?"
                " WHERE p.duplicate_of IS NULL", (model,), batch):
            yield [(r["id"], r["title"], r["abstract"], r["text_hash"]) for r in rows]

    def put_embeddings(self, model: str, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Store (paper_id, text_hash, vector) rows in one transaction, replacing older ones."""
        if not rows:
            return
        now = utc_now()
        values = [(pid, model, text_hash, int(np.asarray(vec).shape[0]),
                   self._vector_param(vec), now)
                  for pid, text_hash, vec in dedupe_last(rows, key=lambda r: r[0])]
        with self.db.transaction():
            self.db.executemany(
                "INSERT INTO embeddings (paper_id, model, text_hash, dim, vector, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (paper_id, model) DO UPDATE SET"
                " text_hash = excluded.text_hash, dim = excluded.dim, vector = excluded.vector,"
                " created_at = excluded.created_at", values)

    def embedding_matrix(self, model: str, ids: Sequence[str] | None = None
                         ) -> tuple[list[str], np.ndarray]:
        """(paper ids, float32 matrix) of stored embeddings of non-duplicate papers, in pk order."""
        sql = f"SELECT e.paper_id, e.vector {_LIVE}"
        params: list[Any] = [model]
        if ids is not None:  # a few papers: look them up, do not read every vector
            among, wanted = self.db.any_of("e.paper_id", list(dict.fromkeys(ids)))
            sql, params = f"{sql} AND {among}", [model, *wanted]
        rows = self._vector_rows(sql + " ORDER BY p.pk", params)
        return [r[0] for r in rows], self._matrix([r[1] for r in rows])

    def get_embedding(self, paper_id: str, model: str) -> np.ndarray | None:
        rows = self._vector_rows("SELECT vector FROM embeddings WHERE paper_id = ? AND model = ?",
                                 (paper_id, model))
        return self._matrix([rows[0][0]])[0].copy() if rows else None

    def has_embedding(self, paper_id: str) -> bool:
        """Whether any model's vector of this paper is stored (similar papers need it)."""
        return self.db.value("SELECT 1 FROM embeddings WHERE paper_id = ? LIMIT 1",
                             (paper_id,)) is not None

    def embedding_models(self) -> list[str]:
        """Models that have stored embeddings, most vectors first."""
        return self.db.column(
            "SELECT model, count(*) FROM embeddings GROUP BY model ORDER BY 2 DESC, 1")

    def count_embeddings(self, model: str) -> int:
        return int(self.db.value("SELECT count(*) FROM embeddings WHERE model = ?", (model,)))

    # -- for the nearest-neighbour index, which is keyed by papers.pk
    def embedding_state(self, model: str) -> dict[int, str]:
        """{papers.pk: text_hash} of every stored embedding of a non-duplicate paper."""
        return dict(self.db.rows(f"SELECT p.pk, e.text_hash {_LIVE}", (model,)))

    def embedding_vectors(self, model: str, pks: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(pks found, float32 matrix) for these papers.pk values, in the order asked."""
        wanted = list(pks)
        among, params = self.db.any_of("p.pk", wanted, "bigint")
        found = dict(self._vector_rows(
            "SELECT p.pk, e.vector FROM papers p JOIN embeddings e ON e.paper_id = p.id"
            f" AND e.model = ? WHERE {among}", (model, *params)))
        order = [pk for pk in wanted if pk in found]
        return order, self._matrix([found[pk] for pk in order])

    # -- nearest papers: without a vector index of the store's own, an exact scan
    def indexes_vectors(self) -> bool:
        """Whether nearest_papers answers from an index kept in the store, fast at any size
        (PostgreSQL's HNSW): the search layer then builds no local index file (search/ann.py)."""
        return False

    def drop_vector_index(self) -> bool:
        """Drop the store's own nearest-neighbour index before a bulk write, so that no write also
        inserts into it (True if dropped); nearest_papers is exact and slow until it is rebuilt."""
        return False

    def build_vector_index(self, memory_mb: int, workers: int) -> float | None:
        """Build the store's own index if it is missing, in one pass over the stored vectors, with
        up to `memory_mb` of memory and `workers` parallel workers; seconds taken, or None if there
        was nothing to build. Safe at any time: it mends a bulk write stopped before the rebuild."""
        return None

    def nearest_papers(self, model: str, vector: np.ndarray, k: int,
                       filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """(pk, inner product with `vector`) of the k live papers whose vectors of this model are
        nearest to it, nearest first, among those passing `filters`: approximate from a backend's
        index (indexes_vectors), here exact (every vector read: what recall is measured against)."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        allowed = None if filters is None or filters.is_empty() else \
            self._search.filtered_pks(filters)
        best_pks, best_scores = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        last = 0
        while k > 0:
            rows = self.db.rows(
                f"SELECT p.pk, e.vector {_LIVE} AND p.pk > ? AND e.dim = ? ORDER BY p.pk LIMIT ?",
                (model, last, query.shape[0], _SCAN))
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
