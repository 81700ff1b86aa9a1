"""Papers in the PostgreSQL store: new papers in one statement per table (each column an array), and no bulk load of its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.records.prepare import PreparedRecord
from papersift.store import papers
from papersift.store.postgres.db import SCHEMA, insert_rows
from papersift.store.sql import dedupe_last
from papersift.store.values import UpsertReport

_INSERTED = papers.COLUMNS[1:]  # what a new paper's row gives (PreparedRecord.paper_row + 2)
_INSERTED_TYPES = ("text", "int4", *["text"] * 16)


class Papers(papers.Papers):
    """Everything about papers, authors, categories, versions and sources (contract: PapersStore)."""

    @property
    def conn(self) -> Any:
        return self.db.conn

    @contextlib.contextmanager
    def bulk_load(self, wanted: bool = True) -> Iterator[bool]:
        """PostgreSQL keeps its indexes up to date during a load (GIN's pending list already
        batches the keyword index's work): nothing is deferred."""
        yield False

    def current_lines(self, keys: Sequence[int]) -> set[int]:
        """The line keys whose record is still what its source last gave for its paper."""
        if not keys:
            return set()
        return {r[0] for r in self.db.rows(
            "SELECT l.line_key FROM source_lines l JOIN paper_sources s"
            " ON s.paper_id = l.paper_id AND s.source = l.source"
            " AND s.record_hash = l.record_hash WHERE l.line_key = ANY(?::bigint[])",
            (list(keys),))}

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

    def _insert_papers(self, items: list[PreparedRecord], author_ids: dict[str, int],
                       report: UpsertReport) -> list[PreparedRecord]:
        if not items:
            return []
        originals = self._duplicated(items)
        rows = [(*item.paper_row, originals.get(item.id), item.sort_date) for item in items]
        inserted = {r[0] for r in insert_rows(
            self.conn, "papers", _INSERTED, _INSERTED_TYPES, rows,
            "ON CONFLICT (id) DO NOTHING RETURNING id").fetchall()}
        done = [item for item in items if item.id in inserted]
        report.new += [item.id for item in done]
        report.duplicates += [(item.id, originals[item.id]) for item in done
                              if item.id in originals]
        insert_rows(self.conn, "paper_authors", ("paper_id", "position", "author_id"),
                    ("text", "int4", "int8"),
                    [(item.id, i, author_ids[name]) for item in done
                     for i, name in enumerate(item.authors)], "ON CONFLICT DO NOTHING")
        insert_rows(self.conn, "paper_categories", ("paper_id", "category", "position"),
                    ("text", "text", "int4"),
                    [row for item in done for row in item.category_rows], "ON CONFLICT DO NOTHING")
        insert_rows(self.conn, "paper_versions", ("paper_id", "version", "date"),
                    ("text", "int4", "text"),
                    [row for item in done for row in item.version_rows], "ON CONFLICT DO NOTHING")
        return [item for item in items if item.id not in inserted]

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
