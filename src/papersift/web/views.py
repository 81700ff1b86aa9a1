"""Page data: each view builds ONE dict that is both the template's context and the JSON twin."""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from papersift.search import similar_papers
from papersift.search.onnx_export import model_ready
from papersift.settings import Settings
from papersift.store import Store, open_store
from papersift.web import urls
from papersift.web.authorline import author_line
from papersift.web.categories import category_field, category_label, is_category
from papersift.web.merged import id_label, record_view, source_label
from papersift.web.text import bibtex, first_sentences, plain, readable

log = logging.getLogger(__name__)

STORIES_PER_SECTION = 3
# The front page shows at least this many stories when the store has them: a thin latest day
# is joined by the days before it.
FRONT_MIN_STORIES = 20
TREND_WEEKS = 12
# Enough of a raw abstract to hold its first sentences: cleaning all of it for a listing is waste.
_OPENING = 600
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class NotFound(Exception):
    """No such page; the message says what was looked for."""


class Redirect(Exception):  # noqa: N818  (a control-flow signal, not an error)
    """The page moved for good (old topic slug)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


class Site:
    """Settings, one store connection per thread, and a few short-lived caches."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._local = threading.local()
        self._cache: dict[str, tuple[float, Any]] = {}
        open_store(settings).close()  # apply migrations once, before serving

    @property
    def store(self) -> Store:
        db = getattr(self._local, "store", None)
        if db is None:
            db = self._local.store = open_store(self.settings)
        return db

    def with_store(self, work: Callable[..., Any], *args: Any) -> Any:
        """work(store, *args) with the calling thread's store. What runs in a thread pool
        calls this there: a store taken on the event loop's thread and handed to pool
        threads would be one connection shared by concurrent requests (two readers' writes
        at once were one SQLite transaction inside another: an error page)."""
        return work(self.store, *args)

    def cached(self, key: str, ttl: float, compute: Callable[[], Any]) -> Any:
        hit = self._cache.get(key)
        now = time.monotonic()
        if hit and now - hit[0] < ttl:
            return hit[1]
        value = compute()
        self._cache[key] = (now, value)
        return value

    def peek(self, key: str) -> Any:
        """What `cached` last computed for key, however old, or None."""
        hit = self._cache.get(key)
        return hit[1] if hit else None

    @property
    def page_size(self) -> int:
        return max(1, int(self.settings.page_size_web))


# ------------------------------------------------------------------ helpers
def _topic_ref(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if not row:
        return None
    return {"slug": row["slug"], "label": row["label"], "url": urls.topic(row["slug"])}


def item(row: dict[str, Any], full_abstract: bool = False) -> dict[str, Any]:
    """One paper as a listing shows it."""
    summary = row.get("summary")
    blurb = plain(summary["blurb"]) if summary and summary.get("blurb") else ""
    abstract = readable(row["abstract"]) if full_abstract else ""
    authors = [{"name": a["name"], "url": urls.author(a["slug"])} for a in row["lead_authors"]]
    data = {
        "id": row["id"],
        "title": readable(row["title"]),
        "url": urls.paper(row["id"]),
        "date": row["sort_date"],
        "authors": authors,
        "n_authors": row["n_authors"],
        "author_line": author_line([a["name"] for a in authors], row["n_authors"]),
        "tldr": plain(summary["tldr"]) if summary and summary.get("tldr") else None,
        "blurb": blurb or first_sentences(abstract or readable(row["abstract"][:_OPENING])),
        "blurb_from": "summary" if blurb else "abstract",
        "topic": _topic_ref(row.get("topic")),
        "category": row["primary_category"],
    }
    if full_abstract:
        data["abstract"] = abstract
    return data


def pagination(path: str, page: int, total: int, size: int, **params: Any) -> dict[str, Any]:
    pages = max(1, math.ceil(total / size))
    lo, hi = max(1, page - 3), min(pages, page + 3)
    return {
        "page": page, "pages": pages, "total": total, "size": size,
        "prev": urls.with_query(path, page=page - 1, **params) if page > 1 else None,
        "next": urls.with_query(path, page=page + 1, **params) if page < pages else None,
        "first": urls.with_query(path, **params) if lo > 1 else None,
        "last": urls.with_query(path, page=pages, **params) if hi < pages else None,
        "numbers": [{"n": n, "url": urls.with_query(path, page=n, **params), "current": n == page}
                    for n in range(lo, hi + 1)],
    }


def parse_page(raw: str | None) -> int:
    if raw in (None, ""):
        return 1
    try:
        page = int(raw)
    except ValueError:
        raise NotFound(f"page {raw!r} is not a page number") from None
    if page < 1:
        raise NotFound(f"page {page} does not exist")
    return page


def _check_page(page: int, total: int, size: int) -> None:
    if page > 1 and (page - 1) * size >= total:
        raise NotFound(f"page {page} is past the last page")


def count_phrase(total: int, page: int, pages: int) -> str:
    noun = "article" if total == 1 else "articles"
    return f"{total:,} {noun} · page {page} of {pages}"


# ---------------------------------------------------------------- sections
def _section_key(row: dict[str, Any], topics_exist: bool) -> tuple[Any, str, str, str]:
    """(sort key, slug, label, url) of the section a paper is shown under."""
    topic = row.get("topic")
    if topic and topic.get("section_slug"):
        return ((0, topic["section_position"] or 0), topic["section_slug"],
                topic["section_label"], urls.section(topic["section_slug"]))
    if topics_exist and topic:
        return (1, 0), "other", "Other", urls.section("other")
    category = row["primary_category"] or "unknown"
    return ((2, 0), f"cat-{category}", category_label(category), urls.category(category))


def _top_stories(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Papers with a written blurb make the better top stories; among them, the newest first.
    newest = sorted(rows, key=lambda r: (r.get("sort_date") or "", r["id"]), reverse=True)
    return sorted(newest, key=lambda r: 0 if r.get("summary") else 1)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def day_span(days: list[str]) -> str:
    """The days a page shows, as a reader says them: '29 June 2026', '27–29 June 2026',
    '30 May – 2 June 2026', '30 December 2025 – 2 January 2026'."""
    first, last = date.fromisoformat(min(days)), date.fromisoformat(max(days))
    end = f"{last.day} {_MONTHS[last.month - 1]} {last.year}"
    if first == last:
        return end
    if (first.year, first.month) == (last.year, last.month):
        return f"{first.day}–{end}"
    if first.year == last.year:
        return f"{first.day} {_MONTHS[first.month - 1]} – {end}"
    return f"{first.day} {_MONTHS[first.month - 1]} {first.year} – {end}"


def _front_days(db: Store) -> tuple[list[str], list[dict[str, Any]]]:
    """The latest announcement day, and the days before it, one at a time, until their
    papers can fill FRONT_MIN_STORIES stories (or no day is left): (days newest first, rows)."""
    days: list[str] = []
    rows: list[dict[str, Any]] = []
    day = db.pages.latest_day()
    while day is not None:
        days.append(day)
        rows += db.pages.day_papers(day)
        if len(rows) >= FRONT_MIN_STORIES:
            break
        day = db.pages.day_neighbours(day)[0]
    return days, rows


def _story_quotas(sizes: list[int], minimum: int) -> list[int]:
    """Stories per section: up to STORIES_PER_SECTION each, then one more at a time, largest
    sections first, until the page has `minimum` stories or every paper is a story."""
    quotas = [min(STORIES_PER_SECTION, size) for size in sizes]
    while sum(quotas) < minimum:
        open_ = [i for i, size in enumerate(sizes) if quotas[i] < size]
        if not open_:
            break
        for i in open_[:minimum - sum(quotas)]:
            quotas[i] += 1
    return quotas


def _front_sections(db: Store, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The papers grouped by section (in section order), each with its top stories."""
    topics_exist = db.topics.has_topics()
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        order, slug, label, url = _section_key(row, topics_exist)
        group = groups.setdefault(slug, {"order": order, "slug": slug, "label": label,
                                         "url": url, "rows": []})
        group["rows"].append(row)
    ordered = sorted(groups.values(), key=lambda g: (g["order"], -len(g["rows"]), g["label"]))
    quotas = _story_quotas([len(g["rows"]) for g in ordered], FRONT_MIN_STORIES)
    sections = []
    for group, quota in zip(ordered, quotas, strict=True):
        top = _top_stories(group.pop("rows"))
        group.pop("order")
        stories = [item(r) for r in top[:quota]]
        sections.append({**group, "count": len(top), "stories": stories,
                         "more": len(top) - len(stories)})
    return sections


def front(site: Site) -> dict[str, Any]:
    """The latest announcement day; when it has fewer than FRONT_MIN_STORIES papers, the days
    before it too, and the page says which days it shows."""
    db = site.store
    days, rows = _front_days(db)
    day = days[0] if days else None
    data: dict[str, Any] = {
        "page": "front", "title": site.settings.site_title, "path": urls.FRONT,
        "feed": urls.FRONT_FEED, "day": day, "day_url": urls.daily(day) if day else None,
        "days": [{"day": d, "url": urls.daily(d)} for d in days],
        "span": day_span(days) if days else None, "sections": [], "papers": [],
    }
    if day is None:
        return data
    data["sections"] = _front_sections(db, rows)
    data["papers"] = [story for section in data["sections"] for story in section["stories"]]
    data["count"] = len(rows)
    return data


def daily(site: Site, day: str, page_raw: str | None = None) -> dict[str, Any]:
    """All papers of a day, a page at a time (a busy day has 500), with the days around it."""
    if not _DAY.match(day):
        raise NotFound(f"{day!r} is not a day like 2026-06-30")
    page = parse_page(page_raw)
    db = site.store
    size = site.page_size
    total, rows = db.pages.day_papers_page(day, size, (page - 1) * size)
    if total == 0:
        raise NotFound(f"no papers were announced on {day}")
    _check_page(page, total, size)
    prev, nxt = db.pages.day_neighbours(day)
    path = urls.daily(day)
    pages = pagination(path, page, total, size)
    noun = "paper" if total == 1 else "papers"
    return {
        "page": "daily", "title": f"Papers of {day}", "path": path,
        "feed": None, "day": day, "count": total,
        "count_line": f"{total:,} {noun} · page {page} of {pages['pages']}",
        "pagination": pages,
        "prev": {"day": prev, "url": urls.daily(prev)} if prev else None,
        "next": {"day": nxt, "url": urls.daily(nxt)} if nxt else None,
        "papers": [item(r) for r in rows],
    }


def _weeks(last_day: str | None) -> list[str]:
    if not last_day:
        return []
    end = date.fromisoformat(last_day)
    monday = end - timedelta(days=end.weekday())
    return [(monday - timedelta(weeks=n)).isoformat() for n in range(TREND_WEEKS - 1, -1, -1)]


def _topics_overview(site: Site) -> dict[str, Any]:
    db = site.store
    weeks = _weeks(db.pages.latest_day())
    counts = db.topics.weekly_topic_counts(since=weeks[0]) if weeks else {}
    sections = db.topics.list_sections()
    unsectioned = [t for t in db.topics.list_topics() if t["section_id"] is None]
    if unsectioned:  # the "other" bucket belongs to no section
        sections.append({"slug": "other", "label": "Other", "topics": unsectioned})
    overview = []
    for section in sections:
        # An empty topic (an "other" bucket nothing fell into) is not listed: it has no page.
        topics = [{
            "slug": t["slug"], "label": t["label"], "url": urls.topic(t["slug"]),
            "size": t["size"], "is_other": t["is_other"],
            "trend": [counts.get(t["id"], {}).get(w, 0) for w in weeks],
        } for t in sorted(section["topics"], key=lambda t: (t["is_other"], t["label"]))
            if t["size"]]
        if topics:
            overview.append({"slug": section["slug"], "label": section["label"],
                             "url": urls.section(section["slug"]), "topics": topics,
                             "size": sum(t["size"] for t in topics)})
    return {"weeks": weeks, "sections": overview}


def topics_overview(site: Site) -> dict[str, Any]:
    return site.cached("topics-overview", 60.0, lambda: _topics_overview(site))


def category_sizes(site: Site) -> list[tuple[str, int]]:
    """Categories of every source with their paper counts, largest first (cached a minute)."""
    return site.cached("category-sizes", 60.0, lambda: [
        (c, n) for c, n in site.store.pages.category_sizes() if is_category(c)])


# The sites behind the category namespaces (sources.categories): '' is arXiv's plain codes, and a
# journal's papers come through Crossref.
_SOURCE_SITES = {"": ("arXiv", "https://arxiv.org/"),
                 "biorxiv": ("bioRxiv", "https://www.biorxiv.org/"),
                 "medrxiv": ("medRxiv", "https://www.medrxiv.org/"),
                 "crossref": ("Crossref", "https://www.crossref.org/"),
                 "journal": ("Crossref", "https://www.crossref.org/")}


def site_sources(site: Site, compute: bool = True) -> list[dict[str, str]]:
    """Where the store's papers come from, for the footer ("papers from arXiv and bioRxiv"):
    cached ten minutes; arXiv alone for an empty store or, with compute False (an error
    page, which must not touch the store), until a page has asked."""
    key = "site-sources"
    found = site.cached(key, 600.0, lambda: site.store.pages.category_namespaces(
        [ns for ns in _SOURCE_SITES if ns])) if compute else site.peek(key)
    names = dict.fromkeys(_SOURCE_SITES[ns] for ns in found or [""])
    return [{"name": name, "url": url} for name, url in names]


def topics_index(site: Site) -> dict[str, Any]:
    overview = topics_overview(site)
    data = {"page": "topics", "title": "Topics", "path": urls.TOPICS, "feed": None,
            "weeks": overview["weeks"], "sections": overview["sections"], "categories": []}
    if not overview["sections"]:  # no topics yet: the categories stand in for them
        data["categories"] = [
            {"category": c, "label": category_label(c), "url": urls.category(c), "size": n,
             "field": category_field(c)}
            for c, n in category_sizes(site)]
    return data


def section(site: Site, slug: str, page_raw: str | None) -> dict[str, Any]:
    page = parse_page(page_raw)
    overview = topics_overview(site)
    found = next((s for s in overview["sections"] if s["slug"] == slug), None)
    if found is None:
        raise NotFound(f"no section {slug!r}")
    stored = site.store.topics.find_section(slug)
    size = site.page_size
    # One row more than the page tells whether an older page exists without counting them all.
    rows = site.store.pages.section_papers_page(stored["id"], size + 1, (page - 1) * size) \
        if stored else []
    if page > 1 and not rows:
        raise NotFound(f"page {page} is past the last page")
    has_older = len(rows) > size
    rows = rows[:size]
    path = urls.section(slug)
    return {
        "page": "section", "title": found["label"], "path": path, "feed": None,
        "section": {"slug": slug, "label": found["label"], "size": found["size"]},
        "weeks": overview["weeks"], "topics": found["topics"],
        "papers": [item(r) for r in rows],
        "older": urls.with_query(path, page=page + 1) if has_older else None,
        "newer": urls.with_query(path, page=page - 1) if page > 1 else None,
    }


def topic(site: Site, slug: str, page_raw: str | None) -> dict[str, Any]:
    page = parse_page(page_raw)
    db = site.store
    found = db.topics.find_topic(slug)
    if found is None:
        raise NotFound(f"no topic {slug!r}")
    if found.get("redirected_from"):
        raise Redirect(urls.with_query(urls.topic(found["slug"]), page=page))
    size = site.page_size
    total, rows = db.pages.topic_papers_page(found["id"], size, (page - 1) * size)
    _check_page(page, total, size)
    pages = pagination(urls.topic(slug), page, total, size)
    phrases = found["key_phrases"]
    return {
        "page": "topic", "title": found["label"], "path": urls.topic(slug),
        "feed": urls.feed(urls.topic(slug)),
        "topic": {"slug": slug, "label": found["label"], "key_phrases": phrases,
                  "week_url": urls.topic_latest_week(slug)
                  if db.links.brief_weeks(found["id"]) else None,
                  "section": {"label": found["section_label"],
                              "url": urls.section(found["section_slug"])}
                  if found["section_slug"] else None},
        "count_line": count_phrase(total, page, pages["pages"]),
        "pagination": pages, "papers": [item(r) for r in rows],
    }


def category(site: Site, name: str, page_raw: str | None) -> dict[str, Any]:
    page = parse_page(page_raw)
    size = site.page_size
    if not is_category(name):
        raise NotFound(f"{name!r} is not a category")
    total, rows = site.store.pages.category_papers_page(name, size, (page - 1) * size)
    if total == 0:
        raise NotFound(f"no papers in category {name!r}")
    _check_page(page, total, size)
    path = urls.category(name)
    pages = pagination(path, page, total, size)
    return {
        "page": "category", "title": category_label(name), "path": path,
        "feed": None, "category": name, "count_line": count_phrase(total, page, pages["pages"]),
        "pagination": pages, "papers": [item(r) for r in rows],
    }


def author(site: Site, slug: str, page_raw: str | None) -> dict[str, Any]:
    page = parse_page(page_raw)
    db = site.store
    found = db.pages.find_author(slug)
    if found is None:
        raise NotFound(f"no author {slug!r}")
    size = site.page_size
    total, rows = db.pages.author_papers_page(found["id"], size, (page - 1) * size)
    _check_page(page, total, size)
    path = urls.author(slug)
    pages = pagination(path, page, total, size)
    topics = [{"label": t["label"], "url": urls.topic(t["slug"]), "papers": t["papers"]}
              for t in db.pages.author_topics(found["id"])]
    if not topics:
        topics = [{"label": category_label(c["category"]), "url": urls.category(c["category"]),
                   "papers": c["papers"]} for c in db.pages.author_categories(found["id"])]
    return {
        "page": "author", "title": found["name"], "path": path, "feed": urls.feed(path),
        "author": {"name": found["name"], "slug": slug, "papers": total},
        "count_line": count_phrase(total, page, pages["pages"]),
        "pagination": pages, "papers": [item(r, full_abstract=True) for r in rows],
        "coauthors": [{"name": c["name"], "url": urls.author(c["slug"]), "papers": c["papers"]}
                      for c in db.pages.coauthors(found["id"])],
        "topics": topics,
    }


def similar(site: Site, pid: str, limit: int = 6) -> list[dict[str, Any]]:
    if not site.store.embeddings.has_embedding(pid) or not model_ready(site.settings):
        # The embed stage has not reached it, or the model is not exported yet (a vector of
        # another model would be embedded again): no neighbours, and no export in a request.
        return []
    try:
        found = similar_papers(site.store, site.settings, pid, limit=limit)
    except Exception as exc:  # no embeddings yet, index missing: the page still works
        log.info("similar papers for %s unavailable: %s", pid, exc)
        return []
    ids = [hit.paper_id for hit in found if hit.paper_id != pid][:limit]
    rows = site.store.pages.listing_by_ids(ids)
    return [item(rows[i]) for i in ids if i in rows]


def provenance(summary: dict[str, Any]) -> str:
    who = "an LLM" if summary["writer"] == "llm" else "the built-in writer"
    model = f" ({summary['model']})" if summary.get("model") else ""
    prompt = f", prompt {summary['prompt_version']}" if summary.get("prompt_version") else ""
    when = (summary.get("created_at") or "")[:10]
    return f"Written by {who}{model}{prompt} on {when} from the abstract; check the paper."


def paper(site: Site, pid: str) -> dict[str, Any]:
    db = site.store
    stored = db.papers.get_paper(pid)
    if stored is None:
        raise NotFound(f"no paper {pid!r}")
    if stored["duplicate_of"]:
        raise Redirect(urls.paper(stored["duplicate_of"]))
    summary = db.summaries.summaries_for([pid]).get(pid)
    no_abstract = not (stored["abstract"] or "").strip()
    if no_abstract:
        summary = None  # a blurb of a title alone would be made up (one written before 35)
    records = [record_view(r) for r in db.merges.paper_records(pid)]
    topic_row = db.topics.paper_topic(pid)
    is_arxiv = ":" not in pid
    links = {"abs": f"https://arxiv.org/abs/{pid}", "pdf": f"https://arxiv.org/pdf/{pid}"} \
        if is_arxiv else {}
    links.update({k: v for k, v in (stored.get("links") or {}).items() if k not in links})
    if stored.get("doi"):
        links["doi"] = f"https://doi.org/{stored['doi']}"
    data = {
        "page": "paper", "title": readable(stored["title"]), "path": urls.paper(pid), "feed": None,
        "paper": {
            "id": pid, "title": readable(stored["title"]), "url": urls.paper(pid),
            "authors": [{"name": a["name"], "url": urls.author(a["slug"])}
                        for a in stored["authors"]],
            "date": stored["sort_date"], "announced": stored["announced"],
            "submitted": stored["submitted"], "version": stored["version"],
            "tldr": plain(summary["tldr"]) if summary else None,
            "blurb": plain(summary["blurb"]) if summary else None,
            "provenance": provenance(summary) if summary else None,
            "summary": {k: summary[k] for k in ("writer", "model", "prompt_version",
                                                "created_at")} if summary else None,
            "abstract": readable(stored["abstract"]),
            "no_abstract": (f"No abstract: {source_label(stored['text_source'])} gives none"
                            " for this paper, so there is no summary either."
                            if no_abstract else None),
            "id_label": id_label(pid, stored["version"]),
            # The page its 'abs' link opens: arXiv's for an arXiv id, else its source's.
            "source": "arXiv" if is_arxiv else source_label(stored["text_source"]),
            "records": records,
            "categories": [{"name": c, "label": category_label(c),
                            # arXiv's codes are what its readers know; other sources' are
                            # shown by name ('Neuroscience (bioRxiv)', not biorxiv/neuroscience)
                            "short": category_label(c) if "/" in c else c,
                            "url": urls.category(c) if is_category(c) else None}
                           for c in stored["categories"]],
            "topic": _topic_ref(topic_row),
            "section": {"label": topic_row["section_label"],
                        "url": urls.section(topic_row["section_slug"])}
            if topic_row and topic_row["section_slug"] else None,
            "comment": stored["comment"], "journal_ref": stored["journal_ref"],
            "doi": stored["doi"], "links": links,
            "bibtex": bibtex({**stored, "title": readable(stored["title"])}),
        },
        "similar": similar(site, pid),
        "links": paper_links(db, pid),
        "papers": [],
    }
    return data


def _link_ref(ref: dict[str, Any]) -> dict[str, Any]:
    return {"name": ref["name"], "id": ref["paper_id"], "title": readable(ref["title"]),
            "date": ref["day"], "url": urls.paper(ref["paper_id"])}


def paper_links(db: Store, pid: str) -> dict[str, Any]:
    """What a paper builds on or compares with (named artefacts of earlier papers), what
    followed it up, the names it could not tell apart, and the threads it belongs to."""
    found = db.links.paper_links(pid)
    threads = db.links.threads_of_papers([pid]).get(pid, [])
    return {
        "builds_on": [_link_ref(r) for r in found["builds_on"]],
        "ambiguous": [{"name": a["name"], "candidates": [_link_ref(dict(c, name=a["name"]))
                                                         for c in a["candidates"]]}
                      for a in found["ambiguous"]],
        "coined": found["coined"],
        "followed_by": {"count": found["followed_by"]["count"],
                        "papers": [_link_ref(r) for r in found["followed_by"]["papers"]]},
        "threads": [{"id": t["id"], "name": t["name"], "url": urls.thread(t["id"]),
                     "size": t["size"], "role": t["role"]} for t in threads],
    }
