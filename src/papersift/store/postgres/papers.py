"""Papers in the PostgreSQL store: new papers in one statement per table (each column an array), and no bulk load of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papersift.store import papers
from papersift.store.postgres.db import SCHEMA

# The types of a new paper's row (COLUMNS but pk: PreparedRecord.paper_row and two more).
_INSERTED_TYPES = ("text", "int4", *["text"] * 16)


class Papers(papers.Papers):
    """Papers, with new ones inserted in one statement per table (contract: store.papers.Papers)."""

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        return dict(self.db.insert_rows("authors", ("name", "slug"), ("text", "text"), new,
                                        "ON CONFLICT DO NOTHING RETURNING name, id"))

    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> set[str]:
        return {r[0] for r in self.db.insert_rows(
            "papers", papers.COLUMNS[1:], _INSERTED_TYPES, rows,
            "ON CONFLICT (id) DO NOTHING RETURNING id")}

    def _dumped(self) -> dict[str, str]:
        return {"papers_fts": "SELECT pk, fts::text FROM papers ORDER BY pk",
                "indexes": "SELECT indexname, tablename, indexdef FROM pg_indexes"
                           f" WHERE schemaname = '{SCHEMA}' ORDER BY indexname"}
