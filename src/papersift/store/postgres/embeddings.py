"""Embeddings in PostgreSQL: vectors as pgvector `vector`s, nearest papers from an HNSW index."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg.pq import TransactionStatus

from papersift.store import embeddings
from papersift.store.postgres.db import PostgresDatabase
from papersift.store.sql import to_format
from papersift.store.values import SearchFilters

# The dimension the HNSW index covers (migration 0002: one partial index per dimension).
INDEXED_DIM = 384
# Candidates the HNSW search keeps per layer: at least this many, at least k, at most
# pgvector's limit. 128, as the local index (search/ann.py), measured at recall@10 >= 0.99.
EF_SEARCH = 128
_EF_SEARCH_MAX = 1000
# The index of migrations 0002 and 0009, by name and definition: a backfill drops it and
# builds it again (ef_construction 128: recall@10 0.961 at a million papers, 0.91 with 64).
_INDEX_NAME = f"embeddings_hnsw_{INDEXED_DIM}"
_INDEX_SQL = (f"CREATE INDEX IF NOT EXISTS {_INDEX_NAME} ON embeddings USING hnsw"
              f" ((vector::halfvec({INDEXED_DIM})) halfvec_cosine_ops)"
              f" WITH (m = 16, ef_construction = 128) WHERE dim = {INDEXED_DIM}")
# A filter that leaves at most this many papers is answered exactly over just those papers
# (as the local index does): the graph would have to walk past most of the others.
FILTER_EXACT_MAX = 20_000
# The widest walk asked of the index before a filtered search is answered exactly instead.
_FETCH_MAX = 50_000


class Embeddings(embeddings.Embeddings):
    """Vectors as pgvector `vector`s at full precision (contract: store.embeddings.Embeddings);
    an HNSW index holds the 384-dimensional ones in half precision (migration 0002)."""

    db: PostgresDatabase
    # (connection, ef_search, max_scan_tuples) its session's walks are set to (_tuned).
    _session: tuple[Any, int, int] | None = None

    def _vector_param(self, vector: np.ndarray) -> np.ndarray:
        return np.asarray(vector, dtype=np.float32)

    def _vector_rows(self, sql: str, params: Sequence[Any]) -> list[Sequence[Any]]:
        # Vectors come back as numpy arrays, read in binary (no text to parse).
        with self.db.conn.cursor(binary=True) as cursor:
            return cursor.execute(to_format(sql), params).fetchall()

    def _matrix(self, vectors: Sequence[Any]) -> np.ndarray:
        if not vectors:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack(vectors).astype(np.float32, copy=False)

    # -- nearest neighbours, from the HNSW index
    def indexes_vectors(self) -> bool:
        return True

    def drop_vector_index(self) -> bool:
        """Drop the HNSW index: a bulk write then costs one index build at the end instead of
        an insert into the graph per vector (512 vectors/s kept current, one writer)."""
        if not self._has_index():
            return False
        with self.db.transaction():
            self.db.execute(f"DROP INDEX IF EXISTS {_INDEX_NAME}")
        return True

    def build_vector_index(self, memory_mb: int, workers: int) -> float | None:
        """CREATE INDEX if missing, by the leader and `workers - 1` parallel workers; the graph is
        built in memory while it fits in `memory_mb` (pgvector slows down many times past it)."""
        if self._has_index():
            return None
        started = time.perf_counter()
        try:
            with self.db.transaction():
                self.db.execute(
                    "SELECT set_config('maintenance_work_mem', ?, true),"
                    " set_config('max_parallel_maintenance_workers', ?, true)",
                    (f"{max(64, int(memory_mb))}MB", str(max(0, int(workers) - 1))))
                self.db.execute(_INDEX_SQL)
        except psycopg.errors.UniqueViolation:
            return None  # another process built it at the same time
        return time.perf_counter() - started

    def _has_index(self) -> bool:
        return self.db.value("SELECT to_regclass(?) IS NOT NULL", (_INDEX_NAME,)) is True

    def nearest_papers(self, model: str, vector: np.ndarray, k: int,
                       filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """The HNSW index's nearest (half precision, cosine) that pass the filters, sorted by the
        inner product of the full-precision vectors. A filter leaving at most FILTER_EXACT_MAX
        papers, or an unindexed dimension, is answered exactly; a wider one widens the walk."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if k <= 0:
            return []
        where, params = self._search._filter_sql(filters)
        if query.shape[0] != INDEXED_DIM:
            return self._exact(model, query, k, where, params)
        share = 1.0
        if filters is not None and not filters.is_empty():
            passing = int(self.db.value(f"SELECT count(*) FROM papers p WHERE {where}", params))
            if passing <= FILTER_EXACT_MAX:
                return self._exact(model, query, k, where, params)
            # The papers table's size as the planner estimates it (no count of a million rows).
            papers = self.db.value("SELECT greatest(reltuples, 1)::bigint FROM pg_class"
                                   " WHERE oid = 'papers'::regclass")
            share = passing / max(passing, int(papers or 1))
        # A few more than k (a paper linked as a duplicate after it was embedded is dropped);
        # half as many again under a filter, whose share is an estimate.
        fetch = int(k / share * (1.5 if share < 1.0 else 1.0)) + 10
        while fetch <= _FETCH_MAX:
            found, walked = self._from_index(model, query, fetch, where, params)
            if len(found) >= k or walked < fetch:  # enough, or every vector was seen
                return found[:k]
            fetch *= 4
        return self._exact(model, query, k, where, params)

    def _from_index(self, model: str, query: np.ndarray, fetch: int, where: str,
                    params: list[Any]) -> tuple[list[tuple[int, float]], int]:
        """(the `fetch` nearest that pass `where`, best first; how many the walk returned)."""
        with self._tuned(fetch).cursor(binary=True) as cursor:
            # The walk on embeddings alone (so the plan is always the index's), then the join.
            rows = cursor.execute(to_format(
                "SELECT p.pk, -(c.vector <#> ?) FROM (SELECT paper_id, vector FROM embeddings"
                f" WHERE model = ? AND dim = {INDEXED_DIM}"
                f" ORDER BY vector::halfvec({INDEXED_DIM}) <=> ?::halfvec({INDEXED_DIM})"
                " LIMIT ?) c LEFT JOIN papers p ON p.id = c.paper_id"
                f" AND {where}"), (query, model, query, int(fetch), *params)).fetchall()
        return _best_first([r for r in rows if r[0] is not None]), len(rows)

    def _tuned(self, fetch: int) -> psycopg.Connection[Any]:
        """The connection, its walks set for `fetch` answers: for the session, and kept (only
        HNSW scans read these settings, all of them here), so a search is one statement; inside
        a transaction, which could roll a session setting back, for that transaction."""
        conn = self.db.conn
        wanted = (conn, min(_EF_SEARCH_MAX, max(EF_SEARCH, fetch)), max(20_000, 2 * fetch))
        idle = conn.info.transaction_status == TransactionStatus.IDLE
        if idle and self._session == wanted:
            return conn
        local = "false" if idle else "true"
        # relaxed_order: past ef_search the walk goes on (its answers sorted again here).
        conn.execute(f"SELECT set_config('hnsw.ef_search', %s, {local}),"
                     f" set_config('hnsw.iterative_scan', 'relaxed_order', {local}),"
                     f" set_config('hnsw.max_scan_tuples', %s, {local})",
                     (str(wanted[1]), str(wanted[2])))
        self._session = wanted if idle else None
        return conn

    def _exact(self, model: str, query: np.ndarray, k: int, where: str,
               params: list[Any]) -> list[tuple[int, float]]:
        # By the full-precision product (in no index): a scan of the papers passing the filter.
        return _best_first(self.db.rows(
            "SELECT p.pk, -(e.vector <#> ?) AS score FROM embeddings e JOIN papers p"
            f" ON p.id = e.paper_id WHERE e.model = ? AND e.dim = ? AND {where}"
            " ORDER BY score DESC, p.pk LIMIT ?",
            (query, model, int(query.shape[0]), *params, int(k))))


def _best_first(rows: Sequence[tuple[Any, ...]]) -> list[tuple[int, float]]:
    return sorted(((int(pk), float(score)) for pk, score in rows), key=lambda r: (-r[1], r[0]))
