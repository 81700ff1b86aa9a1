"""Every path of the site, built in one place (routes, pages, feeds, sitemaps and the static export use these)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

FRONT = "/"
FRONT_FEED = "/feed.atom"
DAILY = "/daily"
TOPICS = "/topics"
SEARCH = "/search"
SEARCH_FEED = "/search.atom"
HEALTH = "/healthz"
SITEMAP = "/sitemap.xml"
STATIC = "/static"
LOGIN = "/login"
LOGIN_LINK = "/login/link"
SIGNUP = "/signup"
LOGOUT = "/logout"
ME = "/me"
ME_PROFILE = "/me/profile"
ME_REACT = "/me/react"
ME_FOLLOW = "/me/follow"
ME_UNFOLLOW = "/me/unfollow"
ME_FEEDBACK = "/me/feedback"
ME_ENTRIES = "/me/entries"
ME_ENTRY_DELETE = "/me/entries/delete"
ME_SAVE = "/me/collections"
ME_UNSAVE = "/me/collections/remove"
ME_IMPORT = "/me/import"
ME_CLAIM = "/me/claims"
ME_UNCLAIM = "/me/claims/remove"
ME_FEED = "/me/feed.atom"  # ?token=…: the private feed (the route is ME_FEED_ROUTE)
ME_FEED_ROUTE = "/me/feed"
ME_SCHEDULE = "/me/schedule"
ME_FEED_TOKEN = "/me/feed-token"
ME_EXPORT = "/me/export"
ME_DELETE = "/me/delete"

# Route patterns (Starlette syntax), beside the builders that fill them.
ROUTES = {
    "daily": "/daily/{day}", "topic": "/topics/{slug}", "section": "/sections/{slug}",
    "category": "/categories/{name:path}", "author": "/authors/{slug}", "paper": "/papers/{pid:path}",
    "sitemap_part": "/sitemap-{name}.xml", "flag": "/api/flag/{pid:path}",
    "me_collection": "/me/collections/{name}", "link": "/l/{token}",
    "thread": "/threads/{tid:path}", "topic_week": "/topics/{slug}/weeks/{week}",
    "topic_latest_week": "/topics/{slug}/week", "topic_weeks": "/topics/{slug}/weeks",
}


def _part(text: str) -> str:
    """A path segment, percent-encoded where it must be ('/' stays: old arXiv ids hold one)."""
    return quote(text, safe="/:@-._~")


def daily(day: str) -> str:
    return f"/daily/{_part(day)}"


def topic(slug: str) -> str:
    return f"/topics/{_part(slug)}"


def section(slug: str) -> str:
    return f"/sections/{_part(slug)}"


def category(name: str) -> str:
    return f"/categories/{_part(name)}"


def author(slug: str) -> str:
    return f"/authors/{_part(slug)}"


def paper(pid: str) -> str:
    return f"/papers/{_part(pid)}"


def thread(thread_id: str) -> str:
    return f"/threads/{_part(thread_id)}"


def topic_week(slug: str, week: str) -> str:
    """A topic's brief of one ISO week ('2026-W07')."""
    return f"/topics/{_part(slug)}/weeks/{_part(week)}"


def topic_latest_week(slug: str) -> str:
    return f"/topics/{_part(slug)}/week"


def topic_weeks(slug: str) -> str:
    """Every brief of a topic (its Atom twin is the feed of the topic's briefs)."""
    return f"/topics/{_part(slug)}/weeks"


def me_collection(name: str) -> str:
    return f"/me/collections/{quote(name, safe='')}"


def feed(path: str) -> str:
    """The Atom twin of a page's path: '/topics/x' -> '/topics/x.atom'."""
    return FRONT_FEED if path == FRONT else f"{path}.atom"


def sitemap_part(name: str) -> str:
    return f"/sitemap-{_part(name)}.xml"


def with_query(path: str, **params: Any) -> str:
    """A path with the given query parameters; empty ones and page=1 are left out."""
    kept = {k: v for k, v in params.items()
            if v not in (None, "") and not (k == "page" and v == 1)}
    return f"{path}?{urlencode(kept)}" if kept else path


def link(token: str) -> str:
    """A one-click link of a digest or an email (delivery/links.py signs its token)."""
    return f"/l/{quote(token, safe='')}"


def absolute(settings: Any, path: str) -> str:
    """A path of the site as an absolute URL (emails and feeds leave the site): base_url + path."""
    return str(settings.base_url).rstrip("/") + path
