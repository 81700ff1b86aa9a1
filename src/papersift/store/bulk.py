"""A bulk load into an empty store: the index work it leaves to its end, and finishing it after a kill."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from papersift.store.db import transaction, utc_now
from papersift.store.fulltext import FulltextBuilder, adopt_index, fulltext_deferred

# Indexes that no query of a load uses (duplicates are found by DOI and title key, papers and
# authors by their unique keys). Built row by row, they cost a load's writer ~a fifth of
# its CPU; built at the end from the finished tables, a tenth. (papers_duplicate_of is left
# out: it holds few rows, and building it at the end would cost a scan of papers.)
DEFERRABLE_INDEXES = (
    "papers_sort_date", "papers_category_date", "papers_id_date", "paper_authors_author",
    "paper_categories_category",
)


def deferred_indexes(conn: sqlite3.Connection) -> list[str]:
    """The indexes a bulk load has dropped and not yet built again."""
    return [r[0] for r in conn.execute("SELECT name FROM deferred_indexes ORDER BY name")]


class BulkLoadStore:
    """Mixin of Store: loading many papers into an empty store with two processes' help.

    A store with no papers has empty indexes, so a load into it may build them afterwards:
    the full-text index in a helper process, from the rows the writer commits (see
    store.fulltext), and the indexes in DEFERRABLE_INDEXES at the end, from the tables.
    """

    conn: sqlite3.Connection
    path: Path
    lines_table: str

    @contextlib.contextmanager
    def bulk_load(self, wanted: bool = True) -> Iterator[bool]:
        """Within, the indexes are built as above if `wanted` and the store has no papers,
        or if such a load was interrupted (its work is then finished); yields whether they are.

        Leaving normally builds them. Leaving by an error (or being killed) leaves the store
        marked, so that the next ingest finishes them.
        """
        if not self.defer_indexes(wanted):
            yield False
            return
        builder = FulltextBuilder(self.path)
        try:
            with self._lines_held():
                yield True
            builder.request_finish()
            self.build_deferred_indexes()  # while the helper indexes the last papers
            watermark, last_seq = builder.finish()
            adopt_index(self.path, builder.scratch, watermark, last_seq)
        finally:
            builder.close()

    @contextlib.contextmanager
    def _lines_held(self) -> Iterator[None]:
        """Within, the keys of lines read (papers.PapersStore.current_lines) are appended to a
        table of this connection's, and written to source_lines in key order when leaving.

        Line keys are hashes: written batch by batch, they land all over source_lines, whose
        pages every commit then writes again (~6% of a bulk load's writer CPU). If the load
        is killed they are lost, which costs only speed: the next run parses those lines.
        """
        self.conn.execute("DROP TABLE IF EXISTS temp.held_lines")
        self.conn.execute("CREATE TEMP TABLE held_lines"
                          "(line_key INTEGER, paper_id TEXT, source TEXT, record_hash TEXT)")
        self.lines_table = "temp.held_lines"
        try:
            yield
            with transaction(self.conn):
                # A key read twice keeps its last record, as INSERT OR REPLACE in order would.
                self.conn.execute("INSERT OR REPLACE INTO source_lines"
                                  " SELECT * FROM temp.held_lines ORDER BY line_key, rowid")
        finally:
            self.lines_table = "source_lines"
            self.conn.execute("DROP TABLE temp.held_lines")

    def defer_indexes(self, wanted: bool = True) -> bool:
        """Mark the store's indexes as built after the load, if `wanted` and the store has no
        papers; True if they now are (or still were, after an interrupted load)."""
        with transaction(self.conn):
            if fulltext_deferred(self.conn):
                return True
            if not wanted or self.conn.execute("SELECT 1 FROM papers LIMIT 1").fetchone():
                return False
            self.conn.execute(
                "INSERT INTO fulltext_deferred(id, started_at) VALUES (1, ?)", (utc_now(),))
            marks = ",".join("?" * len(DEFERRABLE_INDEXES))
            for name, sql in self.conn.execute(
                    f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name IN ({marks})",
                    DEFERRABLE_INDEXES).fetchall():
                self.conn.execute("INSERT INTO deferred_indexes(name, sql) VALUES (?, ?)",
                                  (name, sql))
                self.conn.execute(f'DROP INDEX "{name}"')
        return True

    def build_deferred_indexes(self) -> list[str]:
        """Build the indexes a bulk load dropped; returns their names."""
        with transaction(self.conn):
            rows = self.conn.execute("SELECT name, sql FROM deferred_indexes ORDER BY name"
                                     ).fetchall()
            for _, sql in rows:
                self.conn.execute(sql)
            self.conn.execute("DELETE FROM deferred_indexes")
        return [name for name, _ in rows]
