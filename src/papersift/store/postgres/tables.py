"""Every table's rows in PostgreSQL as all backends share them (store.tables): what `papersift migrate` reads and writes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from papersift.store.postgres.db import Concern, transaction
from papersift.store.tables import TABLES, Table, key_sql
from papersift.store.tables import table as table_spec


def _marks(items: Sequence[Any]) -> str:
    return ", ".join(["%s"] * len(items))


class Tables(Concern):
    """Rows of the shared tables (contract: TablesStore): vectors leave as float32
    little-endian bytes and come back as pgvector vectors; ids written as given move the
    sequence that hands out the next ones."""

    def table_names(self) -> list[str]:
        return [t.name for t in TABLES]

    def count_rows(self, table: str, through: Sequence[Any] | None = None) -> int:
        spec = table_spec(table)
        if through is None:
            return int(self.value(f"SELECT count(*) FROM {spec.name}"))
        return int(self.value(f"SELECT count(*) FROM {spec.name} WHERE ({', '.join(spec.key)})"
                              f" <= ({_marks(spec.key)})", list(through)))

    def last_key(self, table: str) -> tuple[Any, ...] | None:
        spec = table_spec(table)
        order = ", ".join(f"{k} DESC" for k in spec.key)
        row = self.one(f"SELECT {', '.join(spec.key)} FROM {spec.name} ORDER BY {order} LIMIT 1")
        return None if row is None else tuple(row)

    def read_rows(self, table: str, after: Sequence[Any] | None = None,
                  limit: int = 1000) -> list[tuple[Any, ...]]:
        spec = table_spec(table)
        where, params = key_sql(spec, after, "%s")
        vectors = [spec.columns.index(c) for c in spec.vectors]
        with self.conn.cursor(binary=bool(vectors)) as cursor:
            rows = cursor.execute(f"SELECT {', '.join(spec.columns)} FROM {spec.name}{where}"
                                  " LIMIT %s", (*params, int(limit))).fetchall()
        if not vectors:
            return [tuple(r) for r in rows]
        return [tuple(np.asarray(v, dtype="<f4").tobytes() if i in vectors else v
                      for i, v in enumerate(r)) for r in rows]

    def write_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> int:
        spec = table_spec(table)
        if not rows:
            return 0
        vectors = [spec.columns.index(c) for c in spec.vectors]
        values = [tuple(np.frombuffer(bytes(v), dtype="<f4") if i in vectors and v is not None
                        else v for i, v in enumerate(r)) for r in rows]
        with transaction(self.conn), self.conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {spec.name} ({', '.join(spec.columns)})"
                f" VALUES ({_marks(spec.columns)}) ON CONFLICT DO NOTHING RETURNING 1",
                values, returning=True)
            added = 0
            while True:
                added += len(cursor.fetchall())
                if not cursor.nextset():
                    break
            if spec.numbered:
                self._follow_sequence(spec)
        return added

    def _follow_sequence(self, spec: Table) -> None:
        """The next id handed out comes after the highest one written."""
        column = spec.key[0]
        self.conn.execute(
            f"SELECT setval(pg_get_serial_sequence(%s, %s), max({column})) FROM {spec.name}"
            f" HAVING max({column}) IS NOT NULL", (f"papersift.{spec.name}", column))
