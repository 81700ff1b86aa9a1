"""The only code that touches the database: open_store() returns a Store with one method per need."""

from __future__ import annotations

from pathlib import Path

from papersift.store.bulk import BulkLoadStore
from papersift.store.db import StoreError, connect, transaction
from papersift.store.embeddings import EmbeddingsStore
from papersift.store.pages import PagesStore
from papersift.store.papers import PapersStore, UpsertReport, slugify
from papersift.store.search import SearchStore
from papersift.store.summaries import SummariesStore
from papersift.store.topics import TopicsStore

__all__ = ["Store", "StoreError", "UpsertReport", "open_store", "slugify", "transaction"]


class Store(PapersStore, BulkLoadStore, EmbeddingsStore, SearchStore, SummariesStore, TopicsStore,
            PagesStore):
    """One SQLite database. Each mixin owns the queries of one concern (see its module)."""

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        self.conn = connect(self.path, readonly=readonly)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(settings_or_path: object, readonly: bool = False) -> Store:
    """Open (and migrate) the store of these settings, or the database at this path."""
    path = getattr(settings_or_path, "db_path", settings_or_path)
    return Store(path, readonly=readonly)  # type: ignore[arg-type]
