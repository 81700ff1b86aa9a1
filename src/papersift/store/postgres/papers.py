"""Papers in the PostgreSQL store: new papers in one statement per table (each column an array), and no bulk load of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papersift.store import papers
from papersift.store.postgres.db import SCHEMA, insert_rows
from papersift.store.sql import dedupe_last

_INSERTED = papers.COLUMNS[1:]  # what a new paper's row gives (PreparedRecord.paper_row + 2)
_INSERTED_TYPES = ("text", "int4", *["text"] * 16)


class Papers(papers.Papers):
    """Everything about papers, authors, categories, versions and sources (contract: PapersStore)."""

    @property
    def conn(self) -> Any:
        return self.db.conn

    # ---------------------------------------------------------------- writes
    def _keep_lines(self, lines: Sequence[tuple[int, str, str, str]]) -> None:
        if lines:
            insert_rows(self.conn, "source_lines", ("line_key", "paper_id", "source", "record_hash"),
                        ("int8", "text", "text", "text"),
                        dedupe_last(lines, key=lambda r: r[0]),
                        "ON CONFLICT (line_key) DO UPDATE SET paper_id = excluded.paper_id,"
                        " source = excluded.source, record_hash = excluded.record_hash")

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        return dict(insert_rows(self.conn, "authors", ("name", "slug"), ("text", "text"), new,
                                "ON CONFLICT DO NOTHING RETURNING name, id").fetchall())

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> set[str]:
        return {r[0] for r in insert_rows(self.conn, "papers", _INSERTED, _INSERTED_TYPES, rows,
                                          "ON CONFLICT (id) DO NOTHING RETURNING id").fetchall()}

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            **papers.DUMPED,
            "papers_fts": "SELECT pk, fts::text FROM papers ORDER BY pk",
            "indexes": "SELECT indexname, tablename, indexdef FROM pg_indexes"
                       f" WHERE schemaname = '{SCHEMA}' ORDER BY indexname",
        }
        with self.db.snapshot():
            return {name: [tuple(r) for r in self.db.rows(sql)] for name, sql in tables.items()}
