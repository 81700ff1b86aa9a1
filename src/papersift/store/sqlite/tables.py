"""Every table's rows in SQLite as all backends share them (store.tables): what `papersift migrate` reads and writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papersift.store.sqlite.db import Concern, chunks, marks, transaction
from papersift.store.sqlite.fulltext import fulltext_deferred
from papersift.store.tables import TABLES, key_sql
from papersift.store.tables import table as table_spec


class Tables(Concern):
    """Rows of the shared tables (contract: TablesStore). Vectors are stored as their float32
    little-endian bytes already: rows go in and out as they are."""

    def table_names(self) -> list[str]:
        return [t.name for t in TABLES]

    def count_rows(self, table: str, through: Sequence[Any] | None = None) -> int:
        spec = table_spec(table)
        if through is None:
            return int(self.conn.execute(f"SELECT count(*) FROM {spec.name}").fetchone()[0])
        keys = ", ".join(spec.key)
        return int(self.conn.execute(
            f"SELECT count(*) FROM {spec.name} WHERE ({keys}) <= ({marks(spec.key)})",
            list(through)).fetchone()[0])

    def last_key(self, table: str) -> tuple[Any, ...] | None:
        spec = table_spec(table)
        order = ", ".join(f"{k} DESC" for k in spec.key)
        row = self.conn.execute(f"SELECT {', '.join(spec.key)} FROM {spec.name}"
                                f" ORDER BY {order} LIMIT 1").fetchone()
        return None if row is None else tuple(row)

    def read_rows(self, table: str, after: Sequence[Any] | None = None,
                  limit: int = 1000) -> list[tuple[Any, ...]]:
        spec = table_spec(table)
        where, params = key_sql(spec, after, "?")
        return [tuple(r) for r in self.conn.execute(
            f"SELECT {', '.join(spec.columns)} FROM {spec.name}{where} LIMIT ?",
            (*params, int(limit)))]

    def write_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> int:
        spec = table_spec(table)
        if not rows:
            return 0
        with transaction(self.conn):
            fresh = self._fresh(spec.name, spec.key, [spec.key_of(r) for r in rows], rows)
            self.conn.executemany(
                f"INSERT INTO {spec.name} ({', '.join(spec.columns)})"
                f" VALUES ({marks(spec.columns)})", fresh)
            if spec.name == "papers" and fresh and not fulltext_deferred(self.conn):
                for chunk in chunks([r[0] for r in fresh]):
                    self.conn.execute(
                        "INSERT INTO papers_fts(rowid, title, abstract, authors_text)"
                        f" SELECT pk, title, abstract, authors_text FROM papers"
                        f" WHERE pk IN ({marks(chunk)})", chunk)
        return len(fresh)

    def _fresh(self, name: str, key: tuple[str, ...], keys: list[tuple[Any, ...]],
               rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
        """The rows whose key is not stored yet (and not repeated in the batch)."""
        stored: set[tuple[Any, ...]] = set()
        columns = ", ".join(key)
        for chunk in chunks(keys, 200):
            condition = " OR ".join([f"({columns}) = ({marks(key)})"] * len(chunk))
            stored.update(tuple(r) for r in self.conn.execute(
                f"SELECT {columns} FROM {name} WHERE {condition}",
                [v for k in chunk for v in k]))
        fresh = []
        for row_key, row in zip(keys, rows, strict=True):
            if row_key not in stored:
                stored.add(row_key)
                fresh.append(row)
        return fresh
