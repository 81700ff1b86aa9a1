"""A bulk load into an empty store: the index work it leaves to its end, and finishing it after a kill."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from papersift.clock import utc_now
from papersift.store.sql import marks
from papersift.store.sqlite.db import transaction
from papersift.store.sqlite.fulltext import fulltext_deferred

# Indexes that no query of a load uses (duplicates are found by DOI and title key, papers and
# authors by their unique keys). Built row by row, they cost a load's writer ~a fifth of
# its CPU; built at the end from the finished tables, a tenth. (papers_duplicate_of is left
# out: it holds few rows, and building it at the end would cost a scan of papers.)
DEFERRABLE_INDEXES = ("papers_sort_date", "papers_category_date", "papers_id_date",
                      "paper_authors_author", "paper_categories_category")


def defer_indexes(conn: sqlite3.Connection, wanted: bool = True) -> bool:
    """Mark the store's indexes as built after the load, if `wanted` and the store has no
    papers; True if they now are (or still were, after an interrupted load)."""
    with transaction(conn):
        if fulltext_deferred(conn):
            return True
        if not wanted or conn.execute("SELECT 1 FROM papers LIMIT 1").fetchone():
            return False
        conn.execute("INSERT INTO fulltext_deferred(id, started_at) VALUES (1, ?)", (utc_now(),))
        for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index'"
                f" AND name IN ({marks(DEFERRABLE_INDEXES)})", DEFERRABLE_INDEXES).fetchall():
            conn.execute("INSERT INTO deferred_indexes(name, sql) VALUES (?, ?)", (name, sql))
            conn.execute(f'DROP INDEX "{name}"')
    return True


def build_deferred_indexes(conn: sqlite3.Connection) -> list[str]:
    """Build the indexes a bulk load dropped; returns their names."""
    with transaction(conn):
        rows = conn.execute("SELECT name, sql FROM deferred_indexes ORDER BY name").fetchall()
        for _, sql in rows:
            conn.execute(sql)
        conn.execute("DELETE FROM deferred_indexes")
    return [name for name, _ in rows]


@contextlib.contextmanager
def held_lines(conn: sqlite3.Connection) -> Iterator[str]:
    """Yields a temp table for the keys of lines read (Papers.current_lines), written to
    source_lines in key order when leaving: line keys are hashes, and written batch by batch they
    land all over source_lines, whose pages every commit writes again (~6% of a bulk load's
    writer CPU). A killed load loses them, costing only speed: the next run parses them again."""
    conn.execute("DROP TABLE IF EXISTS temp.held_lines")
    conn.execute("CREATE TEMP TABLE held_lines"
                 "(line_key INTEGER PRIMARY KEY, paper_id TEXT, source TEXT, record_hash TEXT)")
    try:
        yield "temp.held_lines"
        with transaction(conn):
            conn.execute("INSERT OR REPLACE INTO source_lines"
                         " SELECT * FROM temp.held_lines ORDER BY line_key")
    finally:
        conn.execute("DROP TABLE temp.held_lines")
