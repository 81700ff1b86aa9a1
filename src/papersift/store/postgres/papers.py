"""Papers in the PostgreSQL store: batch upsert with merge and duplicate linking, and the reads stages need."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from papersift.records.merge import merge
from papersift.records.prepare import PreparedRecord, version_rows
from papersift.store.papers import COLUMNS, DUMPED, SELECT, PaperReads
from papersift.store.postgres.db import (
    PAPERS_LOCK,
    SCHEMA,
    insert_rows,
    retrying,
)
from papersift.store.sql import dedupe_last
from papersift.store.values import UpsertReport

_INSERTED = COLUMNS[1:]  # what a new paper's row gives (PreparedRecord.paper_row + 2)
_INSERTED_TYPES = ("text", "int4", *["text"] * 16)


class Papers(PaperReads):
    """Everything about papers, authors, categories, versions and sources (contract: PapersStore).

    Concurrent upserts (two ingests at once) take turns batch by batch through one advisory
    lock: the merge and duplicate rules must see every paper committed before, and a duplicate
    shares no unique key with its original (only a DOI or a title key), so row locks alone
    could not stop two writers from each storing one copy as an original.
    """

    @property
    def conn(self) -> Any:
        return self.db.conn

    # ---------------------------------------------------------------- writes
    def upsert_papers(self, items: Sequence[PreparedRecord]) -> UpsertReport:
        """Insert or merge a batch in one transaction (see PapersStore.upsert_papers)."""
        if not items:
            return UpsertReport()

        def work() -> UpsertReport:
            report = UpsertReport()
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (PAPERS_LOCK,))
            self._upsert(items, report)
            return report

        return retrying(self.conn, work)

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

    def _upsert(self, items: Sequence[PreparedRecord], report: UpsertReport) -> None:
        lines = dedupe_last([(p.line_key, p.id, p.source, p.record_hash)
                             for p in items if p.line_key is not None], key=lambda r: r[0])
        if lines:
            insert_rows(self.conn, "source_lines", ("line_key", "paper_id", "source", "record_hash"),
                        ("int8", "text", "text", "text"), lines,
                        "ON CONFLICT (line_key) DO UPDATE SET paper_id = excluded.paper_id,"
                        " source = excluded.source, record_hash = excluded.record_hash")
        sources = self._sources([(p.id, p.source) for p in items])
        todo = [p for p in items if sources.get((p.id, p.source), (None,))[0] != p.record_hash]
        report.unchanged += len(items) - len(todo)
        if not todo:
            return
        current, author_ids, merges, fresh, repeats = self._plan(todo)
        self._merge_all(merges, current, sources, author_ids, report)
        repeats = self._insert_papers(fresh, author_ids, report) + repeats
        if repeats:
            current.update(self._current_rows([p.id for p in repeats]))
            self._merge_all(repeats, current, sources, author_ids, report)
        insert_rows(self.conn, "paper_sources", ("paper_id", "source", "record_hash", "extras"),
                    ("text",) * 4,
                    dedupe_last([(p.id, p.source, p.record_hash, p.extras_json) for p in todo],
                                key=lambda r: (r[0], r[1])),
                    "ON CONFLICT (paper_id, source) DO UPDATE SET"
                    " record_hash = excluded.record_hash, extras = excluded.extras")

    def _sources(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
        """{(paper id, source): (record hash, extras)} of what these sources last gave."""
        if not keys:
            return {}
        ids, sources = zip(*keys, strict=True)
        return {(r[0], r[1]): (r[2], r[3]) for r in self.db.rows(
            "SELECT s.paper_id, s.source, s.record_hash, s.extras FROM paper_sources s"
            " JOIN unnest(?::text[], ?::text[]) AS k(paper_id, source)"
            " ON s.paper_id = k.paper_id AND s.source = k.source", (list(ids), list(sources)))}

    def _current_rows(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The stored rows of these papers, locked until the batch commits."""
        return {r["id"]: r for r in self.db.dicts(
            f"{SELECT} WHERE id = ANY(?::text[]) ORDER BY id FOR UPDATE",
            (sorted(set(ids)),))}

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        """Store these (name, slug) authors; their ids by name (an author another writer
        stored first is left out)."""
        return dict(insert_rows(self.conn, "authors", ("name", "slug"), ("text", "text"), new,
                                "ON CONFLICT DO NOTHING RETURNING name, id").fetchall())

    def _insert_papers(self, items: list[PreparedRecord], author_ids: dict[str, int],
                       report: UpsertReport) -> list[PreparedRecord]:
        """Insert papers new to the store, linking each to an earlier paper it duplicates.
        Returns those another writer stored first (to be merged instead)."""
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

    def _merge_all(self, items: list[PreparedRecord], rows: dict[str, dict[str, Any]],
                   sources: dict[tuple[str, str], tuple[str, str]], author_ids: dict[str, int],
                   report: UpsertReport) -> None:
        """Merge records into their stored papers, in order (a paper given twice is merged
        twice); the writes go out in one pipeline."""
        if not items:
            return
        categories = self._categories_of([item.id for item in items])
        with self.conn.pipeline():
            for item in items:
                changed = self._merge(item, rows[item.id], categories, author_ids)
                old = sources.get((item.id, item.source))
                if changed or (old is not None and old[1] != item.extras_json):
                    report.updated.append(item.id)
                else:
                    report.unchanged += 1
                self.conn.cursor().executemany(
                    "INSERT INTO paper_versions (paper_id, version, date) VALUES (%s, %s, %s)"
                    " ON CONFLICT (paper_id, version) DO UPDATE"
                    " SET date = coalesce(paper_versions.date, excluded.date)",
                    version_rows(item.record()))

    def _merge(self, item: PreparedRecord, row: dict[str, Any],
               categories: dict[str, list[str]], author_ids: dict[str, int]) -> bool:
        """Merge one record into its stored row (kept up to date in memory); True if anything
        visible changed."""
        record = item.record()
        change = merge(row, record)
        if change.changed:
            assignments = ", ".join(f"{k} = %s" for k in change.changed)
            self.conn.execute(f"UPDATE papers SET {assignments} WHERE id = %s",
                              (*change.changed.values(), record.id))
            row.update(change.changed)
        stored = categories.get(record.id, [])
        categories_change = bool(change.wins and record.categories
                                 and record.categories != stored)
        if change.authors_change:
            self.conn.execute("DELETE FROM paper_authors WHERE paper_id = %s", (record.id,))
            names = [n for n in record.authors if n]
            self.conn.cursor().executemany(
                "INSERT INTO paper_authors (paper_id, position, author_id) VALUES (%s, %s, %s)",
                [(record.id, i, author_ids[name]) for i, name in enumerate(names)])
        if categories_change:
            categories[record.id] = list(dict.fromkeys(record.categories))
            self.conn.execute("DELETE FROM paper_categories WHERE paper_id = %s", (record.id,))
            self.conn.cursor().executemany(
                "INSERT INTO paper_categories (paper_id, category, position) VALUES (%s, %s, %s)",
                [(record.id, c, i) for i, c in enumerate(categories[record.id])])
        return change.visible or categories_change

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            **DUMPED,
            "papers_fts": "SELECT pk, fts::text FROM papers ORDER BY pk",
            "indexes": "SELECT indexname, tablename, indexdef FROM pg_indexes"
                       f" WHERE schemaname = '{SCHEMA}' ORDER BY indexname",
        }
        with self.db.snapshot():
            return {name: [tuple(r) for r in self.db.rows(sql)] for name, sql in tables.items()}
