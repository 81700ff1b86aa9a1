"""The only code that speaks SQL: open_store() returns a Store whose concerns answer what the rest needs.

The contracts are in store.contracts (a portable concern's class is its own); each backend
(store.sqlite, ...) registers itself as a plugin and implements the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from papersift.plugins import plugins
from papersift.records import PaperRecord
from papersift.records.prepare import prepare_record
from papersift.settings import Settings
from papersift.store.contracts import Store
from papersift.store.values import (
    KeywordQuery,
    SearchFilters,
    StoreConflict,
    StoreError,
    StoreQueryError,
    StoreUnavailable,
    Term,
    UpsertReport,
)

__all__ = [
    "KeywordQuery", "SearchFilters", "Store", "StoreConflict", "StoreError", "StoreQueryError", "StoreUnavailable", "Term",
    "UpsertReport", "add_records", "open_store", "redact_url",
]


def redact_url(url: str) -> str:
    """A store's URL without its password (for messages, logs and `papersift settings`)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def open_store(target: Settings | Path | str, readonly: bool = False) -> Store:
    """Open (and migrate, unless read-only) the store of these settings (their database_url,
    else the SQLite file in their data dir), or at this location: a database file's path or a
    URL such as sqlite:///path/to/papersift.db or postgresql://host/dbname."""
    if isinstance(target, Settings):
        target = target.database_url.strip() or target.paths.database
    location = str(target)
    scheme = location.split("://", 1)[0] if "://" in location else "sqlite"
    for backend in plugins().stores:
        if scheme in backend.schemes:
            return backend.open(location, readonly)
    raise StoreError(f"no store backend for {location!r}; known schemes: "
                     f"{', '.join(s for b in plugins().stores for s in b.schemes)}")


def add_records(store: Store, records: Sequence[PaperRecord]) -> UpsertReport:
    """Prepare these records and upsert them in one batch (what an evaluation, a test or a
    benchmark adds; the ingest stage streams, prepares in helper processes and reports)."""
    return store.papers.upsert_papers([prepare_record(r) for r in records])
