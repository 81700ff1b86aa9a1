"""Raw SQL from a test on either backend: for the few facts no store contract writes or reads (a redirect a small fixture cannot produce, a row to corrupt)."""

from __future__ import annotations

from typing import Any

from papersift.store import Store


def run_sql(store: Store, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run one statement written with `?` placeholders in its own transaction; its rows."""
    conn = store.conn  # type: ignore[attr-defined]
    if store.location.startswith(("postgresql:", "postgres:")):
        with conn.transaction():
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows = conn.execute(sql, params).fetchall()
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return [tuple(r) for r in rows]
