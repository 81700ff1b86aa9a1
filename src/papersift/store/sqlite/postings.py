"""papersift's own keyword postings on SQLite: built from the FTS5 index, a tail of papers added or changed since, bm25 over both in numpy.

FTS5's bm25() decodes every matching row's positions and column sizes: ~1 µs a match, the
largest part of a hybrid query at a million papers. These lists keep, per term, the papers and
the term's count in each column, so a query reads one blob per word and scores whole lists at
once, with FTS5's formula and statistics: the same scores (store/postings.py). Queries these
lists cannot answer (phrases, prefixes, operators, filters) stay with FTS5, which also ranks
the papers added after the last tail update (a seek past the tail's watermark), merged.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import Any

import numpy as np

from papersift.store.postings import (
    BUILT_AS_OF_SQL,
    FIELDS,
    Built,
    Progress,
    StoredPostings,
    pack_counts,
)
from papersift.store.sql import Database, marks
from papersift.store.sqlite.db import SQLiteDatabase
from papersift.store.sqlite.fulltext import fulltext_deferred
from papersift.store.values import StoreError

TOKENIZER = "porter unicode61 remove_diacritics 2"  # papers_fts's (migration 0001)
_FIELDS = ("title", "abstract", "authors_text")  # papers_fts's columns
_COLUMN = "CASE col WHEN 'title' THEN 0 WHEN 'abstract' THEN 1 ELSE 2 END"
_READ_ROWS = 1_000_000   # index entries a build reads at a time (~16 MB as numbers)
_WRITE_BYTES = 64 << 20  # postings a build writes per transaction


def averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens) of papers_fts, from its averages record: the N and mean length bm25() uses."""
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


def fts5_tokens(db: Database, table: str, columns: Sequence[str],
                rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """(rowid, column, term) of each token of these rows ((rowid, *texts)), in order, as the index
    tokenizes them: through a temp FTS5 table `table` with the index's own tokenizer, so no stemmer
    has to agree with SQLite's (the temp schema is private: read-only connections can too)."""
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table} USING fts5("
               f"{', '.join(columns)}, tokenize='{TOKENIZER}')")
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab"
               f" USING fts5vocab(temp, {table}, instance)")
    db.execute(f"DELETE FROM temp.{table}")
    db.executemany(f"INSERT INTO temp.{table}(rowid, {', '.join(columns)})"
                   f" VALUES (?, {marks(columns)})", rows)
    found = db.rows(f"SELECT doc, col, term FROM temp.{table}_vocab ORDER BY doc, col, offset")
    db.execute(f"DELETE FROM temp.{table}")
    return found


class KeywordPostings(StoredPostings):
    """The postings' build from the FTS5 index, tail and ranking (used by Search)."""

    db: SQLiteDatabase

    def build(self, on_progress: Progress | None = None) -> dict[str, Any]:
        if fulltext_deferred(self.db.conn):
            raise StoreError("a bulk load is still building the full-text index: build the"
                             " keyword postings when it has finished")
        return super().build(on_progress)

    def _write_build(self, build: int, on_progress: Progress | None) -> Built:
        """Copies the FTS5 index, as of one snapshot of a connection of its own."""
        with closing(sqlite3.connect(f"file:{self.db.location}?mode=ro", uri=True,
                                     isolation_level=None, check_same_thread=False)) as reader:
            reader.execute("CREATE VIRTUAL TABLE temp.build_terms"
                           " USING fts5vocab(main, papers_fts, row)")
            reader.execute("CREATE VIRTUAL TABLE temp.build_entries"
                           " USING fts5vocab(main, papers_fts, instance)")
            reader.execute("BEGIN")  # one snapshot: the terms, the entries, the watermark
            since, version, watermark = reader.execute(BUILT_AS_OF_SQL).fetchone()
            papers = averages(reader)[0]
            lengths, terms = self._write_postings(reader, build, watermark, on_progress)
            reader.execute("COMMIT")
        return Built(since, version, watermark, papers, lengths, terms)

    def _write_postings(self, reader: sqlite3.Connection, build: int, watermark: int,
                        on_progress: Progress | None) -> tuple[np.ndarray, int]:
        """Reads the index's entries (term order, then paper, column, offset) and writes one
        row per term; returns each paper's length (its entries) and the terms written."""
        vocabulary = reader.execute("SELECT term, cnt FROM temp.build_terms").fetchall()
        names = [term for term, _ in vocabulary]
        ends = np.cumsum(np.asarray([entries for _, entries in vocabulary], dtype=np.int64))
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

    def _insert(self, rows: Sequence[tuple[int, str, bytes, bytes]]) -> None:
        if not rows:
            return
        try:
            super()._insert(rows)
        except sqlite3.IntegrityError:
            raise StoreError("another build of the keyword postings is running") from None

    def _put_tail(self, pks: list[int], replaced: bool) -> None:
        among, params = self.db.any_of("pk", pks, "bigint")
        if replaced:
            self.db.execute(f"DELETE FROM keyword_tail WHERE {among}", params)
        rows = [tuple(r) for r in self.db.rows(
            f"SELECT pk, title, abstract, authors_text FROM papers WHERE {among}", params)]
        # Per (term, pk) its counts in each column, and each paper's length, as FTS5 indexes them.
        counts: dict[tuple[str, int], list[int]] = {}
        lengths = dict.fromkeys(pks, 0)
        for pk, column, term in fts5_tokens(self.db, "tail_texts", _FIELDS, rows):
            counts.setdefault((term, pk), [0] * FIELDS)[_FIELDS.index(column)] += 1
            lengths[pk] += 1
        self.db.executemany("INSERT INTO keyword_tail(term, pk, counts) VALUES (?, ?, ?)",
                            [(term, pk, pack_counts(np.asarray(c).reshape(1, FIELDS)))
                             for (term, pk), c in counts.items()])
        self.db.executemany("INSERT OR REPLACE INTO keyword_tail_papers(pk, length)"
                            " VALUES (?, ?)", sorted(lengths.items()))

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
