"""What every SQL store holds: the portable concerns over its Database, built in one place."""

from __future__ import annotations

from typing import Self

from papersift.store.delivery import Delivery
from papersift.store.links import Links
from papersift.store.merges import Merges
from papersift.store.pages import Pages
from papersift.store.readers import Readers
from papersift.store.sql import Database
from papersift.store.summaries import Summaries
from papersift.store.tables import Tables
from papersift.store.topics import Topics


class SQLStore:
    """A store over one Database (contract: store.contracts.Store). A new portable concern is
    added here (its class is its contract); a backend adds papers, search and embeddings,
    data_version and close (which leaving a `with` block calls)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.location = db.location
        self.summaries = Summaries(db)
        self.topics = Topics(db)
        self.pages = Pages(db)
        self.readers = Readers(db)
        self.delivery = Delivery(db)
        self.tables = Tables(db)
        self.merges = Merges(db)
        self.links = Links(db)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
