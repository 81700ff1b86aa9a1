"""Papers as both backends read and merge them: one paper whole, counts, the stages' batches, dates, the run log, and the batch upsert around each backend's insert of new papers."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.records.merge import merge, source_kind
from papersift.records.prepare import PreparedRecord, version_rows
from papersift.store.merges import plan_links, refresh_keys
from papersift.store.sql import Concern, dedupe_last, grouped, live_since
from papersift.store.tables import BY_NAME
from papersift.store.values import StoreError, UpsertReport

# Every column of papers that both backends hold (PostgreSQL adds its keyword vector).
COLUMNS = BY_NAME["papers"].columns
SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM papers"
# The tables of papers and what hangs off them, each in a canonical order (Papers.dump): papers
# by id, the others by their first two columns (for authors, the id alone is unique).
DUMPED = {"papers": f"{SELECT} ORDER BY id"} | {
    name: f"SELECT * FROM {name} ORDER BY 1, 2"
    for name in ("paper_versions", "authors", "paper_authors", "paper_categories", "paper_sources")}


class Papers(Concern):
    """Papers with their versions, authors, categories and sources (contract: this class); each
    backend's Papers adds how new papers go in (_insert_rows, _add_authors) and its bulk load."""

    # Where the keys of lines read go (SQLite's bulk load holds them back: bulk.held_lines).
    lines_table = "source_lines"

    # ------------------------------------------------------- what a backend provides
    def _insert_rows(self, rows: list[tuple[Any, ...]]) -> set[str]:
        """Insert rows (COLUMNS but pk); the ids inserted, less any another writer stored first."""
        raise NotImplementedError

    def _add_authors(self, new: Sequence[tuple[str, str]]) -> dict[str, int]:
        """Store (name, slug) authors; their ids by name, less any another writer stored first."""
        raise NotImplementedError

    def _dumped(self) -> dict[str, str]:
        """The queries of what the backend keeps beside DUMPED (its keyword index, indexes)."""
        raise NotImplementedError

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table of this concern in a canonical order, for comparing two stores."""
        with self.db.snapshot():
            return {name: [tuple(r) for r in self.db.rows(sql)]
                    for name, sql in {**DUMPED, **self._dumped()}.items()}

    @contextlib.contextmanager
    def bulk_load(self, wanted: bool = True) -> Iterator[bool]:
        """A context for loading many papers; yields whether the backend defers index work
        to its end (if `wanted` and the store was empty, or an earlier load was cut short).
        Here nothing is deferred (PostgreSQL's GIN pending list already batches its work)."""
        yield False

    # ---------------------------------------------------------------- writes
    def upsert_papers(self, items: Sequence[PreparedRecord]) -> UpsertReport:
        """Insert or merge a batch in one transaction (rules: papersift.records.merge). A record its
        source already gave unchanged costs one lookup and counts as unchanged; a new paper with the
        DOI or title key of a stored one is linked to it as a duplicate. Concurrent upserts (two
        ingests at once) take turns batch by batch through one lock: the merge and duplicate rules
        must see every paper committed before, and a duplicate shares no unique key with its
        original, so row locks could not stop two writers both storing a copy as an original."""
        if not items:
            return UpsertReport()

        def work() -> UpsertReport:
            report = UpsertReport()
            self.db.lock("papers")
            self._upsert(items, report)
            return report

        return self.db.write(work)

    def current_lines(self, keys: Sequence[int]) -> set[int]:
        """The line keys (PreparedRecord.line_key) whose record is still what its source last
        gave for its paper: parsed again, such a line would give the stored record."""
        if not keys:
            return set()
        among, params = self.db.any_of("l.line_key", list(keys), "bigint")
        return set(self.db.column(
            "SELECT l.line_key FROM source_lines l JOIN paper_sources s"
            " ON s.paper_id = l.paper_id AND s.source = l.source"
            f" AND s.record_hash = l.record_hash WHERE {among}", params))

    def _insert_papers(self, items: list[PreparedRecord], author_ids: dict[str, int],
                       report: UpsertReport) -> list[PreparedRecord]:
        """Insert new papers with their authors, categories and versions, a duplicate linked to
        its original (_duplicated); returns those another writer stored first (to merge)."""
        if not items:
            return []
        originals = self._duplicated(items)
        inserted = self._insert_rows([(*p.paper_row, originals.get(p.id), p.sort_date)
                                      for p in items])
        done = [p for p in items if p.id in inserted]
        report.new += [p.id for p in done]
        report.duplicates += [(p.id, originals[p.id]) for p in done if p.id in originals]
        for table, columns, types, rows in (
                ("paper_authors", ("paper_id", "position", "author_id"), ("text", "int4", "int8"),
                 [(p.id, i, author_ids[name]) for p in done for i, name in enumerate(p.authors)]),
                ("paper_categories", ("paper_id", "category", "position"), ("text", "text", "int4"),
                 [row for p in done for row in p.category_rows]),
                ("paper_versions", ("paper_id", "version", "date"), ("text", "int4", "text"),
                 [row for p in done for row in p.version_rows])):
            self.db.insert_rows(table, columns, types, rows, "ON CONFLICT DO NOTHING")
        return [p for p in items if p.id not in inserted]

    def _upsert(self, items: Sequence[PreparedRecord], report: UpsertReport) -> None:
        lines = [(p.line_key, p.id, p.source, p.record_hash)
                 for p in items if p.line_key is not None]
        if lines:  # remembered for current_lines
            self.db.insert_rows(
                self.lines_table, ("line_key", "paper_id", "source", "record_hash"),
                ("int8", "text", "text", "text"), dedupe_last(lines, key=lambda r: r[0]),
                "ON CONFLICT (line_key) DO UPDATE SET paper_id = excluded.paper_id,"
                " source = excluded.source, record_hash = excluded.record_hash")
        sources = self._sources([(p.id, p.source) for p in items])
        todo = [p for p in items if sources.get((p.id, p.source), (None,))[0] != p.record_hash]
        report.unchanged += len(items) - len(todo)
        if not todo:
            return
        current, author_ids, merges, fresh, repeats = self._plan(todo)
        # Papers new to the store go in together (the common bulk case); a paper already
        # stored, or repeated within the batch, is merged one by one.
        self._merge_all(merges, current, sources, author_ids, report)
        repeats = self._insert_papers(fresh, author_ids, report) + repeats
        if repeats:
            current.update(self._current_rows([p.id for p in repeats]))
            self._merge_all(repeats, current, sources, author_ids, report)
        self.db.insert_rows(
            "paper_sources", ("paper_id", "source", "record_hash", "extras"), ("text",) * 4,
            dedupe_last([(p.id, p.source, p.record_hash, p.extras_json) for p in todo],
                        key=lambda r: (r[0], r[1])),
            "ON CONFLICT (paper_id, source) DO UPDATE SET"
            " record_hash = excluded.record_hash, extras = excluded.extras")

    def _sources(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
        """{(paper id, source): (record hash, extras)} of what these sources last gave."""
        wanted = set(keys)
        among, params = self.db.any_of("paper_id", sorted({paper_id for paper_id, _ in keys}))
        return {(r[0], r[1]): (r[2], r[3]) for r in self.db.rows(
            f"SELECT paper_id, source, record_hash, extras FROM paper_sources WHERE {among}",
            params) if (r[0], r[1]) in wanted}

    def _current_rows(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        """The stored rows of these papers, locked until the batch commits."""
        among, params = self.db.any_of("id", sorted(set(ids)))
        return {r["id"]: r for r in self.db.dicts(
            f"{SELECT} WHERE {among} ORDER BY id{self.db.for_update}", params)}

    def _merge_all(self, items: list[PreparedRecord], rows: dict[str, dict[str, Any]],
                   sources: dict[tuple[str, str], tuple[str, str]], author_ids: dict[str, int],
                   report: UpsertReport) -> None:
        """Merge records into their stored papers, in order (a paper given twice is merged
        twice), and count each as updated or unchanged; the writes go out in one pipeline."""
        if not items:
            return
        categories = self._categories_of([item.id for item in items])
        with self.db.pipeline():
            for item in items:
                changed = self._merge(item, rows[item.id], categories, author_ids)
                old = sources.get((item.id, item.source))
                if changed or (old is not None and old[1] != item.extras_json):
                    report.updated.append(item.id)
                else:
                    report.unchanged += 1
                self.db.executemany(
                    "INSERT INTO paper_versions (paper_id, version, date) VALUES (?, ?, ?)"
                    " ON CONFLICT (paper_id, version) DO UPDATE"
                    " SET date = coalesce(paper_versions.date, excluded.date)",
                    version_rows(item.record()))

    def _merge(self, item: PreparedRecord, row: dict[str, Any],
               categories: dict[str, list[str]], author_ids: dict[str, int]) -> bool:
        """Merge one record into its stored row (kept up to date in memory, as are the
        categories); True if anything visible changed."""
        record = item.record()
        change = merge(row, record)
        if change.changed:
            assignments = ", ".join(f"{k} = ?" for k in change.changed)
            self.db.execute(f"UPDATE papers SET {assignments} WHERE id = ?",
                            (*change.changed.values(), record.id))
            row.update(change.changed)
        categories_change = bool(change.wins and record.categories
                                 and record.categories != categories.get(record.id, []))
        if change.authors_change:
            self.db.execute("DELETE FROM paper_authors WHERE paper_id = ?", (record.id,))
            names = [n for n in record.authors if n]
            self.db.executemany(
                "INSERT INTO paper_authors (paper_id, position, author_id) VALUES (?, ?, ?)",
                [(record.id, i, author_ids[name]) for i, name in enumerate(names)])
        if categories_change:
            categories[record.id] = list(dict.fromkeys(record.categories))
            self.db.execute("DELETE FROM paper_categories WHERE paper_id = ?", (record.id,))
            self.db.executemany(
                "INSERT INTO paper_categories (paper_id, category, position) VALUES (?, ?, ?)",
                [(record.id, c, i) for i, c in enumerate(categories[record.id])])
        return change.visible or categories_change

    # ----------------------------------------------------------------- reads
    def record_ingest_run(self, sources: list[str], started_at: str, report: dict[str, Any]) -> int:
        """Keep the report of one ingest run; returns its id."""
        return int(self.db.value(
            "INSERT INTO ingest_runs (started_at, finished_at, sources, report)"
            " VALUES (?, ?, ?, ?) RETURNING id",
            (started_at, utc_now(), json.dumps(sources), json.dumps(report))))

    def count_papers(self, include_duplicates: bool = False) -> int:
        where = "" if include_duplicates else " WHERE duplicate_of IS NULL"
        return int(self.db.value(f"SELECT count(*) FROM papers{where}"))

    def get_paper(self, paper_id: str) -> dict[str, Any] | None:
        """The whole paper: its columns, `authors` [{name, slug}], `categories` (primary
        first), `versions` [{version, date}], `sources` {source: extras}, `duplicates` [ids],
        `links` {name: url}; None if unknown."""
        with self.db.snapshot():
            paper = self.db.one(f"{SELECT} WHERE id = ?", (paper_id,))
            if paper is None:
                return None
            paper.pop("pk")
            paper["links"] = json.loads(paper["links"])
            paper["authors"] = self.db.dicts(
                "SELECT a.name, a.slug FROM paper_authors pa JOIN authors a ON a.id = pa.author_id"
                " WHERE pa.paper_id = ? ORDER BY pa.position", (paper_id,))
            paper["categories"] = self._categories_of([paper_id]).get(paper_id, [])
            paper["versions"] = self.db.dicts("SELECT version, date FROM paper_versions"
                                              " WHERE paper_id = ? ORDER BY version", (paper_id,))
            paper["sources"] = {source: json.loads(extras) for source, extras in self.db.rows(
                "SELECT source, extras FROM paper_sources WHERE paper_id = ? ORDER BY source",
                (paper_id,))}
            paper["duplicates"] = self.db.column(
                "SELECT id FROM papers WHERE duplicate_of = ? ORDER BY id", (paper_id,))
        return paper

    def resolve_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """{id: the id signals about it are kept under (its original if it is a duplicate)}
        for each of these ids the store holds, in one query."""
        if not ids:
            return {}
        condition, params = self.db.any_of("id", sorted(set(ids)))
        return dict(self.db.rows(f"SELECT id, coalesce(duplicate_of, id) FROM papers"
                                 f" WHERE {condition}", params))

    def _categories_of(self, ids: Sequence[str]) -> dict[str, list[str]]:
        condition, params = self.db.any_of("paper_id", sorted(set(ids)))
        return grouped(self.db.rows(f"SELECT paper_id, category FROM paper_categories"
                                    f" WHERE {condition} ORDER BY paper_id, position", params))

    def stats(self) -> dict[str, Any]:
        """papers, distinct_papers, duplicates, authors, by_source, by_category, by_month
        (of announcement, or submission), full_text_index_pending, indexes_pending."""
        with self.db.snapshot():
            total, duplicates, authors = self.db.rows(
                "SELECT count(*), count(duplicate_of), (SELECT count(*) FROM authors)"
                " FROM papers")[0]
            by_source: dict[str, int] = {}
            for source, n in self.db.rows(
                    "SELECT source, count(*) FROM paper_sources GROUP BY source ORDER BY source"):
                by_source[source_kind(source)] = by_source.get(source_kind(source), 0) + n
            by_category = dict(self.db.rows(
                "SELECT coalesce(primary_category, '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 2 DESC, 1"))
            by_month = dict(self.db.rows(
                "SELECT coalesce(substr(sort_date, 1, 7), '?'), count(*) FROM papers"
                " WHERE duplicate_of IS NULL GROUP BY 1 ORDER BY 1"))
        return {"papers": total, "distinct_papers": total - duplicates, "duplicates": duplicates,
                "authors": authors, **self._pending(),
                "by_source": by_source, "by_category": by_category, "by_month": by_month}

    def _pending(self) -> dict[str, Any]:
        """What a bulk load has still to build (a backend that defers nothing: nothing)."""
        return {"full_text_index_pending": False, "indexes_pending": []}

    def iter_papers(self, ids: Sequence[str] | None = None, since: str | None = None,
                    batch: int = 1000) -> Iterable[dict[str, Any]]:
        """Live papers (all, or these ids; from `since` on) in storage order, with `authors`
        as a list of names: what the stages read."""
        where, params = live_since(since)
        if ids is not None:
            condition, wanted = self.db.any_of("id", list(ids))
            yield from _paper_dicts(self.db.dicts(
                f"{SELECT} p WHERE {condition} AND {where} ORDER BY pk", (*wanted, *params)))
            return
        for rows in self.db.walk(f"{SELECT} p WHERE {where}", params, batch):
            yield from _paper_dicts(rows)

    def paper_dates(self, ids: Sequence[str] | None = None) -> dict[str, str | None]:
        """sort_date of live papers (all, or these)."""
        condition, params = ("1 = 1", []) if ids is None else self.db.any_of("id", list(ids))
        return dict(self.db.rows("SELECT id, sort_date FROM papers WHERE duplicate_of IS NULL"
                                 f" AND {condition}", params))

    def primary_categories(self) -> dict[str, str | None]:
        return dict(self.db.rows(
            "SELECT id, primary_category FROM papers WHERE duplicate_of IS NULL"))

    # ------------------------------------------- steps of the upsert
    def _plan(self, todo: Sequence[PreparedRecord]) -> tuple[
            dict[str, Any], dict[str, int], list[PreparedRecord], list[PreparedRecord],
            list[PreparedRecord]]:
        """For records whose source gave something new: the stored rows of their papers,
        their authors' ids (missing ones created), and the records as merges into stored
        papers, papers new to the store, and repeats of a new paper within the batch."""
        current = self._current_rows([p.id for p in todo])
        author_ids = self._author_ids(
            dict(zip((n for p in todo for n in p.authors), (s for p in todo for s in p.slugs),
                     strict=True)))
        fresh: dict[str, PreparedRecord] = {}  # by id, in order
        merges: list[PreparedRecord] = []
        repeats: list[PreparedRecord] = []
        for item in todo:
            if item.id in current:
                merges.append(item)
            elif item.id in fresh:
                repeats.append(item)
            else:
                fresh[item.id] = item
        # Stored papers in pk order (writers lock rows in one order; SQLite's FTS5 flushes its
        # pending terms whenever a write goes to a lower rowid than the last one, ~10 ms each).
        merges.sort(key=lambda item: current[item.id]["pk"])
        refresh_keys(self.db, merges + repeats)  # issue 35: what a changed record links to
        return current, author_ids, merges, list(fresh.values()), repeats

    def _author_ids(self, wanted: dict[str, str]) -> dict[str, int]:
        """Ids for these author names (name -> slug), creating missing ones (the backend's
        _add_authors) with the slug wanted, else the first free one of slug-2, slug-3, ..."""
        names = [n for n in wanted if n]
        if not names:
            return {}
        among, params = self.db.any_of("name", names)
        ids = dict(self.db.rows(f"SELECT name, id FROM authors WHERE {among}", params))
        missing = [n for n in names if n not in ids]
        if not missing:
            return ids
        among, params = self.db.any_of("slug", list({wanted[n] for n in missing}))
        taken = set(self.db.column(f"SELECT slug FROM authors WHERE {among}", params))
        new = []
        for name in missing:
            slug, n = wanted[name], 1
            while slug in taken or (n > 1 and self.db.value(
                    "SELECT 1 FROM authors WHERE slug = ?", (slug,))):
                n += 1
                slug = f"{wanted[name]}-{n}"
            taken.add(slug)
            new.append((name, slug))
        ids.update(self._add_authors(new))
        if len(ids) < len(names):  # only a writer that skipped the papers lock could do this
            raise StoreError("authors were written by another writer at the same time")
        return ids

    def _duplicated(self, items: Sequence[PreparedRecord]) -> dict[str, str]:
        """{id: the paper it duplicates} of these new papers: the first stored live paper with its
        lowercased DOI, else with its title key, else an earlier one of these with either."""
        by_doi: dict[str, str] = {}
        by_key: dict[str, str] = {}
        for found, column, values in ((by_doi, "lower(doi)", [p.doi_key for p in items]),
                                      (by_key, "norm_key", [p.norm_key for p in items])):
            if wanted := sorted({value for value in values if value}):
                among, params = self.db.any_of(column, wanted)
                for paper_id, value in self.db.rows(
                        f"SELECT id, {column} FROM papers WHERE {among}"
                        " AND duplicate_of IS NULL ORDER BY pk DESC", params):
                    found[value] = paper_id  # DESC order: the earliest stored one is written last
        originals = {}
        for item in items:
            doi, key = item.doi_key, item.norm_key
            original = (by_doi.get(doi) if doi else None) or (by_key.get(key) if key else None)
            if original:
                originals[item.id] = original
            else:  # later papers in this batch with the same DOI or title key link to this one
                for found, value in ((by_doi, doi), (by_key, key)):
                    if value:
                        found.setdefault(value, item.id)
        # Issue 35: records of other sources are matched (sources.matching), every link gets
        # its reason in the merges table, and an unmerged pair stays apart (store.merges).
        return plan_links(self.db, items, originals)


def _paper_dicts(rows: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for paper in rows:
        paper["authors"] = [a for a in paper["authors_text"].split(", ") if a]
        paper["links"] = json.loads(paper["links"])
        yield paper
