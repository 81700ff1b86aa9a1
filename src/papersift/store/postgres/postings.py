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
from collections.abc import Sequence
from contextlib import AbstractContextManager, closing, nullcontext
from typing import Any

import numpy as np
from psycopg.pq import TransactionStatus

from papersift.store.postgres.db import connect, snapshot
from papersift.store.postings import (
    BUILT_AS_OF_SQL,
    Built,
    IndexState,
    Progress,
    RankState,
    StoredPostings,
    built_lists_held,
)
from papersift.store.sql import grouped

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
READ_AHEAD = 8_000      # postings a plan's read takes along (the planner ranks on as many)
JUST_READ_SECONDS = 1.0  # how long what a plan read serves its ranking
# The tokens' counts, the store's size, and the ranking's state and lists (migrations 0017, 0018).
_READ = "SELECT * FROM postings_read(%s::text[], %s, %s, %s, %s, %s::text[])"
# What moves when _READ's answer may: data_version with each commit changing papers (so the
# lexicon, the size, the duplicates), the build, the tail. Per database, under that key:
# {token: (lexicon papers or None, tail rows)} and (state, size, duplicates) (see _read).
_MOVED = ("SELECT (SELECT version FROM data_version), build, tail_version FROM keyword_index"
          " WHERE build > 0")
_MEMO: dict[str, tuple[Any, dict[str, tuple[int | None, list[Any]]], Any]] = {}


class KeywordPostings(StoredPostings):
    """The postings' build from the stored tsvectors, tail and ranking (used by Search)."""

    _PKS = ">i4"  # int4send's
    _ahead: tuple[float, set[str], RankState | None] | None = None  # read_ahead's state
    _counted: tuple[float, dict[str, int], int] | None = None  # the last read's counts, size

    def _unpack(self, counts: bytes) -> np.ndarray:
        """Packed big-endian int32 counts as (n, 3) uint8, copied: title, abstract, authors."""
        return np.frombuffer(counts, dtype=np.uint8).reshape(-1, 4)[:, 1:].copy()

    def _packed(self, counts: list[Any]) -> bytes:
        return np.asarray(counts, dtype=">i4").tobytes()

    def _write_build(self, build: int, on_progress: Progress | None) -> Built:
        """Every lexeme's postings as of one snapshot of a connection of its own."""
        with closing(connect(self.db.location, readonly=True)) as reader, snapshot(reader):
            since, version, watermark = reader.execute(BUILT_AS_OF_SQL).fetchone()
            lengths = np.zeros(watermark + 1, dtype=np.int64)
            found = np.asarray(reader.execute(
                f"SELECT p.pk, {LENGTH} FROM papers p WHERE p.pk <= %s", (watermark,)
            ).fetchall(), dtype=np.int64).reshape(-1, 2)
            lengths[found[:, 0]] = found[:, 1]
            terms = self._write_postings(reader, build, watermark, on_progress)
        return Built(since, version, watermark, int((lengths > 0).sum()), lengths, terms)

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
                self._insert([(build, term, pks, counts) for term, pks, counts in rows])
                written += len(rows)
                if on_progress is not None:
                    on_progress(written, max(total, written))
        return written

    def _put_tail(self, pks: list[int], replaced: bool) -> None:
        """From the papers' tsvectors."""
        if replaced:
            self.db.execute("DELETE FROM keyword_tail WHERE pk = ANY(?::bigint[])", (pks,))
        self.db.execute(
            "INSERT INTO keyword_tail (term, pk, counts)"
            f" SELECT u.lexeme, p.pk, {_COUNTS} FROM papers p, unnest(p.fts) u"
            " WHERE p.pk = ANY(?::bigint[])", (pks,))
        self.db.execute(
            "INSERT INTO keyword_tail_papers (pk, length)"
            f" SELECT w.pk, coalesce((SELECT {LENGTH} FROM papers p WHERE p.pk = w.pk), 0)"
            " FROM unnest(?::bigint[]) AS w(pk)"
            " ON CONFLICT (pk) DO UPDATE SET length = excluded.length", (pks,))

    def read_ahead(self, tokens: list[str]) -> tuple[dict[str, int], int]:
        """The tokens' paper counts and the store's size (its highest pk), with, in the same
        statement, the ranking's state and the rarest tokens' lists (up to READ_AHEAD postings),
        kept for a ranking just after (a search's plan, then its ranking: one round trip)."""
        counts, size, state, unlisted = self._read(tokens, READ_AHEAD, strict=False)
        self._ahead = (time.monotonic(), set(tokens) - unlisted, state)
        return counts, size

    def just_counted(self, tokens: Sequence[str]) -> tuple[dict[str, int], int] | None:
        """The tokens' counts and the store's size as the last read brought them an instant
        ago (a search's plan, or its ranking), if it read them all; used once."""
        found, self._counted = self._counted, None
        if (found is None or time.monotonic() - found[0] >= JUST_READ_SECONDS
                or not found[1].keys() >= set(tokens)):
            return None
        return {token: found[1][token] for token in tokens}, found[2]

    def _rank_state(self, tokens: Sequence[str]) -> RankState | None:
        ahead, self._ahead = self._ahead, None
        if (ahead is not None and time.monotonic() - ahead[0] < JUST_READ_SECONDS
                and ahead[1].issuperset(tokens)):
            if ahead[2] is None:
                return None
            state, newest, duplicates, (built, tail, held) = ahead[2]
            built, tail = ([row for row in rows if row[0] in ahead[1]] for rows in (built, tail))
            return state, newest, duplicates, (built, tail, held)
        return self._read(tokens, 2**62)[2]

    def _read(self, tokens: Sequence[str], most: int, strict: bool = True
              ) -> tuple[dict[str, int], int, RankState | None, set[str]]:
        """(counts, size, the ranking's state, the tokens left unlisted: those past the
        rarest `most` postings). One statement, one snapshot, no transaction; with the
        build's lengths and changed papers when the caches lack this state's, and the build's
        lists but those held in memory (if the build is still the one they are of). Or from
        what earlier reads brought, if the store has not moved since (_MOVED: a key lookup
        where the statement's lexicon probes take ~0.6 ms a question) and memory holds every
        list the statement would send (not `strict`: one neither held nor sent is unlisted)."""
        # Not inside a transaction: its uncommitted writes have not moved data_version yet.
        key = (self.db.conn.execute(_MOVED).fetchone()
               if self.db.conn.info.transaction_status == TransactionStatus.IDLE else None)
        memo = _MEMO.get(self.db.location)
        if memo and memo[0] == key and memo[1].keys() >= set(tokens):
            found = self._remembered(memo, tokens, most, strict)
            if found is not None:
                return found
        had = self._cached_for()
        # Taken now, so that they stay whatever the memory lets go of before the ranking.
        held = built_lists_held(self.db.location, had[0], tokens) if had[0] else {}
        with self.db.conn.cursor(binary=True) as cursor:
            found = cursor.execute(_READ, (list(tokens), most, had[0] or 0,
                                           *(had[1] or (0, 0)), list(held))).fetchone()
        read = dict(zip(found[0] or [], found[1] or [], strict=True))
        counts, size = {token: int(read.get(token, 0)) for token in tokens}, int(found[3])
        self._counted = (time.monotonic(), counts, size)
        if not found[4]:  # no build (or no keyword_index row)
            return counts, size, None, set()
        state = IndexState(*(int(v) for v in found[4:9]))
        self._keep(state, found[10], found[11])
        # array_agg gives NULL for no rows; each group's arrays come from one aggregate.
        built, tail = ([list(r) for r in zip(*(c or [] for c in group), strict=True)]
                       for group in (found[12:15], found[15:]))
        if state.build != had[0]:  # a new build: every list was read, none held is of it
            held = {}
        if key is not None and key[1:] == (state.build, state.tail_version):
            if not memo or memo[0] != key or len(memo[1]) > 50_000:
                memo = _MEMO[self.db.location] = (key, {}, (state, size, found[9]))
            rows = grouped((row[0], row) for row in tail)
            memo[1].update((token, (read.get(token), rows.get(token, []))) for token in tokens)
        return (counts, size, (state, size, found[9], (built, tail, held)),
                set(found[2]) - set(held))

    def _remembered(self, memo: Any, tokens: Sequence[str], most: int, strict: bool
                    ) -> tuple[dict[str, int], int, RankState | None, set[str]] | None:
        """_read's answer from `memo`, None if the statement would send a list not held."""
        (state, size, duplicates), words = memo[2], set(tokens)
        held = built_lists_held(self.db.location, state.build, tokens)
        run, unlisted = 0, set()
        # As postings_read: the lexicon's tokens, rarest first, past `most` postings unlisted.
        for papers, token in sorted((memo[1][t][0], t) for t in words if memo[1][t][0] is not None):
            run += 0 if token in held else papers
            if run > most or token not in held:
                if run <= most and strict:
                    return None
                unlisted.add(token)
        counts = {token: memo[1][token][0] or 0 for token in tokens}
        self._counted = (time.monotonic(), counts, size)
        tail = [row for token in words for row in memo[1][token][1]]
        return counts, size, (state, size, duplicates, ([], tail, held)), unlisted - set(held)

    def _snapshot(self) -> AbstractContextManager[Any]:
        return nullcontext()  # none to open: _rank_state is one statement
