"""The SQLite backend: one file in WAL mode, each concern's queries in a module of its own."""

from __future__ import annotations

from pathlib import Path

from papersift.plugins import Plugins, StorePlugin
from papersift.store.base import SQLStore
from papersift.store.sqlite.db import SQLiteDatabase, connect
from papersift.store.sqlite.embeddings import Embeddings
from papersift.store.sqlite.papers import Papers
from papersift.store.sqlite.search import Search


class SQLiteStore(SQLStore):
    """One SQLite database (contract: store.contracts.Store); concerns share one connection."""

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = connect(self.path, readonly=readonly)
        super().__init__(db := SQLiteDatabase(self.conn, self.path))
        self.papers = Papers(db)
        self.search = Search(self.conn, self.path)
        self.embeddings = Embeddings(db)

    def data_version(self) -> int:
        """Moves whenever another connection commits: the web page cache's validity check."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        self.conn.close()


def open_sqlite(location: str, readonly: bool = False) -> SQLiteStore:
    """A path, or sqlite:///path (the path after the scheme's '//', absolute or relative)."""
    return SQLiteStore(location.removeprefix("sqlite://"), readonly=readonly)


def register(plugins: Plugins) -> None:
    plugins.stores.add(StorePlugin("sqlite", ("sqlite",), open_sqlite))
