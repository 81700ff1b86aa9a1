"""The dialect layer: portable concerns write each query once, with `?` placeholders, over the Database either backend gives them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import lru_cache
from importlib import resources
from typing import Any, TypeVar

from papersift.store.values import StoreError

T = TypeVar("T")
_MIGRATION_NAME = re.compile(r"^\d{4}_[a-z0-9_]+\.sql$")


class Database:
    """One connection's queries, in the SQL both backends speak (SQLite 3.35+ and PostgreSQL
    both have RETURNING, ON CONFLICT ... DO NOTHING / DO UPDATE and row values), plus the
    few phrases that differ, each a method here. A backend subclasses it in its db module."""

    dialect = ""
    location = ""
    # Appended to a SELECT of rows a write transaction will change: locked until it ends (a
    # SQLite writer holds the one write lock already).
    for_update = ""

    # ------------------------------------------------------- what a backend provides
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        """Every row, by position."""
        raise NotImplementedError

    def dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Every row, by column name."""
        raise NotImplementedError

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; how many rows it changed."""
        raise NotImplementedError

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def transaction(self) -> AbstractContextManager[Any]:
        """BEGIN ... COMMIT, rolled back on any error (KeyboardInterrupt included)."""
        raise NotImplementedError

    def snapshot(self) -> AbstractContextManager[Any]:
        """Several reads that see one committed state."""
        raise NotImplementedError

    def write(self, work: Callable[[], T]) -> T:
        """Run `work` in one transaction, again if the backend ended it to break a race."""
        with self.transaction():
            return work()

    def lock(self, key: str) -> None:
        """Inside a write transaction: hold the lock named `key` until its end (processes count and
        write as one step); a no-op where writers exclude each other (SQLite's BEGIN IMMEDIATE)."""

    def lock_table(self, table: str, mode: str) -> None:
        """Lock `table` in `mode` (PostgreSQL's LOCK TABLE) until the transaction ends (SQLite: as lock)."""

    def any_of(self, column: str, values: Sequence[Any], kind: str = "text"
               ) -> tuple[str, list[Any]]:
        """`column` is one of `values` (any number of them, one parameter): the condition
        and its parameters. `kind` is the values' SQL type, text or bigint."""
        raise NotImplementedError

    def joined(self, expr: str, separator: str, source: str, order: str) -> str:
        """A scalar subquery: `expr` of the rows `source` gives (FROM ... WHERE ...), joined
        with `separator` (a quoted SQL literal) in `order`."""
        raise NotImplementedError

    def caseless(self, expr: str) -> str:
        """`expr` as `=` and LIKE compare it without regard to (ASCII) case, on both sides."""
        raise NotImplementedError

    def indexed(self, table: str, index: str) -> str | None:
        """`table` (with its alias) read through `index` (SQLite's INDEXED BY), for a walk the
        planner would not choose; None where the planner weighs the walk itself (PostgreSQL)."""
        return None

    def insert_rows(self, table: str, columns: Sequence[str], types: Sequence[str],
                    rows: Sequence[Sequence[Any]], suffix: str = "") -> list[Sequence[Any]]:
        """INSERT these rows in their order (`types`: the columns' SQL types, for a backend
        that sends each column as one array); `suffix` is an ON CONFLICT clause, and a
        RETURNING clause where the backend can return rows from it (PostgreSQL; here none)."""
        self.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks(columns)})"
                         f" {suffix}", rows)
        return []

    def pipeline(self) -> AbstractContextManager[Any]:
        """Statements whose results nobody reads sent without waiting for each (PostgreSQL's
        pipeline mode); a backend in the same process as its database has nothing to save."""
        return nullcontext()

    # ------------------------ rows as they travel between backends (store.tables, migrate)
    def copied_rows(self, sql: str, params: Sequence[Any], vectors: Sequence[int]
                    ) -> list[tuple[Any, ...]]:
        """Every row as a tuple, the columns at `vectors` as float32 little-endian bytes."""
        return [tuple(row) for row in self.rows(sql, params)]

    def copy_params(self, rows: Sequence[Sequence[Any]], vectors: Sequence[int]
                    ) -> Sequence[Sequence[Any]]:
        """Travelling rows (vectors as bytes at `vectors`) as this backend's parameters."""
        return rows

    def rows_copied(self, table: str, rows: Sequence[Sequence[Any]], serial: str | None) -> None:
        """In the copy's transaction, after `rows` were added to `table` (`serial` names its
        key if the backend hands out its ids): what the backend keeps beside them follows."""

    # ---------------------------------------------------------------- shared on top
    def one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        found = self.dicts(sql, params)
        return found[0] if found else None

    def value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        found = self.rows(sql, params)
        return found[0][0] if found else None

    def column(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return [row[0] for row in self.rows(sql, params)]

    def walk(self, sql: str, params: Sequence[Any], batch: int) -> Iterator[list[dict[str, Any]]]:
        """The rows of `sql` (a SELECT of papers `p` with `p.pk`, ending in its WHERE) in pk
        order, `batch` at a time, each batch read after the last one's pk."""
        last = 0
        while rows := self.dicts(f"{sql} AND p.pk > ? ORDER BY p.pk LIMIT ?",
                                 (*params, last, batch)):
            yield rows
            last = rows[-1]["pk"]


def read_migrations(package: str) -> list[tuple[int, str, str]]:
    """(number, file name, SQL) of every migration in `package` (a backend's), in order."""
    found = sorted((int(entry.name[:4]), entry.name, entry.read_text(encoding="utf-8"))
                   for entry in resources.files(package).iterdir()
                   if _MIGRATION_NAME.match(entry.name))
    numbers = [n for n, _, _ in found]
    if len(set(numbers)) != len(numbers):
        raise StoreError(f"two migrations share a number: {[name for _, name, _ in found]}")
    return found


def check_schema(applied: set[int], known: Sequence[tuple[int, str, str]]) -> None:
    """Refuse a database that a newer papersift migrated (`applied`: its migrations' numbers)."""
    newest = max((n for n, _, _ in known), default=0)
    if applied and max(applied) > newest:
        raise StoreError(f"database schema {max(applied)} is newer than this papersift "
                         f"({newest}); upgrade papersift")


def marks(items: Sequence[Any]) -> str:
    """'?, ?, ?' for a VALUES list or row value of these items."""
    return ", ".join("?" * len(items))


def chunks(items: Sequence[T], size: int = 500) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def live_since(since: str | None) -> tuple[str, list[Any]]:
    """The condition on papers `p` that they are live, and dated from `since` on if given."""
    if since:
        return "p.duplicate_of IS NULL AND p.sort_date >= ?", [since]
    return "p.duplicate_of IS NULL", []


def dedupe_last(rows: Sequence[Sequence[Any]], key: Callable[[Sequence[Any]], Any]
                ) -> list[Sequence[Any]]:
    """Rows with a repeated key reduced to the last of them (what a row-by-row upsert would
    leave), in key order: one statement may not upsert a row twice, and writers that take
    rows in the same order cannot deadlock on them."""
    last: dict[Any, Sequence[Any]] = {}
    for row in rows:
        last[key(row)] = row
    return [last[k] for k in sorted(last)]


def grouped(rows: Iterable[Sequence[Any]]) -> dict[Any, list[Any]]:
    """{key: its values, in order} of (key, value) rows."""
    found: dict[Any, list[Any]] = {}
    for key, value in rows:
        found.setdefault(key, []).append(value)
    return found


_QUOTED = re.compile(r"('(?:[^']|'')*')")


@lru_cache(maxsize=4096)
def to_format(sql: str) -> str:
    """`?` placeholders as psycopg's `%s` (not a `?` inside quotes) and every `%` as `%%` (psycopg
    reads placeholders in quoted text too): queries are written once, translated once per text."""
    parts = _QUOTED.split(sql.replace("%", "%%"))
    for i in range(0, len(parts), 2):  # even parts lie outside quotes
        parts[i] = parts[i].replace("?", "%s")
    return "".join(parts)


class Concern:
    """A portable concern's queries over its store's Database (its class is its contract)."""

    def __init__(self, db: Database) -> None:
        self.db = db
