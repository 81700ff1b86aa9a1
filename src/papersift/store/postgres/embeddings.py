"""Embeddings per paper and model in PostgreSQL (pgvector), keyed by a hash of the embedded text."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from papersift.clock import utc_now
from papersift.store.postgres.db import Concern, dedupe_last, transaction


def _matrix(vectors: Sequence[np.ndarray]) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32, copy=False)


class Embeddings(Concern):
    """Vectors as pgvector `vector`s at full precision (contract: EmbeddingsStore); an HNSW
    index holds the 384-dimensional ones in half precision (migration 0002)."""

    def iter_embedding_inputs(
        self, model: str, batch: int = 512
    ) -> Iterator[list[tuple[str, str, str, str | None]]]:
        """Batches of (paper_id, title, abstract, stored text_hash or None) for every paper
        that is not a duplicate; the stage decides what is missing or stale by the hash."""
        last = 0
        while True:
            rows = self.rows(
                "SELECT p.pk, p.id, p.title, p.abstract, e.text_hash FROM papers p"
                " LEFT JOIN embeddings e ON e.paper_id = p.id AND e.model = %s"
                " WHERE p.pk > %s AND p.duplicate_of IS NULL ORDER BY p.pk LIMIT %s",
                (model, last, batch))
            if not rows:
                return
            last = rows[-1][0]
            yield [(r[1], r[2], r[3], r[4]) for r in rows]

    def put_embeddings(self, model: str, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Store (paper_id, text_hash, vector) rows in one transaction, replacing older ones."""
        if not rows:
            return
        now = utc_now()
        values = [(pid, model, text_hash, int(np.asarray(vec).shape[0]),
                   np.asarray(vec, dtype=np.float32), now)
                  for pid, text_hash, vec in dedupe_last(rows, key=lambda r: r[0])]
        with transaction(self.conn), self.conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO embeddings (paper_id, model, text_hash, dim, vector, created_at)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (paper_id, model) DO UPDATE SET"
                " text_hash = excluded.text_hash, dim = excluded.dim, vector = excluded.vector,"
                " created_at = excluded.created_at", values)

    def embedding_matrix(
        self, model: str, ids: Sequence[str] | None = None
    ) -> tuple[list[str], np.ndarray]:
        """(paper ids, float32 matrix) of stored embeddings of non-duplicate papers, in pk order."""
        sql = ("SELECT e.paper_id, e.vector FROM embeddings e JOIN papers p ON p.id = e.paper_id"
               " WHERE e.model = %s AND p.duplicate_of IS NULL")
        params: list[object] = [model]
        if ids is not None:
            sql += " AND e.paper_id = ANY(%s::text[])"
            params.append(list(dict.fromkeys(ids)))
        with self.conn.cursor(binary=True) as cursor:
            rows = cursor.execute(sql + " ORDER BY p.pk", params).fetchall()
        return [r[0] for r in rows], _matrix([r[1] for r in rows])

    def get_embedding(self, paper_id: str, model: str) -> np.ndarray | None:
        with self.conn.cursor(binary=True) as cursor:
            row = cursor.execute("SELECT vector FROM embeddings WHERE paper_id = %s AND model = %s",
                                 (paper_id, model)).fetchone()
        return None if row is None else row[0]

    def has_embedding(self, paper_id: str) -> bool:
        """Whether the embed stage has reached this paper (similar papers need it)."""
        return self.one("SELECT 1 FROM embeddings WHERE paper_id = %s LIMIT 1",
                        (paper_id,)) is not None

    def embedding_models(self) -> list[str]:
        """Models that have stored embeddings, most vectors first."""
        return [r[0] for r in self.rows(
            "SELECT model, count(*) FROM embeddings GROUP BY model ORDER BY 2 DESC, 1")]

    def count_embeddings(self, model: str) -> int:
        return int(self.value("SELECT count(*) FROM embeddings WHERE model = %s", (model,)))

    # -- for the nearest-neighbour index, which is keyed by papers.pk
    def embedding_state(self, model: str) -> dict[int, str]:
        """{papers.pk: text_hash} of every stored embedding of a non-duplicate paper."""
        return dict(self.rows(
            "SELECT p.pk, e.text_hash FROM embeddings e JOIN papers p ON p.id = e.paper_id"
            " WHERE e.model = %s AND p.duplicate_of IS NULL", (model,)))

    def embedding_vectors(
        self, model: str, pks: Sequence[int]
    ) -> tuple[list[int], np.ndarray]:
        """(pks found, float32 matrix) for these papers.pk values, in the order asked."""
        wanted = list(pks)
        with self.conn.cursor(binary=True) as cursor:
            found = dict(cursor.execute(
                "SELECT p.pk, e.vector FROM papers p JOIN embeddings e ON e.paper_id = p.id"
                " AND e.model = %s WHERE p.pk = ANY(%s::bigint[])", (model, wanted)).fetchall())
        order = [pk for pk in wanted if pk in found]
        return order, _matrix([found[pk] for pk in order])
