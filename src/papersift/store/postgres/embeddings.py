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
# Half as many again as k over a filter's share (an estimate) is what a filtered walk returns.
# Unfiltered, k + 10 (the 10: papers linked as duplicates after they were embedded): at k = 100
# over 30,000 papers, 110 instead of 160 walks 20% faster (p50 6.8 vs 8.5 ms) for recall@10
# 0.983 vs 0.987, and 2,499 of 2,500 hybrid top-10 results the same.
FILTERED_SPARE = 1.5
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

    def embedding_vectors(self, model: str, pks: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(pks found, float32 matrix) for these papers.pk values, in the order asked: read as
        vector_send's bytes, converted at once (half the client's time of a row at a time)."""
        wanted = list(pks)
        with self.db.conn.cursor(binary=True) as cursor:
            found = dict(cursor.execute(
                "SELECT p.pk, vector_send(e.vector) FROM papers p JOIN embeddings e"
                " ON e.paper_id = p.id AND e.model = %s WHERE p.pk = ANY(%s::bigint[])",
                (model, wanted)).fetchall())
        order = [pk for pk in wanted if pk in found]
        return order, _from_sent([found[pk] for pk in order])

    # -- nearest neighbours, from the HNSW index
    def indexes_vectors(self) -> bool:
        """Yes: pgvector's HNSW index answers nearest_papers (the local index file is unused)."""
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
        """CREATE INDEX over the stored vectors when the index is missing. The graph is built
        in memory while it fits in `memory_mb` (pgvector slows down many times once it does
        not), by the leader and `workers - 1` parallel workers."""
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
                       filters: SearchFilters | None = None,
                       vectors: dict[int, np.ndarray] | None = None,
                       vectors_of: Sequence[int] = ()) -> list[tuple[int, float]]:
        """The HNSW index's nearest (half precision, cosine), kept if they pass the filters,
        scored by the inner product of the stored full-precision vectors and sorted by it. A
        filter that leaves at most FILTER_EXACT_MAX papers, or a dimension without an index,
        is answered exactly; a wider one widens the walk in proportion to what it removes.
        The vectors asked for are read by the same statement (one round trip in all)."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if k <= 0:
            return []
        where, params = self._search._filter_sql(filters)
        also = None if vectors is None else list(dict.fromkeys(vectors_of))
        rows = None
        if query.shape[0] == INDEXED_DIM:
            rows = self._walk(model, query, k, filters, where, params, also)
        if rows is None:
            rows = self._exact(model, query, k, where, params, also)
        best = _best_first([r for r in rows if r[1] is not None], k)
        if vectors is not None:
            sent = [r for r in best if r[0] is not None] + [r for r in rows if r[1] is None]
            vectors.update(zip((int(r[0]) for r in sent), _from_sent([r[2] for r in sent]),
                               strict=True))
        return [(int(pk), float(score)) for pk, score, _ in best]

    def _walk(self, model: str, query: np.ndarray, k: int, filters: SearchFilters | None,
              where: str, params: list[Any], also: list[int] | None,
              ) -> list[Sequence[Any]] | None:
        """The rows of _from_index for the k nearest passing the filters, or None when they
        are better found exactly (a narrow filter; a wide one the walk could not satisfy)."""
        share = 1.0
        if filters is not None and not filters.is_empty():
            passing = int(self.db.value(f"SELECT count(*) FROM papers p WHERE {where}", params))
            if passing <= FILTER_EXACT_MAX:
                return None
            # The papers table's size as the planner estimates it (no count of a million rows).
            papers = self.db.value("SELECT greatest(reltuples, 1)::bigint FROM pg_class"
                                   " WHERE oid = 'papers'::regclass")
            share = passing / max(passing, int(papers or 1))
        fetch = int(k / share * (FILTERED_SPARE if share < 1.0 else 1.0)) + 10
        while fetch <= _FETCH_MAX:
            rows = self._from_index(model, query, fetch, where, params, also)
            walked = [r for r in rows if r[1] is not None]
            # Enough, or every vector was seen.
            if sum(r[0] is not None for r in walked) >= k or len(walked) < fetch:
                return rows
            fetch *= 4
        return None

    def _from_index(self, model: str, query: np.ndarray, fetch: int, where: str,
                    params: list[Any], also: list[int] | None) -> list[Sequence[Any]]:
        """(pk or None when it fails `where`, score, vector_send bytes or None) of the
        `fetch` nearest, then (pk, None, bytes) of the papers `also` asks the vectors of: in
        one statement when the walk's width is the last one's."""
        conn = self._tuned(min(_EF_SEARCH_MAX, max(EF_SEARCH, fetch)), max(20_000, 2 * fetch))
        extra, extra_params = _also(model, also)
        with conn.cursor(binary=True) as cursor:
            # The walk on embeddings alone (so the plan is always the index's), then the join.
            return cursor.execute(to_format(
                f"SELECT p.pk, -(c.vector <#> ?), {_sent('c', also is not None)} FROM"
                f" (SELECT paper_id, vector FROM embeddings WHERE model = ? AND dim = {INDEXED_DIM}"
                f" ORDER BY vector::halfvec({INDEXED_DIM}) <=> ?::halfvec({INDEXED_DIM})"
                " LIMIT ?) c LEFT JOIN papers p ON p.id = c.paper_id"
                f" AND {where}{extra}"),
                (query, model, query, int(fetch), *params, *extra_params)).fetchall()

    def _tuned(self, ef_search: int, max_scan: int) -> psycopg.Connection[Any]:
        """The connection, its walks set to this width. Set for the session and remembered
        (only HNSW scans read these, and every one is here), so a search is one statement;
        inside a transaction, which could roll the setting back, for that transaction."""
        conn = self.db.conn
        wanted = (conn, ef_search, max_scan)
        idle = conn.info.transaction_status == TransactionStatus.IDLE
        if idle and self._session == wanted:
            return conn
        # relaxed_order: past ef_search the walk goes on (its answers sorted again here).
        local = "false" if idle else "true"
        conn.execute(f"SELECT set_config('hnsw.ef_search', %s, {local}),"
                     f" set_config('hnsw.iterative_scan', 'relaxed_order', {local}),"
                     f" set_config('hnsw.max_scan_tuples', %s, {local})",
                     (str(ef_search), str(max_scan)))
        self._session = wanted if idle else None
        return conn

    def _exact(self, model: str, query: np.ndarray, k: int, where: str, params: list[Any],
               also: list[int] | None) -> list[Sequence[Any]]:
        # Ordered by the full-precision product, which no index holds: a scan of the papers
        # passing the filter.
        extra, extra_params = _also(model, also)
        return self._vector_rows(
            f"(SELECT p.pk, -(e.vector <#> ?) AS score, {_sent('e', also is not None)}"
            " FROM embeddings e JOIN papers p ON p.id = e.paper_id"
            f" WHERE e.model = ? AND e.dim = ? AND {where}"
            f" ORDER BY score DESC, p.pk LIMIT ?){extra}",
            (query, model, int(query.shape[0]), *params, int(k), *extra_params))


def _also(model: str, pks: list[int] | None) -> tuple[str, list[Any]]:
    """A UNION ALL of (pk, NULL, vector_send bytes) of these papers' vectors."""
    if not pks:
        return "", []
    return (" UNION ALL SELECT p.pk, NULL, vector_send(e.vector) FROM papers p"
            " JOIN embeddings e ON e.paper_id = p.id AND e.model = ?"
            " WHERE p.pk = ANY(?::bigint[])", [model, pks])


def _sent(table: str, wanted: bool) -> str:
    """The column of a table's vectors as vector_send's bytes, when they are wanted."""
    return f"vector_send({table}.vector)" if wanted else "NULL"


def _best_first(rows: Sequence[Sequence[Any]], k: int) -> list[Sequence[Any]]:
    """The best k rows of (pk, score, ...) that have a pk, by score then pk."""
    return sorted((r for r in rows if r[0] is not None),
                  key=lambda r: (-float(r[1]), int(r[0])))[:k]


def _from_sent(sent: Sequence[bytes]) -> np.ndarray:
    """vector_send's bytes of vectors of one dimension as a float32 matrix, converted at once
    (each is a 4-byte header, dimension and unused, then big-endian float32s)."""
    if not sent:
        return np.zeros((0, 0), dtype=np.float32)
    joined = np.frombuffer(b"".join(sent), dtype=np.uint8).reshape(len(sent), -1)
    return joined[:, 4:].copy().view(">f4").astype(np.float32)
