"""Papers in the SQLite store: new papers in one executemany per table, the keyword index beside them, and the bulk load."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.store import papers
from papersift.store.sqlite import bulk
from papersift.store.sqlite.db import SQLiteDatabase
from papersift.store.sqlite.fulltext import FulltextBuilder, adopt_index, fulltext_deferred


class Papers(papers.Papers):
    """Papers, with the keyword index beside them and the bulk load (contract: store.papers.Papers)."""

    db: SQLiteDatabase

    def _pending(self) -> dict[str, Any]:
        # Set while a bulk load builds these indexes, or after one was killed.
        return {"full_text_index_pending": fulltext_deferred(self.db.conn), "indexes_pending":
                self.db.column("SELECT name FROM deferred_indexes ORDER BY name")}

    @contextlib.contextmanager
    def bulk_load(self, wanted: bool = True) -> Iterator[bool]:
        """Into a store with no papers (if `wanted`), or to finish a load cut short (by an error or
        a kill: the store stays marked): the full-text index, built by a helper process from the
        rows the writer commits (fulltext.py), and the indexes a load does not use (bulk.py)."""
        if not bulk.defer_indexes(self.db.conn, wanted):
            yield False
            return
        with contextlib.closing(FulltextBuilder(self.db.path)) as builder:
            with bulk.held_lines(self.db.conn) as self.lines_table:
                try:
                    yield True
                finally:
                    self.lines_table = Papers.lines_table
            builder.request_finish()
            bulk.build_deferred_indexes(self.db.conn)  # while the helper indexes the last papers
            watermark, last_seq = builder.finish()
            adopt_index(self.db.path, builder.scratch, watermark, last_seq)

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        # Ids as SQLite would assign them (max + 1, no AUTOINCREMENT): no reading the new rows back.
        next_id = self.db.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM authors").fetchone()[0]
        rows = [(next_id + i, name, slug) for i, (name, slug) in enumerate(new)]
        self.db.conn.executemany("INSERT INTO authors(id, name, slug) VALUES (?, ?, ?)", rows)
        return {name: author_id for author_id, name, _ in rows}

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> set[str]:
        # One writer at a time (BEGIN IMMEDIATE): every paper goes in.
        first_pk = self.db.value("SELECT coalesce(max(pk), 0) + 1 FROM papers")
        self.db.insert_rows("papers", papers.COLUMNS[1:], (), rows)
        self.db.index_papers("pk >= ?", (first_pk,))
        return {row[0] for row in rows}

    def _dumped(self) -> dict[str, str]:
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_terms"
                        " USING fts5vocab(main, papers_fts, col)")
        return {
            "papers_fts": "SELECT rowid, * FROM papers_fts ORDER BY rowid",
            # What the index holds (the row above is read from the papers it points at).
            "papers_fts_terms": "SELECT term, col, doc, cnt FROM temp.papers_fts_terms"
                                " ORDER BY term, col",
            # The indexes too: a bulk load drops some and builds them again (bulk.py).
            "indexes": "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index'"
                       " ORDER BY name",
        }
