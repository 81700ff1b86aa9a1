"""Embeddings per paper and model in PostgreSQL (pgvector), keyed by a hash of the embedded text."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import psycopg

from papersift.clock import utc_now
from papersift.store.contracts import SearchFilters
from papersift.store.postgres.db import Concern, Connector, dedupe_last, transaction
from papersift.store.postgres.search import Search

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


def _matrix(vectors: Sequence[np.ndarray]) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32, copy=False)


class Embeddings(Concern):
    """Vectors as pgvector `vector`s at full precision (contract: EmbeddingsStore); an HNSW
    index holds the 384-dimensional ones in half precision (migration 0002)."""

    def __init__(self, connector: Connector, location: str) -> None:
        super().__init__(connector, location)
        self._search = Search(connector, location)  # the search filters, for nearest_papers

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

    # -- nearest neighbours, from the HNSW index
    def indexes_vectors(self) -> bool:
        """Yes: pgvector's HNSW index answers nearest_papers (the local index file is unused)."""
        return True

    def drop_vector_index(self) -> bool:
        """Drop the HNSW index: a bulk write then costs one index build at the end instead of
        an insert into the graph per vector (512 vectors/s kept current, one writer)."""
        if not self._has_index():
            return False
        with transaction(self.conn):
            self.conn.execute(f"DROP INDEX IF EXISTS {_INDEX_NAME}")
        return True

    def build_vector_index(self, memory_mb: int, workers: int) -> float | None:
        """CREATE INDEX over the stored vectors when the index is missing. The graph is built
        in memory while it fits in `memory_mb` (pgvector slows down many times once it does
        not), by the leader and `workers - 1` parallel workers."""
        if self._has_index():
            return None
        started = time.perf_counter()
        try:
            with transaction(self.conn):
                self.conn.execute(
                    "SELECT set_config('maintenance_work_mem', %s, true),"
                    " set_config('max_parallel_maintenance_workers', %s, true)",
                    (f"{max(64, int(memory_mb))}MB", str(max(0, int(workers) - 1))))
                self.conn.execute(_INDEX_SQL)
        except psycopg.errors.UniqueViolation:
            return None  # another process built it at the same time
        return time.perf_counter() - started

    def _has_index(self) -> bool:
        return self.value("SELECT to_regclass(%s) IS NOT NULL", (_INDEX_NAME,)) is True

    def nearest_papers(self, model: str, vector: np.ndarray, k: int,
                       filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """The HNSW index's nearest (half precision, cosine), kept if they pass the filters,
        scored by the inner product of the stored full-precision vectors and sorted by it. A
        filter that leaves at most FILTER_EXACT_MAX papers, or a dimension without an index,
        is answered exactly; a wider one widens the walk in proportion to what it removes."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if k <= 0:
            return []
        where, params = self._search._filter_sql(filters)  # the same backend's filters
        if query.shape[0] != INDEXED_DIM:
            return self._exact(model, query, k, where, params)
        share = 1.0
        if filters is not None and not filters.is_empty():
            passing = int(self.value(f"SELECT count(*) FROM papers p WHERE {where}", params))
            if passing <= FILTER_EXACT_MAX:
                return self._exact(model, query, k, where, params)
            share = passing / max(passing, self._estimated_papers())
        # A few more than k: a paper linked as a duplicate after it was embedded is dropped.
        fetch = int(k / share * 1.5) + 10
        while fetch <= _FETCH_MAX:
            found, walked = self._from_index(model, query, fetch, where, params)
            if len(found) >= k or walked < fetch:  # enough, or every vector was seen
                return found[:k]
            fetch *= 4
        return self._exact(model, query, k, where, params)

    def _estimated_papers(self) -> int:
        """The papers table's size as the planner estimates it (no count of a million rows)."""
        return int(self.value("SELECT greatest(reltuples, 1)::bigint FROM pg_class"
                              " WHERE oid = 'papers'::regclass") or 1)

    def _from_index(self, model: str, query: np.ndarray, fetch: int, where: str,
                    params: list[Any]) -> tuple[list[tuple[int, float]], int]:
        """(the `fetch` nearest that pass `where`, best first; how many the walk returned)."""
        ef_search = min(_EF_SEARCH_MAX, max(EF_SEARCH, fetch))
        with self.conn.transaction(), self.conn.cursor(binary=True) as cursor:
            # relaxed_order: past ef_search the walk goes on (its answers sorted again here).
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, true),"
                           " set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                           " set_config('hnsw.max_scan_tuples', %s, true)",
                           (str(ef_search), str(max(20_000, 2 * fetch))))
            # The walk on embeddings alone (so the plan is always the index's), then the join.
            rows = cursor.execute(
                "SELECT p.pk, -(c.vector <#> %s) FROM (SELECT paper_id, vector FROM embeddings"
                f" WHERE model = %s AND dim = {INDEXED_DIM}"
                f" ORDER BY vector::halfvec({INDEXED_DIM}) <=> %s::halfvec({INDEXED_DIM})"
                " LIMIT %s) c LEFT JOIN papers p ON p.id = c.paper_id"
                f" AND {where}", (query, model, query, int(fetch), *params)).fetchall()
        return _best_first([r for r in rows if r[0] is not None]), len(rows)

    def _exact(self, model: str, query: np.ndarray, k: int, where: str,
               params: list[Any]) -> list[tuple[int, float]]:
        # Ordered by the full-precision product, which no index holds: a scan of the papers
        # passing the filter.
        rows = self.rows(
            "SELECT p.pk, -(e.vector <#> %s) AS score FROM embeddings e JOIN papers p"
            f" ON p.id = e.paper_id WHERE e.model = %s AND e.dim = %s AND {where}"
            " ORDER BY score DESC, p.pk LIMIT %s",
            (query, model, int(query.shape[0]), *params, int(k)))
        return _best_first(rows)


def _best_first(rows: Sequence[tuple[Any, ...]]) -> list[tuple[int, float]]:
    return sorted(((int(pk), float(score)) for pk, score in rows), key=lambda r: (-r[1], r[0]))
