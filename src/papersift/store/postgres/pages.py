"""Read queries of the site's listings in PostgreSQL: days, topics, sections, categories, authors, sitemap."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from papersift.store.contracts import feed_horizon
from papersift.store.postgres.db import Concern, snapshot

# Columns a listing shows; the abstract is cut to the first sentences in Python when needed.
_LISTING = (
    "p.id, p.title, p.abstract, p.authors_text, p.sort_date, p.announced, p.primary_category"
)
_LIVE = "p.duplicate_of IS NULL"
_NEWEST = "ORDER BY p.sort_date DESC NULLS LAST, p.id"  # SQLite sorts NULL lowest


class Pages(Concern):
    """The listings' reads (contract: PagesStore); only reads."""

    # ------------------------------------------------------------- decorate
    def _listing_extras(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add to listing rows: first three authors with slugs, visible summary, topic and section."""
        ids = [r["id"] for r in rows]
        if not ids:
            return rows
        lead: dict[str, list[dict[str, str]]] = {}
        for pid, name, slug in self.rows(
                "SELECT pa.paper_id, a.name, a.slug FROM paper_authors pa"
                " JOIN authors a ON a.id = pa.author_id"
                " WHERE pa.paper_id = ANY(%s::text[]) AND pa.position < 3"
                " ORDER BY pa.paper_id, pa.position", (ids,)):
            lead.setdefault(pid, []).append({"name": name, "slug": slug})
        summaries = {r["paper_id"]: r for r in self.dicts(
            "SELECT paper_id, tldr, blurb, writer, model, prompt_version, created_at"
            " FROM summaries WHERE hidden = 0 AND paper_id = ANY(%s::text[])", (ids,))}
        topics = {r["paper_id"]: r for r in self.dicts(
            "SELECT pt.paper_id, t.slug, coalesce(t.llm_label, t.label) AS label,"
            " s.slug AS section_slug, s.label AS section_label, s.position AS section_position"
            " FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
            " LEFT JOIN sections s ON s.id = t.section_id"
            " WHERE pt.paper_id = ANY(%s::text[]) AND t.retired_build IS NULL", (ids,))}
        for row in rows:
            row["lead_authors"] = lead.get(row["id"], [])
            row["n_authors"] = len([a for a in row["authors_text"].split(", ") if a])
            row["summary"] = summaries.get(row["id"])
            row["topic"] = topics.get(row["id"])
        return rows

    def _rows(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        with snapshot(self.conn):
            return self._listing_extras(self.dicts(sql, params))

    def _page(self, count_sql: str, sql: str, params: Sequence[Any], offset: int
              ) -> tuple[int, list[dict[str, Any]]]:
        """(the listing's size, one page of it), read from one snapshot."""
        with snapshot(self.conn):
            total = int(self.value(count_sql, params))
            if offset and offset >= total:
                return total, []
            return total, self._rows(sql, params)

    # ------------------------------------------------------------------ days
    def latest_day(self) -> str | None:
        return self.value(f"SELECT max(sort_date) FROM papers p WHERE {_LIVE}"
                          " AND sort_date <= %s", (feed_horizon(),))

    def day_neighbours(self, day: str) -> tuple[str | None, str | None]:
        """(previous day with live papers, next day with live papers up to feed_horizon())."""
        return self.one(f"SELECT (SELECT max(sort_date) FROM papers p WHERE sort_date < %(d)s"
                        f" AND {_LIVE}), (SELECT min(sort_date) FROM papers p"
                        f" WHERE sort_date > %(d)s AND sort_date <= %(h)s AND {_LIVE})",
                        {"d": day, "h": feed_horizon()})  # type: ignore[return-value]

    def day_papers(self, day: str) -> list[dict[str, Any]]:
        return self._rows(
            f"SELECT {_LISTING} FROM papers p WHERE p.sort_date = %s AND {_LIVE} ORDER BY p.id",
            (day,))

    def day_papers_page(self, day: str, limit: int, offset: int
                        ) -> tuple[int, list[dict[str, Any]]]:
        where = f"FROM papers p WHERE p.sort_date = %s AND {_LIVE}"
        return self._page(f"SELECT count(*) {where}",
                          f"SELECT {_LISTING} {where} ORDER BY p.id"
                          f" LIMIT {int(limit)} OFFSET {int(offset)}", (day,), offset)

    def all_days(self) -> list[str]:
        return [r[0] for r in self.rows(
            "SELECT DISTINCT sort_date FROM papers WHERE sort_date IS NOT NULL"
            " AND duplicate_of IS NULL AND sort_date <= %s ORDER BY 1 DESC", (feed_horizon(),))]

    # ---------------------------------------------------------------- topics
    def topic_papers_page(self, topic_id: int, limit: int, offset: int
                          ) -> tuple[int, list[dict[str, Any]]]:
        with snapshot(self.conn):
            total = int(self.value("SELECT count(*) FROM paper_topics WHERE topic_id = %s",
                                   (topic_id,)))
            if offset and offset >= total:
                return total, []
            return total, self._rows(
                f"SELECT {_LISTING} FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
                f" WHERE pt.topic_id = %s AND {_LIVE} {_NEWEST} LIMIT %s OFFSET %s",
                (topic_id, limit, offset))

    def section_papers_page(self, section_id: int, limit: int, offset: int
                            ) -> list[dict[str, Any]]:
        return self._rows(
            f"SELECT {_LISTING} FROM papers p JOIN paper_topics pt ON pt.paper_id = p.id"
            f" JOIN topics t ON t.id = pt.topic_id WHERE t.section_id = %s AND {_LIVE}"
            f" {_NEWEST} LIMIT %s OFFSET %s", (section_id, limit, offset))

    # ------------------------------------------------------------ categories
    def category_papers_page(self, category: str, limit: int, offset: int
                             ) -> tuple[int, list[dict[str, Any]]]:
        where = (f"FROM paper_categories c JOIN papers p ON p.id = c.paper_id"
                 f" WHERE c.category = %s AND {_LIVE}")
        return self._page(f"SELECT count(*) {where}",
                          f"SELECT {_LISTING} {where} {_NEWEST}"
                          f" LIMIT {int(limit)} OFFSET {int(offset)}", (category,), offset)

    def category_sizes(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self.rows(
            "SELECT c.category, count(*) FROM paper_categories c JOIN papers p ON p.id = c.paper_id"
            f" WHERE {_LIVE} GROUP BY 1 ORDER BY 2 DESC, 1")]

    # --------------------------------------------------------------- authors
    def find_author(self, slug: str) -> dict[str, Any] | None:
        rows = self.dicts("SELECT id, name, slug FROM authors WHERE slug = %s", (slug,))
        return rows[0] if rows else None

    def author_papers_page(self, author_id: int, limit: int, offset: int
                           ) -> tuple[int, list[dict[str, Any]]]:
        where = (f"FROM paper_authors pa JOIN papers p ON p.id = pa.paper_id"
                 f" WHERE pa.author_id = %s AND {_LIVE}")
        return self._page(f"SELECT count(*) {where}",
                          f"SELECT {_LISTING} {where} ORDER BY p.sort_date DESC NULLS LAST,"
                          f" p.id DESC LIMIT {int(limit)} OFFSET {int(offset)}",
                          (author_id,), offset)

    def coauthors(self, author_id: int, limit: int = 20) -> list[dict[str, Any]]:
        return self.dicts(
            "SELECT a.name, a.slug, count(*) AS papers FROM paper_authors mine"
            " JOIN paper_authors other ON other.paper_id = mine.paper_id"
            " AND other.author_id != mine.author_id JOIN authors a ON a.id = other.author_id"
            " WHERE mine.author_id = %s GROUP BY a.id ORDER BY papers DESC, a.name LIMIT %s",
            (author_id, limit))

    def author_topics(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        return self.dicts(
            "SELECT t.slug, coalesce(t.llm_label, t.label) AS label, count(*) AS papers"
            " FROM paper_authors pa JOIN paper_topics pt ON pt.paper_id = pa.paper_id"
            " JOIN topics t ON t.id = pt.topic_id WHERE pa.author_id = %s"
            " AND t.retired_build IS NULL GROUP BY t.id ORDER BY papers DESC, label LIMIT %s",
            (author_id, limit))

    def author_categories(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        return self.dicts(
            "SELECT p.primary_category AS category, count(*) AS papers FROM paper_authors pa"
            " JOIN papers p ON p.id = pa.paper_id WHERE pa.author_id = %s"
            f" AND {_LIVE} AND p.primary_category IS NOT NULL GROUP BY 1"
            " ORDER BY papers DESC, 1 LIMIT %s", (author_id, limit))

    # ---------------------------------------------------------------- by id
    def listing_by_ids(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Listing rows for these ids (duplicates excluded), keyed by id."""
        return {r["id"]: r for r in self._rows(
            f"SELECT {_LISTING} FROM papers p WHERE p.id = ANY(%s::text[]) AND {_LIVE}",
            (list(ids),))}

    # --------------------------------------------------------------- sitemap
    def sitemap_counts(self) -> dict[str, int]:
        papers, authors, topics = self.one(
            "SELECT (SELECT count(*) FROM papers WHERE duplicate_of IS NULL),"
            " (SELECT count(*) FROM authors),"
            " (SELECT count(*) FROM topics WHERE retired_build IS NULL)")
        return {"papers": papers, "authors": authors, "topics": topics}

    def sitemap_slice(self, kind: str, limit: int, offset: int) -> list[tuple[str, str | None]]:
        """(key, last date) of papers, authors or topics in a stable order."""
        sql = {
            "papers": "SELECT id, sort_date FROM papers WHERE duplicate_of IS NULL ORDER BY pk",
            "authors": "SELECT slug, NULL FROM authors ORDER BY id",
            "topics": "SELECT slug, NULL FROM topics WHERE retired_build IS NULL ORDER BY id",
            "sections": "SELECT slug, NULL FROM sections ORDER BY position, id",
        }[kind]
        return [(r[0], r[1]) for r in self.rows(f"{sql} LIMIT %s OFFSET %s", (limit, offset))]

    def authors_with_papers(self) -> Iterator[str]:
        """Slugs of authors that have at least one shown paper (for the static export)."""
        for row in self.rows(
                "SELECT a.slug FROM authors a WHERE EXISTS (SELECT 1 FROM paper_authors pa"
                " JOIN papers p ON p.id = pa.paper_id WHERE pa.author_id = a.id"
                f" AND {_LIVE}) ORDER BY a.id"):
            yield row[0]
