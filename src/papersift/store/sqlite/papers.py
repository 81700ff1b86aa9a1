"""Papers in the SQLite store: new papers in one executemany per table, the keyword index beside them, and the bulk load."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.store import papers
from papersift.store.sqlite import bulk
from papersift.store.sqlite.fulltext import FulltextBuilder, adopt_index, fulltext_deferred


class Papers(papers.Papers):
    """Everything about papers, authors, categories, versions and sources (contract: PapersStore)."""

    @property
    def conn(self) -> Any:
        return self.db.conn

    @property
    def path(self) -> Any:
        return self.db.path

    def _pending(self) -> dict[str, Any]:
        # Set while a bulk load builds these indexes, or after one was killed.
        return {"full_text_index_pending": fulltext_deferred(self.conn),
                "indexes_pending": bulk.deferred_indexes(self.conn)}

    # Where the keys of lines read go: a bulk load holds them back (see bulk.held_lines).
    lines_table = "source_lines"

    @contextlib.contextmanager
    def bulk_load(self, wanted: bool = True) -> Iterator[bool]:
        """Into a store with no papers (if `wanted`), or to finish a load that was cut short:
        the full-text index is built by a helper process from the rows the writer commits
        (fulltext.py), and the indexes a load does not use at its end (bulk.py).

        Leaving normally builds them. Leaving by an error (or being killed) leaves the store
        marked, so that the next ingest finishes them.
        """
        if not bulk.defer_indexes(self.conn, wanted):
            yield False
            return
        builder = FulltextBuilder(self.path)
        try:
            with bulk.held_lines(self.conn) as self.lines_table:
                try:
                    yield True
                finally:
                    self.lines_table = Papers.lines_table
            builder.request_finish()
            bulk.build_deferred_indexes(self.conn)  # while the helper indexes the last papers
            watermark, last_seq = builder.finish()
            adopt_index(self.path, builder.scratch, watermark, last_seq)
        finally:
            builder.close()

    # ---------------------------------------------------------------- writes
    def _keep_lines(self, lines: Sequence[tuple[int, str, str, str]]) -> None:
        if lines:
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {self.lines_table}"
                "(line_key, paper_id, source, record_hash) VALUES (?,?,?,?)", lines)

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        # Explicit ids are what SQLite would assign (max + 1, no AUTOINCREMENT), and save
        # reading the new rows back.
        next_id = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM authors").fetchone()[0]
        rows = [(next_id + i, name, slug) for i, (name, slug) in enumerate(new)]
        self.conn.executemany("INSERT INTO authors(id, name, slug) VALUES (?, ?, ?)", rows)
        return {name: author_id for author_id, name, _ in rows}

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> set[str]:
        # One writer at a time (BEGIN IMMEDIATE): every paper goes in.
        first_pk = self.db.value("SELECT coalesce(max(pk), 0) + 1 FROM papers")
        self.db.insert_rows("papers", papers.COLUMNS[1:], (), rows)
        if not fulltext_deferred(self.conn):  # else the parallel build indexes them
            self.conn.execute(
                "INSERT INTO papers_fts(rowid, title, abstract, authors_text)"
                " SELECT pk, title, abstract, authors_text FROM papers WHERE pk >= ?", (first_pk,))
        return {row[0] for row in rows}

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            **papers.DUMPED,
            "papers_fts": "SELECT rowid, * FROM papers_fts ORDER BY rowid",
            # What the index holds (the row above is read from the papers it points at).
            "papers_fts_terms": "SELECT term, col, doc, cnt FROM temp.papers_fts_terms"
                                " ORDER BY term, col",
        }
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_terms"
                          " USING fts5vocab(main, papers_fts, col)")
        dump = {name: [tuple(r) for r in self.conn.execute(sql)] for name, sql in tables.items()}
        # The indexes too: a bulk load drops some and builds them again (bulk.py).
        dump["indexes"] = [tuple(r) for r in self.conn.execute(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")]
        return dump
