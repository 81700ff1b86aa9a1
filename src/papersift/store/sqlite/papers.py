"""Papers in the SQLite store: batch upsert with merge and duplicate linking, and the reads stages need."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.records import PaperRecord
from papersift.records.merge import merge
from papersift.records.prepare import PreparedRecord, version_rows
from papersift.store.papers import DUMPED, PaperReads
from papersift.store.sqlite import bulk
from papersift.store.sqlite.db import chunks, transaction
from papersift.store.sqlite.fulltext import FulltextBuilder, adopt_index, fulltext_deferred
from papersift.store.values import UpsertReport


class Papers(PaperReads):
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

    # ---------------------------------------------------------------- writes
    def upsert_papers(self, items: Sequence[PreparedRecord]) -> UpsertReport:
        """Insert or merge a batch in one transaction (see PapersStore.upsert_papers)."""
        report = UpsertReport()
        if not items:
            return report
        with transaction(self.conn):
            self._upsert(items, report)
        return report

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

    def _upsert(self, items: Sequence[PreparedRecord], report: UpsertReport) -> None:
        lines = [(p.line_key, p.id, p.source, p.record_hash) for p in items if p.line_key is not None]
        if lines:
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {self.lines_table}"
                "(line_key, paper_id, source, record_hash) VALUES (?,?,?,?)", lines)
        seen = self._source_hashes([(p.source, p.id) for p in items])
        todo = [p for p in items if seen.get((p.source, p.id)) != p.record_hash]
        report.unchanged += len(items) - len(todo)
        if not todo:
            return
        _, author_ids, merges, fresh, repeats = self._plan(todo)
        # Papers new to the store go in with one executemany per table (the common bulk case);
        # a paper already stored, or repeated within the batch, is merged one by one.
        for item in merges:
            self._merge(item, author_ids, report)
        self._insert_papers(fresh, author_ids, report)
        for item in repeats:
            self._merge(item, author_ids, report)

        self.conn.executemany(
            "INSERT INTO paper_sources(paper_id, source, record_hash, extras) VALUES (?,?,?,?)"
            " ON CONFLICT(paper_id, source) DO UPDATE SET"
            " record_hash = excluded.record_hash, extras = excluded.extras",
            [(p.id, p.source, p.record_hash, p.extras_json) for p in todo],
        )

    def _merge(self, item: PreparedRecord, author_ids: dict[str, int], report: UpsertReport
               ) -> None:
        """Merge one record into its stored paper and count it as updated or unchanged."""
        record = item.record()
        row = self._row(record.id)
        changed = self._merge_paper(row, record, author_ids)
        old_extras = self.conn.execute(
            "SELECT extras FROM paper_sources WHERE paper_id = ? AND source = ?",
            (record.id, record.source),
        ).fetchone()
        if changed or (old_extras is not None and old_extras[0] != item.extras_json):
            report.updated.append(record.id)
        else:
            report.unchanged += 1
        self._add_versions(record)

    def _source_hashes(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        by_source: dict[str, list[str]] = {}
        for source, paper_id in keys:
            by_source.setdefault(source, []).append(paper_id)
        for source, ids in by_source.items():
            for chunk in chunks(ids):
                marks = ",".join("?" * len(chunk))
                for paper_id, record_hash in self.conn.execute(
                    f"SELECT paper_id, record_hash FROM paper_sources"
                    f" WHERE source = ? AND paper_id IN ({marks})", (source, *chunk)
                ):
                    found[(source, paper_id)] = record_hash
        return found

    def _current_rows(self, ids: list[str]) -> dict[str, sqlite3.Row]:
        rows: dict[str, sqlite3.Row] = {}
        for chunk in chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT * FROM papers WHERE id IN ({marks})", chunk):
                rows[row["id"]] = row
        return rows

    def _row(self, paper_id: str) -> sqlite3.Row:
        return self.conn.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        """Store these (name, slug) authors; their ids by name."""
        # Explicit ids are what SQLite would assign (max + 1, no AUTOINCREMENT), and save
        # reading the new rows back.
        next_id = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM authors").fetchone()[0]
        rows = [(next_id + i, name, slug) for i, (name, slug) in enumerate(new)]
        self.conn.executemany("INSERT INTO authors(id, name, slug) VALUES (?, ?, ?)", rows)
        return {name: author_id for author_id, name, _ in rows}

    def _insert_papers(
        self, items: list[PreparedRecord], author_ids: dict[str, int], report: UpsertReport
    ) -> None:
        """Insert papers new to the store, linking each to an earlier paper it duplicates."""
        if not items:
            return
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

    def _write_people_and_categories(
        self, record: PaperRecord, author_ids: dict[str, int]
    ) -> None:
        names = [n for n in record.authors if n]
        self.conn.executemany(
            "INSERT INTO paper_authors(paper_id, position, author_id) VALUES (?,?,?)",
            [(record.id, i, author_ids[name]) for i, name in enumerate(names)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO paper_categories(paper_id, category, position) VALUES (?,?,?)",
            [(record.id, c, i) for i, c in enumerate(dict.fromkeys(record.categories))],
        )

    def _merge_paper(
        self, row: sqlite3.Row, record: PaperRecord, author_ids: dict[str, int]
    ) -> bool:
        """Merge a record into the stored paper; True if anything visible changed."""
        change = merge(row, record)
        if change.changed:
            assignments = ", ".join(f"{k} = ?" for k in change.changed)
            self.conn.execute(f"UPDATE papers SET {assignments} WHERE id = ?",
                              (*change.changed.values(), record.id))
        categories_change = bool(change.wins and record.categories
                                 and record.categories != self._categories(record.id))
        if change.authors_change:
            self.conn.execute("DELETE FROM paper_authors WHERE paper_id = ?", (record.id,))
        if categories_change:
            self.conn.execute("DELETE FROM paper_categories WHERE paper_id = ?", (record.id,))
        if change.authors_change or categories_change:
            self._write_people_and_categories(
                PaperRecord(
                    id=record.id, title="", abstract="", source=record.source,
                    authors=record.authors if change.authors_change else [],
                    categories=record.categories if categories_change else [],
                ),
                author_ids,
            )
        return change.visible or categories_change

    def _categories(self, paper_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT category FROM paper_categories WHERE paper_id = ? ORDER BY position",
            (paper_id,))]

    def _add_versions(self, record: PaperRecord) -> None:
        self.conn.executemany(
            "INSERT INTO paper_versions(paper_id, version, date) VALUES (?,?,?)"
            " ON CONFLICT(paper_id, version) DO UPDATE SET date = coalesce(date, excluded.date)",
            version_rows(record),
        )

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            **DUMPED,
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


