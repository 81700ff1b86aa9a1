"""Read queries of the site's listings: days, topics, sections, categories, authors, sitemap."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from papersift.store.sql import Concern, grouped

# Columns a listing shows; the abstract is cut to the first sentences in Python when needed.
_LISTING = "p.id, p.title, p.abstract, p.authors_text, p.sort_date, p.announced, p.primary_category"
_LIVE = "p.duplicate_of IS NULL"
# Newest first, papers without a date last (SQLite's default for DESC, PostgreSQL's opposite).
_NEWEST = "ORDER BY p.sort_date DESC NULLS LAST, p.id"
# Above this many papers a listing walks the date index (stops after the page); below it,
# fetching the listing's papers by id and sorting them is cheaper.
_BIG = 2000
# A day stored further ahead is a bad date (from before ingest checked dates, or copied in): day
# listings skip it, so it cannot head the front page. Wider than any sensible max_days_ahead.
FEED_HORIZON_DAYS = 31


def feed_horizon() -> str:
    """The last day (ISO) the day listings offer: today (UTC) plus FEED_HORIZON_DAYS."""
    return (datetime.now(UTC).date() + timedelta(days=FEED_HORIZON_DAYS)).isoformat()


class Pages(Concern):
    """A listing row: id, title, abstract, authors_text, sort_date, announced, primary_category,
    lead_authors [{name, slug}] (first three), n_authors, summary (visible, or None) and
    topic ({slug, label, section_slug, section_label, section_position}, or None)."""

    _live_count: tuple[float, int] | None = None  # (when, live papers): see _page

    # ------------------------------------------------------------- decorate
    def _rows(self, sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        """The rows of `sql` with lead authors, summary, topic and section, from one snapshot."""
        with self.db.snapshot():
            rows = self.db.dicts(sql, params)
            ids = [r["id"] for r in rows]
            if not ids:
                return rows
            among, params = self.db.any_of("paper_id", ids)  # no other table here has one
            lead = grouped((pid, {"name": name, "slug": slug}) for pid, name, slug in self.db.rows(
                "SELECT pa.paper_id, a.name, a.slug FROM paper_authors pa"
                f" JOIN authors a ON a.id = pa.author_id WHERE {among} AND pa.position < 3"
                " ORDER BY pa.paper_id, pa.position", params))
            summaries = {r["paper_id"]: r for r in self.db.dicts(
                "SELECT paper_id, tldr, blurb, writer, model, prompt_version, created_at"
                f" FROM summaries WHERE hidden = 0 AND {among}", params)}
            topics = {r["paper_id"]: r for r in self.db.dicts(
                "SELECT pt.paper_id, t.slug, coalesce(t.llm_label, t.label) AS label,"
                " s.slug AS section_slug, s.label AS section_label, s.position AS section_position"
                " FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
                " LEFT JOIN sections s ON s.id = t.section_id"
                f" WHERE {among} AND t.retired_build IS NULL", params)}
            for row in rows:
                row["lead_authors"] = lead.get(row["id"], [])
                row["n_authors"] = len([a for a in row["authors_text"].split(", ") if a])
                row["summary"] = summaries.get(row["id"])
                row["topic"] = topics.get(row["id"])
            return rows

    def _page(self, source: str, params: Sequence[Any], order: str, limit: int, offset: int,
              walk: str | None = None) -> tuple[int, list[dict[str, Any]]]:
        """(the listing's size, one page of it), read from one snapshot. `source` is the
        listing's FROM ... WHERE ... text; `walk`, where given, the same papers read by a walk of
        the date index, taken when cheaper: the walk reads about (offset + limit) * papers / total
        rows, the sort all `total` of the listing's rows."""
        with self.db.snapshot():
            total = int(self.db.value(f"SELECT count(*) {source}", params))
            if offset and offset >= total:
                return total, []
            if walk and total > _BIG:
                now = time.monotonic()
                if self._live_count is None or now - self._live_count[0] > 300:
                    self._live_count = (now, int(self.db.value(
                        "SELECT count(*) FROM papers WHERE duplicate_of IS NULL")))
                if (offset + limit) * self._live_count[1] < total * total:
                    source = walk
            return total, self._rows(f"SELECT {_LISTING} {source} {order} LIMIT ? OFFSET ?",
                                     (*params, limit, offset))

    # ------------------------------------------------------------------ days
    def latest_day(self) -> str | None:
        """The newest announcement (else submission) day, up to feed_horizon(), with a live paper."""
        return self.db.value(f"SELECT max(sort_date) FROM papers p WHERE {_LIVE}"
                             " AND sort_date <= ?", (feed_horizon(),))

    def day_neighbours(self, day: str) -> tuple[str | None, str | None]:
        """(previous day with live papers, next day with live papers up to feed_horizon())."""
        row = self.db.rows(
            f"SELECT (SELECT max(sort_date) FROM papers p WHERE sort_date < ? AND {_LIVE}),"
            " (SELECT min(sort_date) FROM papers p WHERE sort_date > ? AND sort_date <= ?"
            f" AND {_LIVE})", (day, day, feed_horizon()))[0]
        return row[0], row[1]

    def day_papers(self, day: str) -> list[dict[str, Any]]:
        """Every paper of this day, by id, with authors, summary and topic."""
        return self._rows(
            f"SELECT {_LISTING} FROM papers p WHERE p.sort_date = ? AND {_LIVE} ORDER BY p.id",
            (day,))

    def day_papers_page(self, day: str, limit: int, offset: int
                        ) -> tuple[int, list[dict[str, Any]]]:
        """(papers of the day, one page of them by id)."""
        return self._page(f"FROM papers p WHERE p.sort_date = ? AND {_LIVE}", (day,),
                          "ORDER BY p.id", limit, offset)

    def all_days(self) -> list[str]:
        """Every day up to feed_horizon() with a live paper, newest first."""
        return self.db.column(
            "SELECT DISTINCT sort_date FROM papers WHERE sort_date IS NOT NULL"
            " AND duplicate_of IS NULL AND sort_date <= ? ORDER BY 1 DESC", (feed_horizon(),))

    # ---------------------------------------------------------------- topics
    def topic_papers_page(self, topic_id: int, limit: int, offset: int
                          ) -> tuple[int, list[dict[str, Any]]]:
        """(papers in the topic, one page of them newest first)."""
        with self.db.snapshot():
            total = int(self.db.value("SELECT count(*) FROM paper_topics WHERE topic_id = ?",
                                      (topic_id,)))
            if offset and offset >= total:
                return total, []
            # Topics cluster in time, so walking the date index can read far more rows than the
            # topic has: order the topic's ids by date from the covering index, then read a page.
            ids = self.db.column(
                "SELECT p.id FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
                f" WHERE pt.topic_id = ? AND {_LIVE} {_NEWEST} LIMIT ? OFFSET ?",
                (topic_id, limit, offset))
            found = self.listing_by_ids(ids)
        return total, [found[i] for i in ids if i in found]

    def section_papers_page(self, section_id: int, limit: int, offset: int) -> list[dict[str, Any]]:
        """Newest papers of a section; walks the date index, so early pages cost little."""
        papers = self.db.indexed("papers p", "papers_sort_date") or "papers p"
        return self._rows(
            f"SELECT {_LISTING} FROM {papers} JOIN paper_topics pt ON pt.paper_id = p.id"
            f" JOIN topics t ON t.id = pt.topic_id WHERE t.section_id = ? AND {_LIVE}"
            f" {_NEWEST} LIMIT ? OFFSET ?", (section_id, limit, offset))

    # ------------------------------------------------------------ categories
    def category_papers_page(self, category: str, limit: int, offset: int
                             ) -> tuple[int, list[dict[str, Any]]]:
        """Papers carrying this category (primary or cross-list): (count, a page newest first)."""
        walked = self.db.indexed("papers p", "papers_sort_date")
        # A big category: walk the date index and stop after the page (cheap for early pages).
        walk = walked and (f"FROM {walked} WHERE {_LIVE} AND EXISTS (SELECT 1 FROM"
                           " paper_categories c WHERE c.paper_id = p.id AND c.category = ?)")
        return self._page("FROM paper_categories c JOIN papers p ON p.id = c.paper_id"
                          f" WHERE c.category = ? AND {_LIVE}", (category,), _NEWEST,
                          limit, offset, walk)

    def category_sizes(self) -> list[tuple[str, int]]:
        """(category, papers) for every category, largest first."""
        return [(r[0], r[1]) for r in self.db.rows(
            "SELECT c.category, count(*) FROM paper_categories c JOIN papers p ON p.id = c.paper_id"
            f" WHERE {_LIVE} GROUP BY 1 ORDER BY 2 DESC, 1")]

    def category_namespaces(self, namespaces: Sequence[str]) -> list[str]:
        """Which of these namespaces ('biorxiv' for 'biorxiv/neuroscience') some category is in, and
        '' if one has none (arXiv's): an index probe each, cheap at any size (retired count too)."""
        probes = [("", "SELECT 1 FROM paper_categories WHERE category NOT LIKE '%/%'", ())]
        probes += [(ns, "SELECT 1 FROM paper_categories WHERE category >= ? AND category < ?",
                    (f"{ns}/", f"{ns}0")) for ns in namespaces]  # '0' sorts right after '/'
        return [ns for ns, sql, params in probes if self.db.one(sql + " LIMIT 1", params)]

    # --------------------------------------------------------------- authors
    def find_author(self, slug: str) -> dict[str, Any] | None:
        return self.db.one("SELECT id, name, slug FROM authors WHERE slug = ?", (slug,))

    def author_papers_page(self, author_id: int, limit: int, offset: int
                           ) -> tuple[int, list[dict[str, Any]]]:
        """(the author's live papers, one page of them newest first)."""
        return self._page("FROM paper_authors pa JOIN papers p ON p.id = pa.paper_id"
                          f" WHERE pa.author_id = ? AND {_LIVE}", (author_id,),
                          "ORDER BY p.sort_date DESC NULLS LAST, p.id DESC", limit, offset)

    def coauthors(self, author_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """Most frequent co-authors: name, slug, papers together."""
        return self.db.dicts(
            "SELECT a.name, a.slug, count(*) AS papers FROM paper_authors mine"
            " JOIN paper_authors other ON other.paper_id = mine.paper_id"
            " AND other.author_id != mine.author_id JOIN authors a ON a.id = other.author_id"
            " WHERE mine.author_id = ? GROUP BY a.id ORDER BY papers DESC, a.name LIMIT ?",
            (author_id, limit))

    def author_topics(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        """The author's topics, most papers first: slug, label, papers."""
        return self.db.dicts(
            "SELECT t.slug, coalesce(t.llm_label, t.label) AS label, count(*) AS papers"
            " FROM paper_authors pa JOIN paper_topics pt ON pt.paper_id = pa.paper_id"
            " JOIN topics t ON t.id = pt.topic_id WHERE pa.author_id = ?"
            " AND t.retired_build IS NULL GROUP BY t.id ORDER BY papers DESC, label LIMIT ?",
            (author_id, limit))

    def author_categories(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        """The author's primary categories, most papers first: category, papers."""
        return self.db.dicts(
            "SELECT p.primary_category AS category, count(*) AS papers FROM paper_authors pa"
            " JOIN papers p ON p.id = pa.paper_id WHERE pa.author_id = ?"
            f" AND {_LIVE} AND p.primary_category IS NOT NULL GROUP BY 1"
            " ORDER BY papers DESC, 1 LIMIT ?", (author_id, limit))

    # ---------------------------------------------------------------- by id
    def listing_by_ids(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Listing rows for these ids (duplicates excluded), keyed by id."""
        among, params = self.db.any_of("p.id", list(ids))
        return {r["id"]: r for r in self._rows(
            f"SELECT {_LISTING} FROM papers p WHERE {among} AND {_LIVE}", params)}

    # --------------------------------------------------------------- sitemap
    def sitemap_counts(self) -> dict[str, int]:
        """Live papers, authors and live topics."""
        return self.db.dicts(
            "SELECT (SELECT count(*) FROM papers WHERE duplicate_of IS NULL) AS papers,"
            " (SELECT count(*) FROM authors) AS authors,"
            " (SELECT count(*) FROM topics WHERE retired_build IS NULL) AS topics")[0]

    def sitemap_slice(self, kind: str, limit: int, offset: int) -> list[tuple[str, str | None]]:
        """(key, last date) of papers, authors, topics or sections in a stable order."""
        sql = {
            "papers": "SELECT id, sort_date FROM papers WHERE duplicate_of IS NULL ORDER BY pk",
            "authors": "SELECT slug, NULL FROM authors ORDER BY id",
            "topics": "SELECT slug, NULL FROM topics WHERE retired_build IS NULL ORDER BY id",
            "sections": "SELECT slug, NULL FROM sections ORDER BY position, id",
        }[kind]
        return [(r[0], r[1]) for r in self.db.rows(f"{sql} LIMIT ? OFFSET ?", (limit, offset))]

    def authors_with_papers(self) -> Iterator[str]:
        """Slugs of authors that have at least one shown paper (for the static export)."""
        yield from self.db.column(
            "SELECT a.slug FROM authors a WHERE EXISTS (SELECT 1 FROM paper_authors pa"
            " JOIN papers p ON p.id = pa.paper_id WHERE pa.author_id = a.id"
            f" AND {_LIVE}) ORDER BY a.id")
