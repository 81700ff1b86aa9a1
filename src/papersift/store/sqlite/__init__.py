"""The SQLite backend: one file in WAL mode, each concern's queries in a module of its own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from papersift.plugins import Plugins, StorePlugin
from papersift.store.contracts import SQLStore
from papersift.store.sqlite.db import SQLiteDatabase, connect
from papersift.store.sqlite.papers import Papers
from papersift.store.sqlite.search import Search


class SQLiteStore(SQLStore):
    """One SQLite database (contract: store.contracts.Store); concerns share one connection."""

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = connect(self.path, readonly=readonly)
        self._seen: tuple[int, int] | None = None  # commits_seen() when the version was read
        self._version = 0
        super().__init__(SQLiteDatabase(self.conn, self.path), Papers, Search)

    def data_version(self) -> int:
        """Moves when a commit changes what pages show (migration 0027's counter: a reader's like
        does not move it), read again only when the connection has seen one (commits_seen)."""
        seen = self.db.commits_seen()
        if seen != self._seen:
            try:
                row = self.conn.execute("SELECT version FROM data_version WHERE id = 1").fetchone()
            except sqlite3.OperationalError:  # opened read-only before migration 0027: any commit
                row = seen
            self._seen, self._version = seen, int(row[0])
        return self._version

    def close(self) -> None:
        self.conn.close()


def open_sqlite(location: str, readonly: bool = False) -> SQLiteStore:
    """A path, or sqlite:///path (the path after the scheme's '//', absolute or relative)."""
    return SQLiteStore(location.removeprefix("sqlite://"), readonly=readonly)


def register(plugins: Plugins) -> None:
    plugins.stores.add(StorePlugin("sqlite", ("sqlite",), open_sqlite))
