"""The static site: every page written as a file with relative links, plus feeds and assets."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.web import links_views, urls, views
from papersift.web.feeds import atom_feed
from papersift.web.render import HERE, Linker, render_page, static_file


def _paged(path: str, build: Callable[[str | None], dict[str, Any]]) -> Iterator[
        tuple[str, dict[str, Any]]]:
    """Every page of a paginated listing, following its own 'next' links."""
    page = 1
    while True:
        data = build(str(page))
        yield (path if page == 1 else f"{path}?page={page}"), data
        more = data.get("pagination", {}).get("next") or data.get("older")
        if not more:
            return
        page += 1


def _pages(site: views.Site) -> Iterator[tuple[str, dict[str, Any]]]:
    db = site.store
    yield urls.FRONT, views.front(site)
    yield urls.TOPICS, views.topics_index(site)
    for day in db.pages.all_days():
        yield from _paged(urls.daily(day), lambda p, d=day: views.daily(site, d, p))
    overview = views.topics_overview(site)
    for section in overview["sections"]:
        yield from _paged(section["url"], lambda p, s=section["slug"]: views.section(site, s, p))
        for topic in section["topics"]:
            if topic["size"]:
                yield from _paged(topic["url"],
                                  lambda p, s=topic["slug"]: views.topic(site, s, p))
    yield from _link_pages(site, overview)
    for category, _ in views.category_sizes(site):
        yield from _paged(urls.category(category),
                          lambda p, c=category: views.category(site, c, p))
    for slug in db.pages.authors_with_papers():
        yield from _paged(urls.author(slug), lambda p, s=slug: views.author(site, s, p))
    offset = 0
    while True:
        ids = db.pages.sitemap_slice("papers", 2000, offset)
        if not ids:
            break
        for pid, _ in ids:
            yield urls.paper(pid), views.paper(site, pid)
        offset += len(ids)


def _link_pages(site: views.Site, overview: dict[str, Any]) -> Iterator[
        tuple[str, dict[str, Any]]]:
    """Each topic's weekly briefs (the list, every week, the latest) and every thread."""
    links = site.store.links
    for section in overview["sections"]:
        for topic in section["topics"]:
            stored = site.store.topics.find_topic(topic["slug"])
            weeks = links.brief_weeks(stored["id"]) if stored else []
            if not weeks:
                continue
            yield urls.topic_weeks(topic["slug"]), links_views.topic_weeks(site, topic["slug"])
            yield urls.topic_latest_week(topic["slug"]), links_views.topic_latest_week(
                site, topic["slug"])
            for week in weeks:
                yield urls.topic_week(topic["slug"], week), links_views.topic_week(
                    site, topic["slug"], week)
    offset = 0
    while page := links.list_threads(1000, offset):
        for row in page:
            yield urls.thread(row["id"]), links_views.thread(site, row["id"])
        offset += len(page)


def build_site(settings: Settings, out: Path | str, on_progress: OnProgress = no_progress
               ) -> Report:
    """Write the whole site under `out` (created). Search needs a server, so the static
    pages leave the search box out."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    site = views.Site(settings)
    title, base = settings.site_title, settings.base_url
    shutil.copytree(HERE / "static", out / "static", dirs_exist_ok=True)
    pages = feeds = 0
    for path, data in _pages(site):
        target = out / static_file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_page(data, title, Linker(static_from=path), static_site=True,
                                      sources=views.site_sources(site)), encoding="utf-8")
        pages += 1
        feed = data.get("feed")
        # A page that points at another page's feed (a weekly brief at its topic's briefs)
        # lists no papers of its own: that feed is written by its own page.
        if feed and "?" not in path and "papers" in data:
            feed_file = out / static_file(feed)
            feed_file.parent.mkdir(parents=True, exist_ok=True)
            feed_file.write_bytes(atom_feed(data, base, title))
            feeds += 1
        if pages % 200 == 0:
            on_progress(Progress("build", pages, None, path))
    return Report(stage="build", counts={"pages": pages, "feeds": feeds},
                  details={"out": str(out)}, seconds=time.perf_counter() - started)
