"""Papers in the store: batch upsert with merge and duplicate linking, and the reads stages need."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, NamedTuple

import orjson

from papersift.records import PaperRecord
from papersift.store.bulk import deferred_indexes
from papersift.store.db import transaction, utc_now
from papersift.store.fulltext import fulltext_deferred

# When two sources disagree about a paper's text and neither gives a newer version, the
# one that is closer to arXiv's own record wins. Higher wins; unknown sources rank lowest.
SOURCE_RANK = {"arxiv": 50, "oai": 50, "snapshot": 40, "announce": 30, "file": 20, "hf": 10}

_CHUNK = 500  # SQLite's default limit on bound variables is generous, but keep IN lists short.
_SCALARS = (
    "title", "abstract", "primary_category", "submitted", "updated", "doi", "comment",
    "journal_ref", "license",
)


def source_kind(source: str) -> str:
    """'file:/x/y.jsonl' -> 'file'; 'arxiv' -> 'arxiv'."""
    return source.split(":", 1)[0]


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    if not text.isascii():  # most names and titles are: their NFKD form is themselves
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NOT_SLUG.sub("-", text.lower()).strip("-") or "x"


_NOT_WORDS = re.compile(r"\\[a-zA-Z]+|[^\w]+")  # LaTeX commands and punctuation


# Lowercase ASCII: letters, digits and '_' (what \w matches) are kept, the rest is a space.
_ASCII_WORDS = {i: chr(i) if chr(i).isalnum() or chr(i) == "_" else " " for i in range(128)}


def norm_title_key(title: str, authors: Sequence[str]) -> str | None:
    """Normalized title + first author's surname: the fallback identity for duplicates."""
    if title.isascii() and "\\" not in title:  # most titles: the regex's result, 2x faster
        words = title.lower().translate(_ASCII_WORDS).split()
    else:
        if not title.isascii():
            title = unicodedata.normalize("NFKC", title)
        words = _NOT_WORDS.sub(" ", title.lower()).split()
    if len(words) < 3 or not authors:
        return None
    surname = slugify(authors[0].split()[-1]) if authors[0].split() else ""
    return " ".join(words) + "|" + surname


@dataclass
class UpsertReport:
    """What one batch did to the store."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (paper, duplicate of)


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


_RECORD_FIELDS = tuple(f.name for f in fields(PaperRecord))
_record_values = attrgetter(*_RECORD_FIELDS)
assert _RECORD_FIELDS[-1] == "extras"  # _record_hash puts their JSON text in their place


def _record_hash(values: tuple[Any, ...], extras_json: str) -> str:
    """A hash of all a source said of a paper: equal hashes mean nothing to update."""
    # orjson encodes every field in one C call; the extras are hashed as their canonical JSON
    # text, which may hold what orjson refuses (integers over 64 bits, say). SHA-256 runs in
    # hardware on most CPUs: here it is faster than BLAKE2b.
    payload = orjson.dumps((*values[:-1], extras_json))
    return hashlib.sha256(payload).hexdigest()[:32]


class PreparedRecord(NamedTuple):
    """A record with everything the store derives from it alone (hashes, keys, rows).

    Building it needs no database, so a bulk ingest computes it in another process and the
    writer only runs SQL. `line_key` is set when the record was read from a raw line whose
    key (sources.files.line_key) lets a later run skip parsing it while it is unchanged.
    """

    values: tuple[Any, ...]  # the PaperRecord's fields in declaration order
    id: str
    source: str
    record_hash: str
    extras_json: str
    paper_row: tuple[Any, ...]  # papers columns id .. norm_key, as _insert_papers writes them
    sort_date: str | None
    doi_key: str | None
    norm_key: str | None
    authors: tuple[str, ...]  # non-empty names in order
    slugs: tuple[str, ...]
    category_rows: list[tuple[str, str, int]]
    version_rows: list[tuple[str, int, str | None]]
    line_key: int | None = None

    def record(self) -> PaperRecord:
        return PaperRecord(*self.values)


# Built once: json.dumps with options builds a new encoder per call.
_EXTRAS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode


def _links_json(links: dict[str, str]) -> str:
    return orjson.dumps(links, option=orjson.OPT_SORT_KEYS).decode()


def prepare_record(record: PaperRecord, line_key: int | None = None) -> PreparedRecord:
    """Everything about a record that does not depend on the store's content."""
    extras_json = _EXTRAS_JSON(record.extras) if record.extras else "{}"
    key = norm_title_key(record.title, record.authors)
    authors = tuple(n for n in record.authors if n)
    sort_date = _sort_date(record.announced, record.submitted)
    values = _record_values(record)
    return PreparedRecord(
        values=values, id=record.id, source=record.source,
        record_hash=_record_hash(values, extras_json), extras_json=extras_json,
        paper_row=(
            record.id, record.version, record.source, record.title, record.abstract,
            ", ".join(record.authors), record.primary_category, record.submitted,
            record.updated, record.announced, record.doi, record.comment, record.journal_ref,
            record.license, _links_json(record.links), key,
        ),
        sort_date=sort_date, doi_key=record.doi.lower() if record.doi else None, norm_key=key,
        authors=authors, slugs=tuple(map(slugify, authors)),
        category_rows=[(record.id, c, i) for i, c in enumerate(dict.fromkeys(record.categories))],
        version_rows=_version_rows(record), line_key=line_key,
    )


class PapersStore:
    """Mixin of Store: everything about papers, authors, categories, versions and sources."""

    conn: sqlite3.Connection
    # Where the keys of lines read go: a bulk load holds them back (see store.bulk).
    lines_table = "source_lines"

    # ---------------------------------------------------------------- writes
    def upsert_papers(self, records: Sequence[PaperRecord]) -> UpsertReport:
        """Insert or merge a batch of records in one transaction.

        The newest version (then the higher-ranked source) wins the text; empty fields never
        erase known ones; version history and sources accumulate. A record its source already
        gave unchanged costs one indexed lookup and nothing else.
        """
        return self.upsert_prepared([prepare_record(r) for r in records])

    def upsert_prepared(self, items: Sequence[PreparedRecord]) -> UpsertReport:
        """upsert_papers for records already run through prepare_record (bulk ingest)."""
        report = UpsertReport()
        if not items:
            return report
        with transaction(self.conn):
            self._upsert(items, report)
        return report

    def current_lines(self, keys: Sequence[int]) -> set[int]:
        """The line keys whose record is still what its source last gave for its paper.

        Such a line would parse to a record equal to the stored one, so it is unchanged
        without parsing it (the check is as exact as comparing record hashes).
        """
        found: set[int] = set()
        for chunk in _chunks(list(keys)):
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self.conn.execute(
                f"SELECT l.line_key FROM source_lines l JOIN paper_sources s"
                f" ON s.paper_id = l.paper_id AND s.source = l.source"
                f" AND s.record_hash = l.record_hash WHERE l.line_key IN ({marks})", chunk))
        return found

    def _upsert(self, items: Sequence[PreparedRecord], report: UpsertReport) -> None:
        lines = [(p.line_key, p.id, p.source, p.record_hash) for p in items if p.line_key is not None]
        if lines:
            self.conn.executemany(
                f"INSERT OR REPLACE INTO {self.lines_table}"
                "(line_key, paper_id, source, record_hash) VALUES (?,?,?,?)", lines)
        seen = self._source_hashes([(p.source, p.id) for p in items])
        todo = [p for p in items if seen.get((p.source, p.id)) != p.record_hash]
        report.unchanged += len(items) - len(todo)
        if not todo:
            return
        current = self._current_rows([p.id for p in todo])
        author_ids = self._author_ids(
            dict(zip((n for p in todo for n in p.authors), (s for p in todo for s in p.slugs),
                     strict=True)))

        # Papers new to the store go in with one executemany per table (the common bulk case);
        # a paper already stored, or repeated within the batch, is merged one by one.
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
        # Stored papers first, in rowid order, then the new ones (higher rowids): FTS5 must
        # flush its pending terms to a new segment whenever a write goes to a lower rowid
        # than the last one, and one out-of-order update per merge cost ~10 ms each.
        merges.sort(key=lambda item: current[item.id]["pk"])
        for item in merges:
            self._merge(item, author_ids, report)
        self._insert_papers(fresh, author_ids, report)
        for item in repeats:
            self._merge(item, author_ids, report)

        self.conn.executemany(
            "INSERT INTO paper_sources(paper_id, source, record_hash, extras) VALUES (?,?,?,?)"
            " ON CONFLICT(paper_id, source) DO UPDATE SET"
            " record_hash = excluded.record_hash, extras = excluded.extras",
            [(p.id, p.source, p.record_hash, p.extras_json) for p in todo],
        )

    def _merge(self, item: PreparedRecord, author_ids: dict[str, int], report: UpsertReport
               ) -> None:
        """Merge one record into its stored paper and count it as updated or unchanged."""
        record = item.record()
        row = self._row(record.id)
        changed = self._merge_paper(row, record, author_ids)
        old_extras = self.conn.execute(
            "SELECT extras FROM paper_sources WHERE paper_id = ? AND source = ?",
            (record.id, record.source),
        ).fetchone()
        if changed or (old_extras is not None and old_extras[0] != item.extras_json):
            report.updated.append(record.id)
        else:
            report.unchanged += 1
        self._add_versions(record)

    def _source_hashes(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        by_source: dict[str, list[str]] = {}
        for source, paper_id in keys:
            by_source.setdefault(source, []).append(paper_id)
        for source, ids in by_source.items():
            for chunk in _chunks(ids):
                marks = ",".join("?" * len(chunk))
                for paper_id, record_hash in self.conn.execute(
                    f"SELECT paper_id, record_hash FROM paper_sources"
                    f" WHERE source = ? AND paper_id IN ({marks})", (source, *chunk)
                ):
                    found[(source, paper_id)] = record_hash
        return found

    def _current_rows(self, ids: list[str]) -> dict[str, sqlite3.Row]:
        rows: dict[str, sqlite3.Row] = {}
        for chunk in _chunks(list(dict.fromkeys(ids))):
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT * FROM papers WHERE id IN ({marks})", chunk):
                rows[row["id"]] = row
        return rows

    def _row(self, paper_id: str) -> sqlite3.Row:
        return self.conn.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()

    def _author_ids(self, wanted: dict[str, str]) -> dict[str, int]:
        """Ids for these author names (name -> its slug), creating the missing ones with
        unique slugs."""
        unique = [n for n in wanted if n]
        ids: dict[str, int] = {}
        for chunk in _chunks(unique):
            marks = ",".join("?" * len(chunk))
            for author_id, name in self.conn.execute(
                f"SELECT id, name FROM authors WHERE name IN ({marks})", chunk
            ):
                ids[name] = author_id
        missing = [n for n in unique if n not in ids]
        if not missing:
            return ids
        taken: set[str] = set()
        for chunk in _chunks(list({wanted[n] for n in missing})):
            marks = ",".join("?" * len(chunk))
            taken.update(r[0] for r in self.conn.execute(
                f"SELECT slug FROM authors WHERE slug IN ({marks})", chunk))
        # Explicit ids are what SQLite would assign (max + 1, no AUTOINCREMENT), and save
        # reading the new rows back.
        next_id = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM authors").fetchone()[0]
        new_rows = []
        for name in missing:
            slug, n = wanted[name], 1
            while slug in taken or (n > 1 and self.conn.execute(
                    "SELECT 1 FROM authors WHERE slug = ?", (slug,)).fetchone()):
                n += 1
                slug = f"{wanted[name]}-{n}"
            taken.add(slug)
            new_rows.append((next_id, name, slug))
            ids[name] = next_id
            next_id += 1
        self.conn.executemany("INSERT INTO authors(id, name, slug) VALUES (?, ?, ?)", new_rows)
        return ids

    def _originals(self, dois: set[str], keys: set[str]) -> tuple[dict[str, str], dict[str, str]]:
        """First stored (non-duplicate) paper per lowercased DOI and per title key."""
        by_doi: dict[str, str] = {}
        by_key: dict[str, str] = {}
        for chunk in _chunks(sorted(dois)):
            marks = ",".join("?" * len(chunk))
            for paper_id, doi in self.conn.execute(
                f"SELECT id, lower(doi) FROM papers WHERE lower(doi) IN ({marks})"
                " AND duplicate_of IS NULL ORDER BY pk DESC", chunk,
            ):
                by_doi[doi] = paper_id  # DESC order: the earliest stored one is written last
        for chunk in _chunks(sorted(keys)):
            marks = ",".join("?" * len(chunk))
            for paper_id, key in self.conn.execute(
                f"SELECT id, norm_key FROM papers WHERE norm_key IN ({marks})"
                " AND duplicate_of IS NULL ORDER BY pk DESC", chunk,
            ):
                by_key[key] = paper_id
        return by_doi, by_key

    def _insert_papers(
        self, items: list[PreparedRecord], author_ids: dict[str, int], report: UpsertReport
    ) -> None:
        """Insert papers new to the store, linking each to an earlier paper it duplicates."""
        if not items:
            return
        by_doi, by_key = self._originals(
            {p.doi_key for p in items if p.doi_key}, {p.norm_key for p in items if p.norm_key})
        rows, people, categories, versions = [], [], [], []
        for item in items:
            doi, key = item.doi_key, item.norm_key
            original = (by_doi.get(doi) if doi else None) or (by_key.get(key) if key else None)
            if original:
                report.duplicates.append((item.id, original))
            else:
                # Later papers in this batch with the same DOI or title key link to this one.
                if doi:
                    by_doi.setdefault(doi, item.id)
                if key:
                    by_key.setdefault(key, item.id)
            rows.append((*item.paper_row, original, item.sort_date))
            paper_id = item.id
            people += [(paper_id, i, author_ids[name]) for i, name in enumerate(item.authors)]
            categories += item.category_rows
            versions += item.version_rows
            report.new.append(paper_id)
        first_pk = self.conn.execute("SELECT coalesce(max(pk), 0) + 1 FROM papers").fetchone()[0]
        self.conn.executemany(
            "INSERT INTO papers(id, version, text_source, title, abstract, authors_text,"
            " primary_category, submitted, updated, announced, doi, comment, journal_ref, license,"
            " links, norm_key, duplicate_of, sort_date) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        if not fulltext_deferred(self.conn):  # else the parallel build indexes them
            self.conn.execute(
                "INSERT INTO papers_fts(rowid, title, abstract, authors_text)"
                " SELECT pk, title, abstract, authors_text FROM papers WHERE pk >= ?", (first_pk,))
        self.conn.executemany(
            "INSERT INTO paper_authors(paper_id, position, author_id) VALUES (?,?,?)", people)
        self.conn.executemany(
            "INSERT INTO paper_categories(paper_id, category, position) VALUES (?,?,?)",
            categories)
        self.conn.executemany(
            "INSERT OR IGNORE INTO paper_versions(paper_id, version, date) VALUES (?,?,?)",
            versions)

    def _write_people_and_categories(
        self, record: PaperRecord, author_ids: dict[str, int]
    ) -> None:
        names = [n for n in record.authors if n]
        self.conn.executemany(
            "INSERT INTO paper_authors(paper_id, position, author_id) VALUES (?,?,?)",
            [(record.id, i, author_ids[name]) for i, name in enumerate(names)],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO paper_categories(paper_id, category, position) VALUES (?,?,?)",
            [(record.id, c, i) for i, c in enumerate(dict.fromkeys(record.categories))],
        )

    def _merge_paper(
        self, row: sqlite3.Row, record: PaperRecord, author_ids: dict[str, int]
    ) -> bool:
        """Merge a record into the stored paper; True if anything visible changed."""
        current_rank = (row["version"] or 0, SOURCE_RANK.get(source_kind(row["text_source"]), 0))
        incoming_rank = (record.version or 0, SOURCE_RANK.get(source_kind(record.source), 0))
        wins = incoming_rank >= current_rank
        new_values = {
            "title": record.title, "abstract": record.abstract,
            "primary_category": record.primary_category, "submitted": record.submitted,
            "updated": record.updated, "doi": record.doi, "comment": record.comment,
            "journal_ref": record.journal_ref, "license": record.license,
        }
        merged: dict[str, Any] = {}
        for name in _SCALARS:
            old, new = row[name], new_values[name]
            merged[name] = (new if new not in (None, "") else old) if wins else (
                old if old not in (None, "") else new)
        # The first announcement is the news; replacements are re-announced later.
        known = [d for d in (row["announced"], record.announced) if d]
        merged["announced"] = min(known) if known else None
        stored_links = json.loads(row["links"])
        links = {**stored_links, **record.links} if wins else {**record.links, **stored_links}
        # Compared as values: stores written before orjson hold the same JSON spaced out.
        merged["links"] = row["links"] if links == stored_links else _links_json(links)
        merged["version"] = max(row["version"] or 0, record.version or 0) or None
        merged["text_source"] = record.source if wins else row["text_source"]
        authors_change = wins and record.authors and ", ".join(record.authors) != row["authors_text"]
        merged["authors_text"] = ", ".join(record.authors) if authors_change else row["authors_text"]
        merged["norm_key"] = norm_title_key(
            merged["title"], record.authors if authors_change else merged["authors_text"].split(", ")
        )
        merged["sort_date"] = _sort_date(merged["announced"], merged["submitted"])
        categories_change = wins and record.categories and record.categories != self._categories(
            record.id)
        changed_fields = {k: v for k, v in merged.items() if row[k] != v}
        if changed_fields:
            assignments = ", ".join(f"{k} = ?" for k in changed_fields)
            self.conn.execute(
                f"UPDATE papers SET {assignments} WHERE id = ?", (*changed_fields.values(), record.id)
            )
        if authors_change:
            self.conn.execute("DELETE FROM paper_authors WHERE paper_id = ?", (record.id,))
        if categories_change:
            self.conn.execute("DELETE FROM paper_categories WHERE paper_id = ?", (record.id,))
        if authors_change or categories_change:
            self._write_people_and_categories(
                PaperRecord(
                    id=record.id, title="", abstract="", source=record.source,
                    authors=record.authors if authors_change else [],
                    categories=record.categories if categories_change else [],
                ),
                author_ids,
            )
        # 'source' and 'text_source' bookkeeping alone is not a visible change.
        visible = set(changed_fields) - {"text_source"}
        return bool(visible or authors_change or categories_change)

    def _categories(self, paper_id: str) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT category FROM paper_categories WHERE paper_id = ? ORDER BY position",
            (paper_id,))]

    def _add_versions(self, record: PaperRecord) -> None:
        self.conn.executemany(
            "INSERT INTO paper_versions(paper_id, version, date) VALUES (?,?,?)"
            " ON CONFLICT(paper_id, version) DO UPDATE SET date = coalesce(date, excluded.date)",
            _version_rows(record),
        )

    def record_ingest_run(self, sources: list[str], started_at: str, report: dict[str, Any]) -> int:
        with transaction(self.conn):
            cursor = self.conn.execute(
                "INSERT INTO ingest_runs(started_at, finished_at, sources, report) VALUES (?,?,?,?)",
                (started_at, utc_now(), json.dumps(sources), json.dumps(report)),
            )
        return int(cursor.lastrowid)

    # ----------------------------------------------------------------- reads
    def count_papers(self, include_duplicates: bool = False) -> int:
        where = "" if include_duplicates else " WHERE duplicate_of IS NULL"
        return self.conn.execute(f"SELECT count(*) FROM papers{where}").fetchone()[0]

    def get_paper(self, paper_id: str) -> dict[str, Any] | None:
        """The whole stored paper: fields, ordered authors with slugs, categories, versions, sources."""
        row = self.conn.execute("SELECT * FROM papers WHERE id = ?", (paper_id,)).fetchone()
        if row is None:
            return None
        paper = dict(row)
        paper.pop("pk")
        paper["links"] = json.loads(paper["links"])
        paper["authors"] = [
            {"name": name, "slug": slug} for name, slug in self.conn.execute(
                "SELECT a.name, a.slug FROM paper_authors pa JOIN authors a ON a.id = pa.author_id"
                " WHERE pa.paper_id = ? ORDER BY pa.position", (paper_id,))
        ]
        paper["categories"] = self._categories(paper_id)
        paper["versions"] = [
            {"version": v, "date": d} for v, d in self.conn.execute(
                "SELECT version, date FROM paper_versions WHERE paper_id = ? ORDER BY version",
                (paper_id,))
        ]
        paper["sources"] = {
            source: json.loads(extras) for source, extras in self.conn.execute(
                "SELECT source, extras FROM paper_sources WHERE paper_id = ? ORDER BY source",
                (paper_id,))
        }
        paper["duplicates"] = [r[0] for r in self.conn.execute(
            "SELECT id FROM papers WHERE duplicate_of = ? ORDER BY id", (paper_id,))]
        return paper

    def stats(self) -> dict[str, Any]:
        """Counts by source, primary category and month of announcement (or submission)."""
        conn = self.conn
        total = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        duplicates = conn.execute(
            "SELECT count(*) FROM papers WHERE duplicate_of IS NOT NULL").fetchone()[0]
        by_source: dict[str, int] = {}
        for source, n in conn.execute(
            "SELECT source, count(*) FROM paper_sources GROUP BY source ORDER BY source"
        ):
            kind = source_kind(source)
            by_source[kind] = by_source.get(kind, 0) + n
        return {
            "papers": total,
            "distinct_papers": total - duplicates,
            "duplicates": duplicates,
            "authors": conn.execute("SELECT count(*) FROM authors").fetchone()[0],
            # Set while a bulk load builds these indexes, or after one was killed.
            "full_text_index_pending": fulltext_deferred(conn),
            "indexes_pending": deferred_indexes(conn),
            "by_source": by_source,
            "by_category": dict(conn.execute(
                "SELECT coalesce(primary_category, '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 2 DESC, 1")),
            "by_month": dict(conn.execute(
                "SELECT coalesce(substr(sort_date, 1, 7), '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 1")),
        }

    def iter_papers(
        self, ids: Sequence[str] | None = None, since: str | None = None, batch: int = 1000
    ) -> Iterable[dict[str, Any]]:
        """Papers (not duplicates) in pk order, as dicts with `authors` as a list of names.

        The common read of the stages: id, version, title, abstract, authors, primary_category,
        categories are not included (use get_paper), sort_date.
        """
        clauses, params = ["duplicate_of IS NULL"], []
        if since:
            clauses.append("sort_date >= ?")
            params.append(since)
        if ids is not None:
            for chunk in _chunks(list(ids)):
                marks = ",".join("?" * len(chunk))
                yield from self._paper_dicts(
                    f"SELECT * FROM papers WHERE id IN ({marks}) AND {' AND '.join(clauses)}"
                    " ORDER BY pk", (*chunk, *params))
            return
        last = 0
        while True:
            rows = list(self._paper_dicts(
                f"SELECT * FROM papers WHERE pk > ? AND {' AND '.join(clauses)} ORDER BY pk LIMIT ?",
                (last, *params, batch)))
            if not rows:
                return
            yield from rows
            last = rows[-1]["pk"]

    def _paper_dicts(self, sql: str, params: Sequence[Any]) -> Iterable[dict[str, Any]]:
        for row in self.conn.execute(sql, params).fetchall():
            paper = dict(row)
            paper["authors"] = [a for a in paper["authors_text"].split(", ") if a]
            paper["links"] = json.loads(paper["links"])
            yield paper

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table's rows in a canonical order, for comparing two stores (tests, backups)."""
        tables = {
            "papers": "SELECT * FROM papers ORDER BY id",
            "paper_versions": "SELECT * FROM paper_versions ORDER BY 1, 2",
            "authors": "SELECT * FROM authors ORDER BY id",
            "paper_authors": "SELECT * FROM paper_authors ORDER BY 1, 2",
            "paper_categories": "SELECT * FROM paper_categories ORDER BY 1, 2",
            "paper_sources": "SELECT * FROM paper_sources ORDER BY 1, 2",
            "papers_fts": "SELECT rowid, * FROM papers_fts ORDER BY rowid",
            # What the index holds (the row above is read from the papers it points at).
            "papers_fts_terms": "SELECT term, col, doc, cnt FROM temp.papers_fts_terms"
                                " ORDER BY term, col",
        }
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_terms"
                          " USING fts5vocab(main, papers_fts, col)")
        dump = {name: [tuple(r) for r in self.conn.execute(sql)] for name, sql in tables.items()}
        # The indexes too: a bulk load drops some and builds them again (store.bulk).
        dump["indexes"] = [tuple(r) for r in self.conn.execute(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")]
        return dump


def _version_rows(record: PaperRecord) -> list[tuple[str, int, str | None]]:
    history = dict(record.versions)
    if record.version and record.version not in history:
        history[record.version] = record.submitted if record.version == 1 else None
    return [(record.id, v, d) for v, d in sorted(history.items())]


def _sort_date(announced: str | None, submitted: str | None) -> str | None:
    date = announced or submitted
    return date[:10] if date else None
