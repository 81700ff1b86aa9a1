"""papersift's own keyword postings on SQLite: built from the FTS5 index, a tail of papers added or changed since, bm25 over both in numpy.

FTS5's bm25() decodes every matching row's positions and column sizes: ~1 µs a match, the
largest part of a hybrid query at a million papers. These lists keep, per term, the papers and
the term's count in each column, so a query reads one blob per word and scores whole lists at
once, with FTS5's formula and statistics: the same scores (store/postings.py). Queries these
lists cannot answer (phrases, prefixes, operators, filters) stay with FTS5, which also ranks
the papers added after the last tail update (a seek past the tail's watermark), merged.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from papersift.clock import utc_now
from papersift.store.contracts import StoreError, Term
from papersift.store.postings import (
    FIELDS,
    TAIL_PAPERS,
    IndexState,
    Postings,
    StoredPostings,
    bm25,
    idf,
    pack_counts,
    unpack_counts,
)
from papersift.store.sqlite.db import Concern, chunks, marks, transaction
from papersift.store.sqlite.fulltext import fulltext_deferred

TOKENIZER = "porter unicode61 remove_diacritics 2"  # papers_fts's (migration 0001)
_COLUMN = "CASE col WHEN 'title' THEN 0 WHEN 'abstract' THEN 1 ELSE 2 END"
_READ_ROWS = 1_000_000   # index entries a build reads at a time (~16 MB as numbers)
_WRITE_BYTES = 64 << 20  # postings a build writes per transaction
_DELETE_ROWS = 20_000    # old build rows deleted per transaction

Progress = Callable[[int, int], None]
# Ranks the papers past a pk in FTS5, and gives a function counting a word's papers past it.
Fresh = Callable[[int], tuple[list[tuple[int, float]], Callable[[str], int]]]


def averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens in all columns) of papers_fts, read from its averages record: the N and
    the average length bm25() uses."""
    row = conn.execute("SELECT block FROM papers_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    values = _varints(bytes(row[0]))
    return values[0], sum(values[1:])


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian 7-bit groups, a ninth byte of 8 bits), as FTS5 writes them."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


class KeywordPostings(StoredPostings, Concern):
    """The postings' build, tail and ranking (used by Search; contract: SearchStore)."""

    def _query(self, sql: str) -> list[Any]:
        return self.conn.execute(sql).fetchall()

    def _database(self) -> str:
        return str(self.path)

    # ------------------------------------------------------------------ build
    def build(self, on_progress: Progress | None = None) -> dict[str, Any]:
        """Copy the FTS5 index, as of one snapshot, into new postings; they take over at the
        end in one small transaction, with an empty tail (changes logged since the snapshot
        are kept for the next tail update). A killed build leaves rows the next one deletes."""
        if fulltext_deferred(self.conn):
            raise StoreError("a bulk load is still building the full-text index: build the"
                             " keyword postings when it has finished")
        started = time.perf_counter()
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO keyword_index(id) VALUES (1)")
            current = self.conn.execute("SELECT build FROM keyword_index").fetchone()[0]
        self._delete_builds_except(current)
        new = current + 1
        reader = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None,
                                 check_same_thread=False)
        try:
            reader.execute("CREATE VIRTUAL TABLE temp.build_terms"
                           " USING fts5vocab(main, papers_fts, row)")
            reader.execute("CREATE VIRTUAL TABLE temp.build_entries"
                           " USING fts5vocab(main, papers_fts, instance)")
            reader.execute("BEGIN")  # one snapshot: the terms, the entries, the watermark
            since = reader.execute("SELECT coalesce(max(seq), 0) FROM keyword_changed"
                                   ).fetchone()[0]
            version = reader.execute("SELECT tail_version FROM keyword_index").fetchone()[0]
            watermark = reader.execute("SELECT coalesce(max(pk), 0) FROM papers").fetchone()[0]
            papers = averages(reader)[0]
            lengths, terms = self._write_postings(reader, new, watermark, on_progress)
            reader.execute("COMMIT")
        finally:
            reader.close()
        with transaction(self.conn):
            if self.conn.execute("SELECT tail_version FROM keyword_index").fetchone()[0] != version:
                # Another stage moved changes logged after the snapshot into the tail, which
                # this build would empty: those papers would keep their old postings.
                raise StoreError("the keyword postings' tail changed during the build (another"
                                 " keywords stage ran); build again")
            self.conn.execute(
                "UPDATE keyword_index SET build = ?, watermark = ?, tail_watermark = ?,"
                " tail_version = tail_version + 1, papers = ?, lengths = ?, built_at = ?",
                (new, watermark, watermark, papers, lengths.astype("<i4").tobytes(), utc_now()))
            self.conn.execute("DELETE FROM keyword_tail")
            self.conn.execute("DELETE FROM keyword_tail_papers")
            self.conn.execute("DELETE FROM keyword_changed WHERE seq <= ?", (since,))
        self._delete_builds_except(new)
        return {"build": new, "papers": papers, "terms": terms,
                "seconds": round(time.perf_counter() - started, 1)}

    def _write_postings(self, reader: sqlite3.Connection, build: int, watermark: int,
                        on_progress: Progress | None) -> tuple[np.ndarray, int]:
        """Reads the index's entries (term order, then paper, column, offset) and writes one
        row per term; returns each paper's length (its entries) and the terms written."""
        names, counts = [], []
        for term, entries in reader.execute("SELECT term, cnt FROM temp.build_terms"):
            names.append(term)
            counts.append(entries)
        ends = np.cumsum(np.asarray(counts, dtype=np.int64))
        total = int(ends[-1]) if len(ends) else 0
        lengths = np.zeros(watermark + 1, dtype=np.int64)
        batch: list[tuple[int, str, bytes, bytes]] = []
        size = read = 0
        pending = np.zeros((0, 2), dtype=np.int64)
        cursor = reader.execute(f"SELECT doc, {_COLUMN} FROM temp.build_entries")
        while True:
            rows = cursor.fetchmany(_READ_ROWS)
            entries = np.asarray(rows, dtype=np.int64).reshape(-1, 2)
            last = not rows
            start = read - len(pending)
            entries = np.concatenate([pending, entries]) if len(pending) else entries
            read += len(rows)
            lengths += np.bincount(entries[len(pending):, 0], minlength=len(lengths))[:len(lengths)]
            term_of = np.searchsorted(ends, np.arange(start, start + len(entries)), side="right")
            # The chunk's last term may go on in the next one: keep it for then.
            done = len(entries) if last else int(np.searchsorted(term_of, term_of[-1]))
            for row in _term_rows(build, names, term_of[:done], entries[:done]):
                batch.append(row)
                size += len(row[2]) + len(row[3]) + len(row[1])
                if size >= _WRITE_BYTES:
                    self._insert(batch)
                    batch, size = [], 0
            pending = entries[done:]
            if on_progress is not None:
                on_progress(read, total)
            if last:
                break
        self._insert(batch)
        if read != total:
            raise StoreError(f"the full-text index gave {read:,} entries where its terms count"
                             f" {total:,}; build again")
        return lengths, len(names)

    def _insert(self, rows: list[tuple[int, str, bytes, bytes]]) -> None:
        if not rows:
            return
        try:
            with transaction(self.conn):
                self.conn.executemany("INSERT INTO keyword_postings(build, term, pks, counts)"
                                      " VALUES (?, ?, ?, ?)", rows)
        except sqlite3.IntegrityError:
            raise StoreError("another build of the keyword postings is running") from None

    def _delete_builds_except(self, build: int) -> None:
        """Deletes other builds' rows a few at a time (a build's rows are ~1 GB at a million
        papers: one transaction would hold the write lock for long)."""
        while True:
            with transaction(self.conn):
                gone = self.conn.execute(
                    "DELETE FROM keyword_postings WHERE rowid IN (SELECT rowid FROM"
                    " keyword_postings WHERE build != ? LIMIT ?)", (build, _DELETE_ROWS)).rowcount
            if gone < _DELETE_ROWS:
                return

    # ------------------------------------------------------------------- tail
    def _tail_added(self) -> tuple[int, int]:
        with transaction(self.conn):
            tail = self.conn.execute("SELECT tail_watermark FROM keyword_index").fetchone()[0]
            rows = self.conn.execute(
                "SELECT pk, title, abstract, authors_text FROM papers WHERE pk > ?"
                " ORDER BY pk LIMIT ?", (tail, TAIL_PAPERS)).fetchall()
            if rows:
                self._put_tail([tuple(r) for r in rows], [])
                self.conn.execute("UPDATE keyword_index SET tail_watermark = ?,"
                                  " tail_version = tail_version + 1", (rows[-1][0],))
        return len(rows), len(rows)

    def _tail_changed(self) -> tuple[int, int]:
        with transaction(self.conn):
            logged = self.conn.execute("SELECT seq, pk FROM keyword_changed ORDER BY seq"
                                       " LIMIT ?", (TAIL_PAPERS,)).fetchall()
            if not logged:
                return 0, 0
            pks = sorted({pk for _, pk in logged})
            self._put_tail(self._papers(pks), pks)
            self.conn.execute("DELETE FROM keyword_changed WHERE seq <= ?", (logged[-1][0],))
            self.conn.execute("UPDATE keyword_index SET tail_version = tail_version + 1")
        return len(logged), len(pks)

    def _papers(self, pks: Sequence[int]) -> list[tuple[Any, ...]]:
        found: list[tuple[Any, ...]] = []
        for chunk in chunks(list(pks)):
            found += [tuple(r) for r in self.conn.execute(
                "SELECT pk, title, abstract, authors_text FROM papers"
                f" WHERE pk IN ({marks(chunk)})", chunk)]
        return found

    def _put_tail(self, rows: list[tuple[Any, ...]], replaced: Sequence[int]) -> None:
        """The tail's postings of these papers (pk, title, abstract, authors_text); papers in
        `replaced` lose their old tail rows, and those not among `rows` (deleted) get length 0."""
        for chunk in chunks(list(replaced)):
            self.conn.execute(f"DELETE FROM keyword_tail WHERE pk IN ({marks(chunk)})", chunk)
        counts, lengths = self._tokenize(rows)
        self.conn.executemany("INSERT INTO keyword_tail(term, pk, counts) VALUES (?, ?, ?)",
                              [(term, pk, pack_counts(np.asarray(c).reshape(1, FIELDS)))
                               for (term, pk), c in counts.items()])
        lengths.update({pk: 0 for pk in replaced if pk not in lengths})
        self.conn.executemany("INSERT OR REPLACE INTO keyword_tail_papers(pk, length)"
                              " VALUES (?, ?)", sorted(lengths.items()))

    def _tokenize(self, rows: list[tuple[Any, ...]]
                  ) -> tuple[dict[tuple[str, int], list[int]], dict[int, int]]:
        """Per (term, pk) the counts in each column, and each paper's length, as FTS5 indexes
        them: through a temporary FTS5 table with the index's own tokenizer."""
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tail_texts USING fts5("
                          f"title, abstract, authors_text, tokenize='{TOKENIZER}')")
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tail_entries"
                          " USING fts5vocab(temp, tail_texts, instance)")
        self.conn.execute("DELETE FROM temp.tail_texts")
        self.conn.executemany("INSERT INTO temp.tail_texts(rowid, title, abstract, authors_text)"
                              " VALUES (?, ?, ?, ?)", rows)
        counts: dict[tuple[str, int], list[int]] = {}
        lengths = {int(r[0]): 0 for r in rows}
        for term, pk, column in self.conn.execute(
                f"SELECT term, doc, {_COLUMN} FROM temp.tail_entries"):
            counts.setdefault((term, pk), [0] * FIELDS)[column] += 1
            lengths[pk] += 1
        self.conn.execute("DELETE FROM temp.tail_texts")
        return counts, lengths

    # ---------------------------------------------------------------- ranking
    def rank(self, terms: Sequence[Term], weights: Sequence[float], limit: int, first: int,
             tokenize: Callable[[Sequence[str]], list[list[str]]], fresh: Fresh,
             ) -> list[tuple[int, float]] | None:
        """(pk, bm25) of the best live papers, best first, or None if there is no build or a
        word is not exactly one token (FTS5 ranks then). `fresh(after)` ranks the papers past
        `after` in FTS5 and gives a function that counts a word's papers past it."""
        tokens = self._tokens([t.text for t in terms], tokenize)
        if tokens is None:
            return None
        wanted = sorted(set(tokens))
        word_of = dict(zip(tokens, (t.text for t in terms), strict=True))
        with self._snapshot():
            state = self.state()
            if state is None or not state.build:
                return None
            main, tail = self._lists(state, wanted)
            rows, tokens_total = averages(self.conn)
            ranked_fresh, fresh_docs = (fresh(state.tail_watermark) if self._newest() >
                                        state.tail_watermark else ([], lambda _: 0))
            changed = self._changed(state)
            lists = {tok: Postings.join([main[tok].without(changed), tail[tok]]) for tok in wanted}
            df = {tok: len(lists[tok]) + fresh_docs(word_of[tok]) for tok in wanted}
        average = tokens_total / rows if rows else 0.0
        pks, scores = bm25([(lists[tok].since(first), idf(rows, df[tok]) * max(1, t.weight))
                            for tok, t in zip(tokens, terms, strict=True)], weights, average)
        return self._best_live(pks, scores, ranked_fresh, limit)

    @staticmethod
    def _tokens(words: Sequence[str], tokenize: Callable[[Sequence[str]], list[list[str]]]
                ) -> list[str] | None:
        """Each word's one index token, None if a word is not exactly one token."""
        tokens = tokenize(words)
        return None if any(len(t) != 1 for t in tokens) else [t[0] for t in tokens]

    def _snapshot(self) -> contextlib.AbstractContextManager[None]:
        """One read transaction around the reads of a ranking (unless one is open)."""
        if self.conn.in_transaction:
            return contextlib.nullcontext()
        return _ReadTransaction(self.conn)

    def _lists(self, state: IndexState, tokens: Sequence[str]
               ) -> tuple[dict[str, Postings], dict[str, Postings]]:
        """The build's and the tail's postings of these tokens."""
        lengths = self._lengths(state)
        main = {tok: Postings.empty() for tok in tokens}
        for term, pks, counts in self.conn.execute(
                "SELECT term, pks, counts FROM keyword_postings WHERE build = ?"
                f" AND term IN ({marks(tokens)})", (state.build, *tokens)):
            ids = np.frombuffer(pks, dtype="<i4").astype(np.int64)
            main[term] = Postings(ids, unpack_counts(counts), lengths[ids])
        found: dict[str, list[tuple[int, bytes, int]]] = {tok: [] for tok in tokens}
        for term, pk, counts, length in self.conn.execute(
                "SELECT t.term, t.pk, t.counts, p.length FROM keyword_tail t"
                " JOIN keyword_tail_papers p ON p.pk = t.pk"
                f" WHERE t.term IN ({marks(tokens)})", tokens):
            found[term].append((pk, counts, length))
        tail = {}
        for tok, items in found.items():
            tail[tok] = Postings(np.asarray([i[0] for i in items], np.int64),
                                 unpack_counts(b"".join(i[1] for i in items)),
                                 np.asarray([i[2] for i in items], np.int64)
                                 ) if items else Postings.empty()
        return main, tail


class _ReadTransaction:
    """BEGIN ... COMMIT around reads: the lists, the tail and the counts of one snapshot."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN")

    def __exit__(self, *exc: object) -> None:
        self.conn.execute("COMMIT")


def _term_rows(build: int, names: Sequence[str], term_of: np.ndarray, entries: np.ndarray
               ) -> Iterator[tuple[int, str, bytes, bytes]]:
    """(build, term, pks, counts) rows from index entries in term, paper, column order."""
    if not len(entries):
        return
    docs, columns = entries[:, 0], entries[:, 1]
    new_pair = np.ones(len(docs), dtype=bool)
    new_pair[1:] = (term_of[1:] != term_of[:-1]) | (docs[1:] != docs[:-1])
    starts = np.flatnonzero(new_pair)
    pair = np.cumsum(new_pair) - 1
    counts = np.bincount(pair * FIELDS + columns, minlength=len(starts) * FIELDS
                         ).reshape(-1, FIELDS)
    pair_terms, pair_docs = term_of[starts], docs[starts]
    bounds = np.flatnonzero(np.r_[True, pair_terms[1:] != pair_terms[:-1], True])
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        yield (build, names[int(pair_terms[a])], pair_docs[a:b].astype("<i4").tobytes(),
               pack_counts(counts[a:b]))
