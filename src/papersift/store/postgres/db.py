"""The PostgreSQL connection: its own schema, numbered migrations applied on open, transactions retried on deadlock, vectors as numpy arrays, and the dialect layer over it."""

from __future__ import annotations

import random
import select
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from functools import partial
from typing import Any

import numpy as np
import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Dumper, Loader, PyFormat
from psycopg.pq import Format, TransactionStatus
from psycopg.rows import dict_row
from psycopg.types import TypeInfo

from papersift.clock import utc_now
from papersift.store import redact_url as redact
from papersift.store.sql import Database, T, check_schema, read_migrations, to_format
from papersift.store.values import StoreError, StoreUnavailable

SCHEMA = "papersift"  # every table lives in it, so the database may hold other things too
# The advisory lock key of migrating (arbitrary; other locks are named: PostgresDatabase.lock).
MIGRATE_LOCK = 0x7061_7065_7273_0001
# A write that lost a deadlock or a serialization race is run again this many times.
_RETRIES = 5

migrations = partial(read_migrations, "papersift.store.postgres.migrations")


def connect(url: str, readonly: bool = False) -> psycopg.Connection[Any]:
    """Open the database at `url`, migrating papersift's schema to the newest unless read-only;
    autocommit (a read is one statement, one snapshot; each write method opens a transaction)."""
    try:
        # No server-side prepared statements: a generic plan would evaluate a query's
        # tsquery functions once per row instead of once (4x slower keyword search), and
        # transaction-mode connection poolers do not keep them anyway.
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot connect to {redact(url)}: {str(exc).strip()}") from None
    try:
        conn.execute("SELECT set_config('search_path', %s, false)", (f"{SCHEMA}, public",))
        if readonly:
            conn.execute("SET default_transaction_read_only = on")
            if not _applied(conn, check=True):
                raise StoreError(f"{redact(url)} holds no papersift store yet; open it once "
                                 "without read-only (any command but a read-only one)")
        else:
            migrate(conn)
        _extension_schemas_on_path(conn)
        register_vector(conn)
        register_nul_free_text(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _applied(conn: psycopg.Connection[Any], check: bool = False) -> set[int]:
    """The applied migrations' numbers (if `check`, refused when a newer papersift applied them)."""
    exists = conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.schema_migrations",)).fetchone()
    applied = set() if exists[0] is None else {
        r[0] for r in conn.execute(f"SELECT number FROM {SCHEMA}.schema_migrations")}
    if check:
        check_schema(applied, migrations())
    return applied


def migrate(conn: psycopg.Connection[Any]) -> None:
    """Apply the migrations the database lacks, each in its own transaction under an advisory
    lock (several processes may open a new database at once)."""
    known = migrations()
    if _applied(conn, check=True) >= {n for n, _, _ in known}:
        return
    for number, name, sql in known:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA}.schema_migrations ("
                " number integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)")
            if number not in _applied(conn):  # else another process was first
                conn.execute(sql.encode())  # no parameters: the simple protocol runs a script
                conn.execute(f"INSERT INTO {SCHEMA}.schema_migrations (number, name,"
                             " applied_at) VALUES (%s, %s, %s)", (number, name, utc_now()))


def _extension_schemas_on_path(conn: psycopg.Connection[Any]) -> None:
    """Put the schemas of the extensions papersift uses (installed anywhere) on the search path."""
    found = [r[0] for r in conn.execute(
        "SELECT DISTINCT n.nspname FROM pg_extension e JOIN pg_namespace n"
        " ON n.oid = e.extnamespace WHERE e.extname IN ('vector', 'unaccent')"
        " AND n.nspname NOT IN (%s, 'public') ORDER BY 1", (SCHEMA,))]
    if found:
        path = ", ".join([SCHEMA, *(f'"{name}"' for name in found), "public"])
        conn.execute("SELECT set_config('search_path', %s, false)", (path,))


# ------------------------------------------------------------------ vectors
class VectorDumper(Dumper):
    """A numpy array as pgvector's binary `vector`: dimension, unused, big-endian float32s."""

    format = Format.BINARY

    def dump(self, obj: Any) -> bytes:
        values = np.asarray(obj, dtype=">f4").ravel()
        return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


class VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Any) -> np.ndarray:
        dim = struct.unpack_from(">H", data)[0]
        return np.frombuffer(bytes(data), dtype=">f4", count=dim, offset=4).astype(np.float32)


class VectorTextLoader(Loader):
    def load(self, data: Any) -> np.ndarray:
        text = bytes(data).decode().strip("[]")
        return np.array(text.split(",") if text else [], dtype=np.float32)


def register_vector(conn: psycopg.Connection[Any]) -> None:
    """numpy arrays go to the server as `vector`, and `vector` values come back as arrays."""
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the pgvector extension is not installed in this database")
    dumper = type("BoundVectorDumper", (VectorDumper,), {"oid": info.oid})
    conn.adapters.register_dumper(np.ndarray, dumper)
    conn.adapters.register_loader(info.oid, VectorBinaryLoader)
    conn.adapters.register_loader(info.oid, VectorTextLoader)


# ---------------------------------------------------------------- text
class _NulFreeText(Dumper):
    """Text without NUL characters, which PostgreSQL's text cannot hold (SQLite's can): a
    record or a form carrying one is stored without it instead of failing its whole batch."""

    def __init__(self, cls: type, context: Any = None) -> None:
        super().__init__(cls, context)
        self._inner = self.wrapped(cls, context)
        self.oid = self._inner.oid

    def dump(self, obj: str) -> Any:
        return self._inner.dump(obj.replace("\0", "") if "\0" in obj else obj)


def register_nul_free_text(conn: psycopg.Connection[Any]) -> None:
    for fmt in (PyFormat.TEXT, PyFormat.BINARY):
        wrapped = conn.adapters.get_dumper(str, fmt)
        dumper = type(f"NulFree{wrapped.__name__}", (_NulFreeText,),
                      {"wrapped": wrapped, "format": wrapped.format})
        conn.adapters.register_dumper(str, dumper)


# ------------------------------------------------------------ transactions
@contextmanager
def snapshot(conn: psycopg.Connection[Any]) -> Iterator[None]:
    """Several reads that see one committed state: REPEATABLE READ, READ ONLY (or the open one)."""
    if conn.info.transaction_status != TransactionStatus.IDLE:
        yield
        return
    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        yield
    except BaseException:
        if conn.info.transaction_status != TransactionStatus.UNKNOWN:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class PostgresDatabase(Database):
    """The dialect layer over the store's connection (`?` placeholders become `%s`), opened again
    when the server dropped it (issue 30: after a restart of PostgreSQL every page failed until
    papersift was restarted too). Before a statement outside a transaction, a connection that
    failed, or whose socket holds what nobody asked for (a shutdown's "terminating connection"),
    is replaced (StoreUnavailable if it cannot be); never inside one (the statement fails there)."""

    dialect = "postgresql"
    for_update = " FOR UPDATE"

    def __init__(self, url: str, readonly: bool = False) -> None:
        self.location, self.readonly = url, readonly
        self._conn = connect(url, readonly=readonly)
        self._closed = False

    @property
    def conn(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if not self._closed and (conn.closed or conn.broken or (
                conn.info.transaction_status == TransactionStatus.IDLE and _dropped(conn))):
            with suppress(psycopg.Error):
                conn.close()
            self._conn = connect(self.location, readonly=self.readonly)  # StoreUnavailable if down
        return self._conn

    def close(self) -> None:
        self._closed = True
        self._conn.close()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """A statement the server cut off by going away (a shutdown mid-query) fails as
        StoreUnavailable, as the next one would, not as a driver error (a 500)."""
        try:
            yield
        except psycopg.OperationalError as exc:
            if self._conn.broken or self._conn.closed:
                raise StoreUnavailable(f"the database went away: {str(exc).strip()}") from exc
            raise

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        with self.answering():
            return self.conn.execute(to_format(sql), params).fetchall()

    def dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.answering(), self.conn.cursor(row_factory=dict_row) as cursor:
            return cursor.execute(to_format(sql), params).fetchall()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self.answering():
            return self.conn.execute(to_format(sql), params).rowcount

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.answering(), self.conn.cursor() as cursor:
            cursor.executemany(to_format(sql), rows)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        with self.answering(), self.conn.transaction():
            yield self.conn

    def snapshot(self) -> Any:
        return snapshot(self.conn)

    def write(self, work: Callable[[], T]) -> T:
        """Run again if it lost a deadlock (PostgreSQL ends one of two) or a serialization race."""
        for attempt in range(_RETRIES):
            try:
                with self.conn.transaction():
                    return work()
            except (pg_errors.DeadlockDetected, pg_errors.SerializationFailure) as exc:
                if attempt == _RETRIES - 1:
                    raise StoreError(f"a write kept colliding with others: {exc}") from None
                time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
        raise AssertionError("unreachable")

    def lock(self, key: str) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (key,))

    def lock_table(self, table: str, mode: str) -> None:
        self.conn.execute(f"LOCK TABLE {table} IN {mode} MODE")

    def any_of(self, column: str, values: Sequence[Any], kind: str = "text"
               ) -> tuple[str, list[Any]]:
        return f"{column} = ANY(?::{kind}[])", [list(values)]

    def caseless(self, expr: str) -> str:
        return f"lower({expr})"

    def joined(self, expr: str, separator: str, source: str, order: str) -> str:
        return f"(SELECT string_agg({expr}, {separator} ORDER BY {order}) {source})"

    def insert_rows(self, table: str, columns: Sequence[str], types: Sequence[str],
                    rows: Sequence[Sequence[Any]], suffix: str = "") -> list[Sequence[Any]]:
        """One statement (an array per column, not a round trip per row); what RETURNING gives."""
        names = ", ".join(columns)
        arrays = ", ".join(f"%s::{kind}[]" for kind in types)
        values = ([list(column) for column in zip(*rows, strict=True)] if rows
                  else [[]] * len(columns))
        with self.answering():
            cursor = self.conn.execute(
                f"INSERT INTO {table} ({names}) SELECT {names} FROM unnest({arrays})"
                f" WITH ORDINALITY AS u({names}, row_number) ORDER BY row_number {suffix}", values)
            return cursor.fetchall() if cursor.description else []

    def pipeline(self) -> AbstractContextManager[Any]:
        return self.conn.pipeline()

    def copied_rows(self, sql: str, params: Sequence[Any], vectors: Sequence[int]
                    ) -> list[tuple[Any, ...]]:
        # Vectors come back as numpy arrays, read in binary (no text to parse).
        with self.conn.cursor(binary=bool(vectors)) as cursor:
            rows = cursor.execute(to_format(sql), params).fetchall()
        if not vectors:
            return [tuple(r) for r in rows]
        return [tuple(np.asarray(v, dtype="<f4").tobytes() if i in vectors else v
                      for i, v in enumerate(r)) for r in rows]

    def copy_params(self, rows: Sequence[Sequence[Any]], vectors: Sequence[int]
                    ) -> Sequence[Sequence[Any]]:
        return [tuple(np.frombuffer(bytes(v), dtype="<f4") if i in vectors and v is not None
                      else v for i, v in enumerate(r)) for r in rows]

    def rows_copied(self, table: str, rows: Sequence[Sequence[Any]], serial: str | None) -> None:
        # Ids written as given: the next one handed out comes after the highest.
        if serial:
            self.conn.execute(
                f"SELECT setval(pg_get_serial_sequence(%s, %s), max({serial})) FROM {table}"
                f" HAVING max({serial}) IS NOT NULL", (f"{SCHEMA}.{table}", serial))


def _dropped(conn: psycopg.Connection[Any]) -> bool:
    """Whether an idle connection's socket holds what nobody asked for (one select() call)."""
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(ready)
