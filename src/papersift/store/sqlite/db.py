"""The SQLite connection: WAL mode, numbered migrations applied on open, transactions, and the dialect layer over it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from papersift.clock import utc_now
from papersift.store.sql import Database, check_schema, read_migrations

PAGE_SIZE = 8192  # bytes, for databases created from now on
# A connection's page cache in KiB (the web server opens one per thread). The OS caches the
# file's pages as well: 64 MB here put the serving process at 604 MB at 98,742 papers, 16 MB
# at 553, with search, ingest and the keyword build as fast (docs/benchmarks.md, 2026-12-05).
CACHE_KIB = 16_384

migrations = partial(read_migrations, "papersift.store.sqlite.migrations")


def connect(path: Path | str, readonly: bool = False) -> sqlite3.Connection:
    """Open the database, migrating it to the newest schema unless read-only."""
    path = Path(path)
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None,
                               check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    conn.row_factory = sqlite3.Row
    for pragma in ("busy_timeout = 30000", f"cache_size = -{CACHE_KIB}", "temp_store = MEMORY"):
        conn.execute(f"PRAGMA {pragma}")
    if not readonly:
        # Only a new database takes page_size (a WAL database keeps its first one). A bulk load's
        # writer needs ~10% less CPU than with 4 KiB pages (fewer splits, fewer pages to write).
        for pragma in (f"page_size = {PAGE_SIZE}", "journal_mode = WAL", "synchronous = NORMAL"):
            conn.execute(f"PRAGMA {pragma}")
        migrate(conn)
    return conn


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations the database lacks, each in its own transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations ("
                 " number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    applied = {row[0] for row in conn.execute("SELECT number FROM schema_migrations")}
    known = migrations()
    check_schema(applied, known)
    for number, name, sql in known:
        if number not in applied:
            try:
                # BEGIN in the script: executescript commits a transaction it finds open.
                conn.executescript(f"BEGIN IMMEDIATE;\n{sql}\n;")
                conn.execute("INSERT INTO schema_migrations(number, name, applied_at)"
                             " VALUES (?, ?, ?)", (number, name, utc_now()))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error (including KeyboardInterrupt)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """Several reads that see one committed state: a deferred transaction (WAL keeps its
    snapshot from the first read), or the transaction already open."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


class SQLiteDatabase(Database):
    """The dialect layer over one SQLite connection."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn, self.path, self.location = conn, path, str(path)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        return self.conn.execute(sql, params).fetchall()

    def dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params)]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, params).rowcount

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def transaction(self) -> Any:
        return transaction(self.conn)

    def snapshot(self) -> Any:
        return snapshot(self.conn)

    def commits_seen(self) -> tuple[int, int]:
        # Moves with another connection's commit (PRAGMA data_version) or a change on this one.
        return self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes

    def any_of(self, column: str, values: Sequence[Any], kind: str = "text"
               ) -> tuple[str, list[Any]]:
        # One JSON parameter instead of a '?' per value: no limit on how many, one plan.
        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def joined(self, expr: str, separator: str, source: str, order: str) -> str:
        # group_concat keeps the order of its (ordered) subquery.
        return (f"(SELECT group_concat(joined_value, {separator}) FROM"
                f" (SELECT {expr} AS joined_value {source} ORDER BY {order}))")

    def caseless(self, expr: str) -> str:
        # A collation, not lower(): no function call a row (LIKE ignores ASCII case anyway).
        return f"{expr} COLLATE NOCASE"

    def indexed(self, table: str, index: str) -> str | None:
        return f"{table} INDEXED BY {index}"

    def rows_copied(self, table: str, rows: Sequence[Sequence[Any]], serial: str | None) -> None:
        if table == "papers" and rows:
            self.index_papers(*self.any_of("pk", [row[0] for row in rows], "bigint"))

    def index_papers(self, where: str, params: Sequence[Any]) -> None:
        """Put the new papers matching `where` in the keyword index (no trigger does it: bulk loads
        index on their own), unless a parallel build owns the index (fulltext.fulltext_deferred)."""
        if self.value("SELECT 1 FROM fulltext_deferred") is None:
            self.execute("INSERT INTO papers_fts(rowid, title, abstract, authors_text)"
                         f" SELECT pk, title, abstract, authors_text FROM papers WHERE {where}",
                         params)
