"""The PostgreSQL store: one connection shared by its concerns, and what belongs to the connection as a whole."""

from __future__ import annotations

from typing import Any

import psycopg

from papersift.store.contracts import SQLStore
from papersift.store.postgres.db import PostgresDatabase
from papersift.store.postgres.embeddings import Embeddings
from papersift.store.postgres.papers import Papers
from papersift.store.postgres.search import Search


class PostgresStore(SQLStore):
    """One PostgreSQL database (contract: store.contracts.Store); concerns share one connection.
    `location` is its URL, password and all (helper processes open it): print it via redact_url."""

    db: PostgresDatabase

    def __init__(self, url: str, readonly: bool = False) -> None:
        super().__init__(PostgresDatabase(url, readonly), Papers, Search, Embeddings)

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The live connection (opened again if the server dropped the last one)."""
        return self.db.conn

    def data_version(self) -> int:
        """Moves when a transaction that changed what pages show commits (migration 0007)."""
        return int(self.conn.execute("SELECT version FROM data_version").fetchone()[0])

    def close(self) -> None:
        self.db.close()
