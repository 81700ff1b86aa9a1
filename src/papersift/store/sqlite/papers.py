"""Papers in the SQLite store: new papers in one executemany per table, the keyword index beside them, and the bulk load."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.records.prepare import PreparedRecord
from papersift.store import papers
from papersift.store.sqlite import bulk
from papersift.store.sqlite.db import chunks
from papersift.store.sqlite.fulltext import FulltextBuilder, adopt_index, fulltext_deferred
from papersift.store.values import UpsertReport


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

    def current_lines(self, keys: Sequence[int]) -> set[int]:
        """The line keys whose record is still what its source last gave for its paper.

        Such a line would parse to a record equal to the stored one, so it is unchanged
        without parsing it (the check is as exact as comparing record hashes).
        """
        found: set[int] = set()
        for chunk in chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self.conn.execute(
                f"SELECT l.line_key FROM source_lines l JOIN paper_sources s"
                f" ON s.paper_id = l.paper_id AND s.source = l.source"
                f" AND s.record_hash = l.record_hash WHERE l.line_key IN ({marks})", chunk))
        return found

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

    def _insert_papers(self, items: list[PreparedRecord], author_ids: dict[str, int],
                       report: UpsertReport) -> list[PreparedRecord]:
        # One writer at a time (BEGIN IMMEDIATE): every paper goes in, none to merge instead.
        if not items:
            return []
        originals = self._duplicated(items)
        report.duplicates += [(p.id, originals[p.id]) for p in items if p.id in originals]
        report.new += [p.id for p in items]
        rows = [(*p.paper_row, originals.get(p.id), p.sort_date) for p in items]
        people = [(p.id, i, author_ids[name]) for p in items for i, name in enumerate(p.authors)]
        categories = [row for p in items for row in p.category_rows]
        versions = [row for p in items for row in p.version_rows]
        first_pk = self.conn.execute("SELECT coalesce(max(pk), 0) + 1 FROM papers").fetchone()[0]
        self.conn.executemany(
            "INSERT INTO papers(id, version, text_source, title, abstract, authors_text,"
            " primary_category, submitted, updated, announced, doi, comment, journal_ref, license,"
            " links, norm_key, duplicate_of, sort_date) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        if not fulltext_deferred(self.conn):  # else the parallel build indexes them
            self.conn.execute(
                "INSERT INTO papers_fts(rowid, title, abstract, authors_text)"
                " SELECT pk, title, abstract, authors_text FROM papers WHERE pk >= ?", (first_pk,))
        self.conn.executemany(
            "INSERT INTO paper_authors(paper_id, position, author_id) VALUES (?,?,?)", people)
        self.conn.executemany(
            "INSERT INTO paper_categories(paper_id, category, position) VALUES (?,?,?)",
            categories)
        self.conn.executemany(
            "INSERT OR IGNORE INTO paper_versions(paper_id, version, date) VALUES (?,?,?)",
            versions)
        return []

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
