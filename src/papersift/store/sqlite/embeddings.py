"""Embeddings per paper and model in SQLite, keyed by a hash of the embedded text."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from papersift.clock import utc_now
from papersift.store.contracts import SearchFilters
from papersift.store.sqlite.db import Concern, chunks, marks, transaction
from papersift.store.sqlite.search import Search

# Vectors read per step of the exact nearest-neighbour scan (memory stays flat at any size).
_SCAN = 20_000


class Embeddings(Concern):
    """Vectors as float32 little-endian blobs (contract: EmbeddingsStore)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        super().__init__(conn, path)
        self._search = Search(conn, path)  # the search filters, for nearest_papers

    def iter_embedding_inputs(
        self, model: str, batch: int = 512
    ) -> Iterator[list[tuple[str, str, str, str | None]]]:
        """Batches of (paper_id, title, abstract, stored text_hash or None) for every paper
        that is not a duplicate; the stage decides what is missing or stale by the hash."""
        last = 0
        while True:
            rows = self.conn.execute(
                "SELECT p.pk, p.id, p.title, p.abstract, e.text_hash FROM papers p"
                " LEFT JOIN embeddings e ON e.paper_id = p.id AND e.model = ?"
                " WHERE p.pk > ? AND p.duplicate_of IS NULL ORDER BY p.pk LIMIT ?",
                (model, last, batch),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [(r[1], r[2], r[3], r[4]) for r in rows]

    def put_embeddings(
        self, model: str, rows: Sequence[tuple[str, str, np.ndarray]]
    ) -> None:
        """Store (paper_id, text_hash, vector) rows in one transaction, replacing older ones."""
        now = utc_now()
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT INTO embeddings(paper_id, model, text_hash, dim, vector, created_at)"
                " VALUES (?,?,?,?,?,?) ON CONFLICT(paper_id, model) DO UPDATE SET"
                " text_hash = excluded.text_hash, dim = excluded.dim, vector = excluded.vector,"
                " created_at = excluded.created_at",
                [
                    (pid, model, text_hash, int(vec.shape[0]),
                     np.asarray(vec, dtype="<f4").tobytes(), now)
                    for pid, text_hash, vec in rows
                ],
            )

    def embedding_matrix(
        self, model: str, ids: Sequence[str] | None = None
    ) -> tuple[list[str], np.ndarray]:
        """(paper ids, float32 matrix) of stored embeddings of non-duplicate papers, in pk order."""
        sql = (
            "SELECT p.pk, e.paper_id, e.dim, e.vector FROM embeddings e"
            " JOIN papers p ON p.id = e.paper_id WHERE e.model = ? AND p.duplicate_of IS NULL"
        )
        if ids is None:
            rows = self.conn.execute(sql + " ORDER BY p.pk", (model,)).fetchall()
        else:  # a few papers: look them up, do not read every vector
            rows = []
            for chunk in chunks(list(dict.fromkeys(ids))):
                rows += self.conn.execute(sql + f" AND e.paper_id IN ({marks(chunk)})",
                                          (model, *chunk)).fetchall()
            rows.sort(key=lambda r: r[0])
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        dim = rows[0][2]
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(len(rows), dim)
        return [r[1] for r in rows], matrix.astype(np.float32, copy=False)

    def get_embedding(self, paper_id: str, model: str) -> np.ndarray | None:
        row = self.conn.execute(
            "SELECT vector FROM embeddings WHERE paper_id = ? AND model = ?", (paper_id, model)
        ).fetchone()
        return None if row is None else np.frombuffer(row[0], dtype="<f4").copy()

    def has_embedding(self, paper_id: str) -> bool:
        """Whether the embed stage has reached this paper (similar papers need it)."""
        return self.conn.execute("SELECT 1 FROM embeddings WHERE paper_id = ? LIMIT 1",
                                 (paper_id,)).fetchone() is not None

    def embedding_models(self) -> list[str]:
        """Models that have stored embeddings, most vectors first."""
        return [r[0] for r in self.conn.execute(
            "SELECT model, count(*) FROM embeddings GROUP BY model ORDER BY 2 DESC, 1")]

    def count_embeddings(self, model: str) -> int:
        return self.conn.execute(
            "SELECT count(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]

    # -- for the nearest-neighbour index, which is keyed by papers.pk
    def embedding_state(self, model: str) -> dict[int, str]:
        """{papers.pk: text_hash} of every stored embedding of a non-duplicate paper."""
        return dict(self.conn.execute(
            "SELECT p.pk, e.text_hash FROM embeddings e JOIN papers p ON p.id = e.paper_id"
            " WHERE e.model = ? AND p.duplicate_of IS NULL", (model,)))

    def embedding_vectors(
        self, model: str, pks: Sequence[int]
    ) -> tuple[list[int], np.ndarray]:
        """(pks found, float32 matrix) for these papers.pk values, in the order asked."""
        found: dict[int, bytes] = {}
        wanted = list(pks)
        for chunk in chunks(wanted):
            for pk, blob in self.conn.execute(
                f"SELECT p.pk, e.vector FROM papers p JOIN embeddings e ON e.paper_id = p.id"
                f" AND e.model = ? WHERE p.pk IN ({marks(chunk)})", (model, *chunk)):
                found[pk] = blob
        order = [pk for pk in wanted if pk in found]
        if not order:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(found[pk] for pk in order), dtype="<f4")
        return order, matrix.reshape(len(order), -1).astype(np.float32, copy=False)

    def indexes_vectors(self) -> bool:
        """No: SQLite has no vector index; search uses the local index file (search/ann.py)."""
        return False

    def drop_vector_index(self) -> bool:
        """Nothing to drop: the local index file is built after the vectors are written."""
        return False

    def build_vector_index(self, memory_mb: int, workers: int) -> float | None:
        """Nothing to build here (search/ann.py builds the local index file)."""
        return None

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
            rows = self.conn.execute(
                "SELECT p.pk, e.vector FROM embeddings e JOIN papers p ON p.id = e.paper_id"
                " WHERE e.model = ? AND p.duplicate_of IS NULL AND p.pk > ? AND e.dim = ?"
                " ORDER BY p.pk LIMIT ?", (model, last, query.shape[0], _SCAN)).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            if allowed is not None:
                rows = [r for r in rows if r[0] in allowed]
            if not rows:
                continue
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4")
            scores = matrix.reshape(len(rows), -1) @ query
            best_pks = np.concatenate([best_pks, np.fromiter((r[0] for r in rows), np.int64)])
            best_scores = np.concatenate([best_scores, scores.astype(np.float32)])
            if len(best_scores) > k:
                keep = np.argpartition(-best_scores, k - 1)[:k]
                best_pks, best_scores = best_pks[keep], best_scores[keep]
        order = np.lexsort((best_pks, -best_scores))
        return [(int(best_pks[i]), float(best_scores[i])) for i in order]
