"""papersift's own keyword postings on PostgreSQL: built from the stored tsvectors, a tail of papers added or changed since, the same bm25 in numpy.

The SQL ranking reads each match's tsvector out of TOAST and runs ts_rank_cd once per word:
~35 µs a match. For one word ts_rank_cd is the sum of its positions' weights, so the counts
of a lexeme in each weight class (A title, B abstract, C authors) give the same frequency;
these lists keep them per lexeme, and the same bm25 (idf from the lexicon, the average
length, each paper's length in bytes) is computed over whole lists (store/postings.py).
Papers added after the last tail update are ranked by the SQL query and merged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from papersift.clock import utc_now
from papersift.store.contracts import StoreError
from papersift.store.postgres.db import Concern, connect, snapshot, transaction
from papersift.store.postings import (
    DUPLICATES_SQL,
    STATE_COLUMNS,
    TAIL_PAPERS,
    IndexState,
    Postings,
    StoredPostings,
    bm25,
)

# A paper's length for bm25, as the SQL ranking takes it too: its text's bytes (FTS5 counts
# tokens; bytes are proportional enough, and octet_length reads them from the value's
# header, without decompressing the text).
LENGTH = "(octet_length(p.title) + octet_length(p.abstract) + octet_length(p.authors_text))"
# A lexeme's count in each weight class, packed as A << 16 | B << 8 | C (each at most 255;
# the brackets matter: SQL's << and | share one precedence, left to right).
_COUNTS = ("((least(cardinality(array_positions(u.weights, 'A')), 255) << 16)"
           " | (least(cardinality(array_positions(u.weights, 'B')), 255) << 8)"
           " | least(cardinality(array_positions(u.weights, 'C')), 255))")
_WRITE_ROWS = 5_000     # lexemes a build writes per transaction

Progress = Callable[[int, int], None]
# Ranks the papers past a pk with the SQL query.
Fresh = Callable[[int], list[tuple[int, float]]]
# Each token's factor (its idf times its weight in the query) and the papers' average length.
Statistics = Callable[[], tuple[list[float], float]]


def unpack(counts: bytes) -> np.ndarray:
    """Packed big-endian int32 counts as (n, 3) uint8: A, B, C (title, abstract, authors)."""
    return np.frombuffer(counts, dtype=np.uint8).reshape(-1, 4)[:, 1:]


class KeywordPostings(StoredPostings, Concern):
    """The postings' build, tail and ranking (used by Search; contract: SearchStore)."""

    def _query(self, sql: str) -> list[Any]:
        return self.rows(sql)

    def _database(self) -> str:
        return self.location

    # ------------------------------------------------------------------ build
    def build(self, on_progress: Progress | None = None) -> dict[str, Any]:
        """Every lexeme's postings as of one snapshot, written beside the previous build's;
        they take over in one small transaction (unless another stage changed the tail
        meanwhile), with an empty tail."""
        started = time.perf_counter()
        with transaction(self.conn):
            self.conn.execute("INSERT INTO keyword_index (id) VALUES (1) ON CONFLICT DO NOTHING")
            current = int(self.value("SELECT build FROM keyword_index"))
        self.conn.execute("DELETE FROM keyword_postings WHERE build <> %s", (current,))
        new = current + 1
        reader = connect(self.location, readonly=True)
        try:
            with snapshot(reader):
                since, version = reader.execute(
                    "SELECT (SELECT coalesce(max(seq), 0) FROM keyword_changed), tail_version"
                    " FROM keyword_index").fetchone()
                watermark = int(reader.execute("SELECT coalesce(max(pk), 0) FROM papers"
                                               ).fetchone()[0])
                lengths = self._read_lengths(reader, watermark)
                terms = self._write_postings(reader, new, watermark, on_progress)
        finally:
            reader.close()
        with transaction(self.conn):
            if self.value("SELECT tail_version FROM keyword_index") != version:
                raise StoreError("the keyword postings' tail changed during the build (another"
                                 " keywords stage ran); build again")
            self.conn.execute(
                "UPDATE keyword_index SET build = %s, watermark = %s, tail_watermark = %s,"
                " tail_version = tail_version + 1, papers = %s, lengths = %s, built_at = %s",
                (new, watermark, watermark, int((lengths > 0).sum()),
                 lengths.astype("<i4").tobytes(), utc_now()))
            self.conn.execute("DELETE FROM keyword_tail")
            self.conn.execute("DELETE FROM keyword_tail_papers")
            self.conn.execute("DELETE FROM keyword_changed WHERE seq <= %s", (since,))
        self.conn.execute("DELETE FROM keyword_postings WHERE build <> %s", (new,))
        return {"build": new, "papers": int((lengths > 0).sum()), "terms": terms,
                "seconds": round(time.perf_counter() - started, 1)}

    @staticmethod
    def _read_lengths(reader: Any, watermark: int) -> np.ndarray:
        lengths = np.zeros(watermark + 1, dtype=np.int64)
        rows = reader.execute(f"SELECT p.pk, {LENGTH} FROM papers p WHERE p.pk <= %s",
                              (watermark,)).fetchall()
        if rows:
            found = np.asarray(rows, dtype=np.int64)
            lengths[found[:, 0]] = found[:, 1]
        return lengths

    def _write_postings(self, reader: Any, build: int, watermark: int,
                        on_progress: Progress | None) -> int:
        """One row per lexeme: its papers and counts as the server aggregates them."""
        total = int(reader.execute("SELECT count(*) FROM lexicon").fetchone()[0])
        written = 0
        with reader.cursor(name="keyword_postings_build") as cursor:
            cursor.itersize = _WRITE_ROWS
            cursor.execute(
                "SELECT u.lexeme, string_agg(int4send(p.pk::int4), ''::bytea ORDER BY p.pk),"
                f" string_agg(int4send({_COUNTS}), ''::bytea ORDER BY p.pk)"
                " FROM papers p, unnest(p.fts) u WHERE p.pk <= %s GROUP BY u.lexeme",
                (watermark,))
            while rows := cursor.fetchmany(_WRITE_ROWS):
                with transaction(self.conn), self.conn.cursor() as out:
                    out.executemany("INSERT INTO keyword_postings (build, term, pks, counts)"
                                    " VALUES (%s, %s, %s, %s)",
                                    [(build, term, pks, counts) for term, pks, counts in rows])
                written += len(rows)
                if on_progress is not None:
                    on_progress(written, max(total, written))
        return written

    # ------------------------------------------------------------------- tail
    def _tail_added(self) -> tuple[int, int]:
        with transaction(self.conn):
            tail = int(self.value("SELECT tail_watermark FROM keyword_index FOR UPDATE"))
            pks = [r[0] for r in self.rows("SELECT pk FROM papers WHERE pk > %s ORDER BY pk"
                                           " LIMIT %s", (tail, TAIL_PAPERS))]
            if pks:
                self._put_tail(pks, replaced=False)
                self.conn.execute("UPDATE keyword_index SET tail_watermark = %s,"
                                  " tail_version = tail_version + 1", (pks[-1],))
        return len(pks), len(pks)

    def _tail_changed(self) -> tuple[int, int]:
        with transaction(self.conn):
            logged = self.rows("SELECT seq, pk FROM keyword_changed ORDER BY seq LIMIT %s"
                               " FOR UPDATE", (TAIL_PAPERS,))
            if not logged:
                return 0, 0
            pks = sorted({pk for _, pk in logged})
            self._put_tail(pks, replaced=True)
            self.conn.execute("DELETE FROM keyword_changed WHERE seq <= %s", (logged[-1][0],))
            self.conn.execute("UPDATE keyword_index SET tail_version = tail_version + 1")
        return len(logged), len(pks)

    def _put_tail(self, pks: list[int], replaced: bool) -> None:
        """The tail's postings of these papers, from their tsvectors; a paper no longer
        stored gets length 0 (its built postings are ignored from then on)."""
        if replaced:
            self.conn.execute("DELETE FROM keyword_tail WHERE pk = ANY(%s)", (pks,))
        self.conn.execute(
            "INSERT INTO keyword_tail (term, pk, counts)"
            f" SELECT u.lexeme, p.pk, {_COUNTS} FROM papers p, unnest(p.fts) u"
            " WHERE p.pk = ANY(%s)", (pks,))
        self.conn.execute(
            "INSERT INTO keyword_tail_papers (pk, length)"
            f" SELECT w.pk, coalesce((SELECT {LENGTH} FROM papers p WHERE p.pk = w.pk), 0)"
            " FROM unnest(%s::bigint[]) AS w(pk)"
            " ON CONFLICT (pk) DO UPDATE SET length = excluded.length", (pks,))

    # ---------------------------------------------------------------- ranking
    def rank(self, tokens: Sequence[str], statistics: Statistics, weights: Sequence[float],
             limit: int, first: int, fresh: Fresh) -> list[tuple[int, float]] | None:
        """(pk, bm25) of the best live papers, best first, or None without a build: each
        token's postings scored with its factor (idf times its weight in the query) and the
        average length, both from `statistics()` (read only when there is a build), and the
        field weights; `fresh(after)` ranks the papers past `after`."""
        wanted = sorted(set(tokens))
        with snapshot(self.conn):
            # The state, the newest paper and the duplicates in one round trip: on a busy
            # server each statement costs about as much CPU as a thousand postings scored.
            row = self.conn.execute(
                f"SELECT {STATE_COLUMNS}, (SELECT coalesce(max(pk), 0) FROM papers),"
                f" ARRAY({DUPLICATES_SQL}) FROM keyword_index").fetchone()
            if row is None or not row[0]:
                return None
            state, newest, duplicates = IndexState(*(int(v) for v in row[:5])), row[5], row[6]
            lists = self._lists(state, wanted)
            ranked_fresh = fresh(state.tail_watermark) if newest > state.tail_watermark else []
            factors, average = statistics()
            pks, scores = bm25([(lists[tok].since(first), factor)
                                for tok, factor in zip(tokens, factors, strict=True)],
                               weights, average)
            return self._best_live(pks, scores, ranked_fresh, limit, duplicates)

    def _lists(self, state: IndexState, tokens: Sequence[str]) -> dict[str, Postings]:
        """Each token's postings: the build's (without the papers the tail holds anew) and
        the tail's."""
        lengths, changed = self._lengths(state), self._changed(state)
        lists = {tok: Postings.empty() for tok in tokens}
        for term, pks, counts in self.rows(
                "SELECT term, pks, counts FROM keyword_postings WHERE build = %s"
                " AND term = ANY(%s)", (state.build, list(tokens))):
            ids = np.frombuffer(pks, dtype=">i4").astype(np.int64)
            lists[term] = Postings(ids, unpack(counts), lengths[ids]).without(changed)
        tail: dict[str, list[tuple[int, int, int]]] = {}
        for term, pk, counts, length in self.rows(
                "SELECT t.term, t.pk, t.counts, p.length FROM keyword_tail t"
                " JOIN keyword_tail_papers p ON p.pk = t.pk WHERE t.term = ANY(%s)",
                (list(tokens),)):
            tail.setdefault(term, []).append((pk, counts, length))
        for term, items in tail.items():
            packed = np.asarray([c for _, c, _ in items], dtype=">i4").tobytes()
            lists[term] = Postings.join([lists[term], Postings(
                np.asarray([pk for pk, _, _ in items], np.int64), unpack(packed),
                np.asarray([n for _, _, n in items], np.int64))])
        return lists
