"""Papers in the PostgreSQL store: batch upsert with merge and duplicate linking, and the reads stages need."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.records.merge import merge, source_kind
from papersift.records.prepare import PreparedRecord, version_rows
from papersift.store.contracts import StoreError, UpsertReport
from papersift.store.postgres.db import (
    PAPERS_LOCK,
    SCHEMA,
    Concern,
    dedupe_last,
    insert_rows,
    retrying,
    snapshot,
)

# Every column of papers but the keyword index (fts), in the SQLite store's order.
COLUMNS = (
    "pk", "id", "version", "text_source", "title", "abstract", "authors_text",
    "primary_category", "submitted", "updated", "announced", "doi", "comment", "journal_ref",
    "license", "links", "norm_key", "duplicate_of", "sort_date",
)
_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM papers"
_INSERTED = COLUMNS[1:]  # what a new paper's row gives (PreparedRecord.paper_row + 2)
_INSERTED_TYPES = ("text", "int4", *["text"] * 16)


class Papers(Concern):
    """Everything about papers, authors, categories, versions and sources (contract: PapersStore).

    Concurrent upserts (two ingests at once) take turns batch by batch through one advisory
    lock: the merge and duplicate rules must see every paper committed before, and a duplicate
    shares no unique key with its original (only a DOI or a title key), so row locks alone
    could not stop two writers from each storing one copy as an original.
    """

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
        return {r[0] for r in self.rows(
            "SELECT l.line_key FROM source_lines l JOIN paper_sources s"
            " ON s.paper_id = l.paper_id AND s.source = l.source"
            " AND s.record_hash = l.record_hash WHERE l.line_key = ANY(%s::bigint[])",
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
        current = self._current_rows([p.id for p in todo])
        author_ids = self._author_ids(
            dict(zip((n for p in todo for n in p.authors), (s for p in todo for s in p.slugs),
                     strict=True)))
        fresh: list[PreparedRecord] = []
        fresh_ids: set[str] = set()
        merges: list[PreparedRecord] = []
        repeats: list[PreparedRecord] = []
        for item in todo:
            if item.id in current:
                merges.append(item)
            elif item.id in fresh_ids:
                repeats.append(item)
            else:
                fresh.append(item)
                fresh_ids.add(item.id)
        merges.sort(key=lambda item: current[item.id]["pk"])
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
        return {(r[0], r[1]): (r[2], r[3]) for r in self.rows(
            "SELECT s.paper_id, s.source, s.record_hash, s.extras FROM paper_sources s"
            " JOIN unnest(%s::text[], %s::text[]) AS k(paper_id, source)"
            " ON s.paper_id = k.paper_id AND s.source = k.source", (list(ids), list(sources)))}

    def _current_rows(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The stored rows of these papers, locked until the batch commits."""
        return {r["id"]: r for r in self.dicts(
            f"{_SELECT} WHERE id = ANY(%s::text[]) ORDER BY id FOR UPDATE",
            (sorted(set(ids)),))}

    def _author_ids(self, wanted: dict[str, str]) -> dict[str, int]:
        """Ids for these author names (name -> its slug), creating the missing ones with
        unique slugs (as the SQLite store chooses them)."""
        names = [n for n in wanted if n]
        if not names:
            return {}
        ids = dict(self.rows("SELECT name, id FROM authors WHERE name = ANY(%s::text[])",
                             (names,)))
        missing = [n for n in names if n not in ids]
        if not missing:
            return ids
        taken = {r[0] for r in self.rows("SELECT slug FROM authors WHERE slug = ANY(%s::text[])",
                                         (list({wanted[n] for n in missing}),))}
        new_rows = []
        for name in missing:
            slug, n = wanted[name], 1
            while slug in taken or (n > 1 and self.one(
                    "SELECT 1 FROM authors WHERE slug = %s", (slug,))):
                n += 1
                slug = f"{wanted[name]}-{n}"
            taken.add(slug)
            new_rows.append((name, slug))
        ids.update(insert_rows(self.conn, "authors", ("name", "slug"), ("text", "text"),
                               new_rows, "ON CONFLICT DO NOTHING RETURNING name, id").fetchall())
        if len(ids) < len(names):  # only a writer that skipped the papers lock could do this
            raise StoreError("authors were written by another writer at the same time")
        return ids

    def _originals(self, dois: set[str], keys: set[str]) -> tuple[dict[str, str], dict[str, str]]:
        """First stored (non-duplicate) paper per lowercased DOI and per title key."""
        by_doi: dict[str, str] = {}
        by_key: dict[str, str] = {}
        if dois:
            for paper_id, doi in self.rows(
                    "SELECT id, lower(doi) FROM papers WHERE lower(doi) = ANY(%s::text[])"
                    " AND duplicate_of IS NULL ORDER BY pk DESC", (sorted(dois),)):
                by_doi[doi] = paper_id  # DESC order: the earliest stored one is written last
        if keys:
            for paper_id, key in self.rows(
                    "SELECT id, norm_key FROM papers WHERE norm_key = ANY(%s::text[])"
                    " AND duplicate_of IS NULL ORDER BY pk DESC", (sorted(keys),)):
                by_key[key] = paper_id
        return by_doi, by_key

    def _insert_papers(self, items: list[PreparedRecord], author_ids: dict[str, int],
                       report: UpsertReport) -> list[PreparedRecord]:
        """Insert papers new to the store, linking each to an earlier paper it duplicates.
        Returns those another writer stored first (to be merged instead)."""
        if not items:
            return []
        by_doi, by_key = self._originals(
            {p.doi_key for p in items if p.doi_key}, {p.norm_key for p in items if p.norm_key})
        rows, originals = [], {}
        for item in items:
            doi, key = item.doi_key, item.norm_key
            original = (by_doi.get(doi) if doi else None) or (by_key.get(key) if key else None)
            if original:
                originals[item.id] = original
            else:  # later papers in this batch with the same DOI or title key link to this one
                if doi:
                    by_doi.setdefault(doi, item.id)
                if key:
                    by_key.setdefault(key, item.id)
            rows.append((*item.paper_row, original, item.sort_date))
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

    def _categories_of(self, ids: list[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for paper_id, category in self.rows(
                "SELECT paper_id, category FROM paper_categories WHERE paper_id = ANY(%s::text[])"
                " ORDER BY paper_id, position", (sorted(set(ids)),)):
            found.setdefault(paper_id, []).append(category)
        return found

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

    def record_ingest_run(self, sources: list[str], started_at: str, report: dict[str, Any]) -> int:
        return int(self.value(
            "INSERT INTO ingest_runs (started_at, finished_at, sources, report)"
            " VALUES (%s, %s, %s, %s) RETURNING id",
            (started_at, utc_now(), json.dumps(sources), json.dumps(report))))

    # ----------------------------------------------------------------- reads
    def count_papers(self, include_duplicates: bool = False) -> int:
        where = "" if include_duplicates else " WHERE duplicate_of IS NULL"
        return int(self.value(f"SELECT count(*) FROM papers{where}"))

    def get_paper(self, paper_id: str) -> dict[str, Any] | None:
        """The whole stored paper: fields, ordered authors with slugs, categories, versions, sources."""
        with snapshot(self.conn):
            found = self.dicts(f"{_SELECT} WHERE id = %s", (paper_id,))
            if not found:
                return None
            paper = found[0]
            paper.pop("pk")
            paper["links"] = json.loads(paper["links"])
            paper["authors"] = [{"name": name, "slug": slug} for name, slug in self.rows(
                "SELECT a.name, a.slug FROM paper_authors pa JOIN authors a ON a.id = pa.author_id"
                " WHERE pa.paper_id = %s ORDER BY pa.position", (paper_id,))]
            paper["categories"] = self._categories_of([paper_id]).get(paper_id, [])
            paper["versions"] = [{"version": v, "date": d} for v, d in self.rows(
                "SELECT version, date FROM paper_versions WHERE paper_id = %s ORDER BY version",
                (paper_id,))]
            paper["sources"] = {source: json.loads(extras) for source, extras in self.rows(
                "SELECT source, extras FROM paper_sources WHERE paper_id = %s ORDER BY source",
                (paper_id,))}
            paper["duplicates"] = [r[0] for r in self.rows(
                "SELECT id FROM papers WHERE duplicate_of = %s ORDER BY id", (paper_id,))]
        return paper

    def stats(self) -> dict[str, Any]:
        """Counts by source, primary category and month of announcement (or submission)."""
        with snapshot(self.conn):
            total, duplicates, authors = self.one(
                "SELECT count(*), count(duplicate_of), (SELECT count(*) FROM authors) FROM papers")
            by_source: dict[str, int] = {}
            for source, n in self.rows(
                    "SELECT source, count(*) FROM paper_sources GROUP BY source ORDER BY source"):
                by_source[source_kind(source)] = by_source.get(source_kind(source), 0) + n
            by_category = dict(self.rows(
                "SELECT coalesce(primary_category, '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 2 DESC, 1"))
            by_month = dict(self.rows(
                "SELECT coalesce(substr(sort_date, 1, 7), '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 1"))
        return {
            "papers": total, "distinct_papers": total - duplicates, "duplicates": duplicates,
            "authors": authors, "full_text_index_pending": False, "indexes_pending": [],
            "by_source": by_source, "by_category": by_category, "by_month": by_month,
        }

    def iter_papers(
        self, ids: Sequence[str] | None = None, since: str | None = None, batch: int = 1000
    ) -> Iterable[dict[str, Any]]:
        """Papers (not duplicates) in pk order, as dicts with `authors` as a list of names."""
        clauses, params = ["duplicate_of IS NULL"], []
        if since:
            clauses.append("sort_date >= %s")
            params.append(since)
        where = " AND ".join(clauses)
        if ids is not None:
            yield from self._paper_dicts(f"{_SELECT} WHERE id = ANY(%s::text[]) AND {where}"
                                         " ORDER BY pk", (list(ids), *params))
            return
        last = 0
        while True:
            rows = list(self._paper_dicts(
                f"{_SELECT} WHERE pk > %s AND {where} ORDER BY pk LIMIT %s",
                (last, *params, batch)))
            if not rows:
                return
            yield from rows
            last = rows[-1]["pk"]

    def paper_dates(self, ids: Sequence[str] | None = None) -> dict[str, str | None]:
        if ids is None:
            return dict(self.rows("SELECT id, sort_date FROM papers WHERE duplicate_of IS NULL"))
        return dict(self.rows("SELECT id, sort_date FROM papers WHERE duplicate_of IS NULL"
                              " AND id = ANY(%s::text[])", (list(ids),)))

    def primary_categories(self) -> dict[str, str | None]:
        return dict(self.rows(
            "SELECT id, primary_category FROM papers WHERE duplicate_of IS NULL"))

    def _paper_dicts(self, sql: str, params: Sequence[Any]) -> Iterable[dict[str, Any]]:
        for paper in self.dicts(sql, params):
            paper["authors"] = [a for a in paper["authors_text"].split(", ") if a]
            paper["links"] = json.loads(paper["links"])
            yield paper

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            "papers": f"{_SELECT} ORDER BY id",
            "paper_versions": "SELECT * FROM paper_versions ORDER BY 1, 2",
            "authors": "SELECT * FROM authors ORDER BY id",
            "paper_authors": "SELECT * FROM paper_authors ORDER BY 1, 2",
            "paper_categories": "SELECT * FROM paper_categories ORDER BY 1, 2",
            "paper_sources": "SELECT * FROM paper_sources ORDER BY 1, 2",
            "papers_fts": "SELECT pk, fts::text FROM papers ORDER BY pk",
            "indexes": "SELECT indexname, tablename, indexdef FROM pg_indexes"
                       f" WHERE schemaname = '{SCHEMA}' ORDER BY indexname",
        }
        with snapshot(self.conn):
            return {name: [tuple(r) for r in self.rows(sql)] for name, sql in tables.items()}
