"""The PostgreSQL backend: papersift's own schema in a database of the server's, each concern's queries in a module of its own.

Registered for postgresql:// and postgres:// URLs. psycopg is an optional extra
(pip install 'papersift[postgres]'), imported only when such a store is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from papersift.plugins import Plugins, StorePlugin
from papersift.store.values import StoreError

if TYPE_CHECKING:
    from papersift.store.postgres.store import PostgresStore


def open_postgres(location: str, readonly: bool = False) -> PostgresStore:
    """A libpq URL: postgresql://user:password@host:port/dbname?options."""
    try:
        from papersift.store.postgres.store import PostgresStore
    except ImportError as exc:
        raise StoreError(f"the PostgreSQL store needs psycopg ({exc}): "
                         "pip install 'papersift[postgres]'") from None
    return PostgresStore(location, readonly=readonly)


def register(plugins: Plugins) -> None:
    plugins.stores.add(StorePlugin("postgresql", ("postgresql", "postgres"), open_postgres))
