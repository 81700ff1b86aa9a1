"""The PostgreSQL store: one connection shared by its concerns, and what belongs to the connection as a whole."""

from __future__ import annotations

from typing import Any

import psycopg

from papersift.store.delivery import Delivery
from papersift.store.pages import Pages
from papersift.store.postgres.db import Connector, PostgresDatabase
from papersift.store.postgres.embeddings import Embeddings
from papersift.store.postgres.papers import Papers
from papersift.store.postgres.search import Search
from papersift.store.readers import Readers
from papersift.store.summaries import Summaries
from papersift.store.tables import Tables
from papersift.store.topics import Topics


class PostgresStore:
    """One PostgreSQL database (contract: store.contracts.Store); concerns share one connection.

    `location` is the URL it was opened with (passwords included: helper processes open it
    again; print it through db.redact)."""

    def __init__(self, url: str, readonly: bool = False) -> None:
        self.location = url
        self._connector = connector = Connector(url, readonly=readonly)
        self.db = db = PostgresDatabase(connector, url)
        self.papers = Papers(db)
        self.search = Search(connector, url)
        self.embeddings = Embeddings(db)
        self.summaries = Summaries(db)
        self.topics = Topics(db)
        self.pages = Pages(db)
        self.readers = Readers(db)
        self.delivery = Delivery(db)
        self.tables = Tables(db)

    @property
    def conn(self) -> psycopg.Connection[Any]:
        """The live connection (opened again if the server dropped the last one)."""
        return self._connector.get()

    def data_version(self) -> int:
        """Moves when a transaction that changed what pages show commits (migration 0007)."""
        return int(self.conn.execute("SELECT version FROM data_version").fetchone()[0])

    def close(self) -> None:
        self._connector.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
