"""The search page's data: one box, filters, highlighted snippets, pagination; bad queries get a message."""

from __future__ import annotations

import html
import logging
import re
import sqlite3
from typing import Any

from papersift.web.categories import category_label
from papersift.web.views import (
    Site,
    _ids_of,
    category_sizes,
    item,
    paper_url,
    parse_page,
    topics_overview,
    with_query,
)

log = logging.getLogger(__name__)

MODES = ("hybrid", "keyword", "semantic")
MAX_QUERY = 500
_DAY = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_MARKS = re.compile(r"(<mark>|</mark>|<b>|</b>|<em>|</em>|\x02|\x03)")
_WORD = re.compile(r"\w+", re.UNICODE)


class BadQuery(ValueError):
    """A query or filter the reader should fix; the message says how."""


def segments(snippet: str | None) -> list[dict[str, Any]]:
    """A highlighted snippet as [{text, hit}] so the template escapes every piece itself."""
    if not snippet:
        return []
    is_html = "<mark>" in snippet or "<b>" in snippet or "<em>" in snippet
    out, hit = [], False
    for piece in _MARKS.split(snippet):
        if piece in ("<mark>", "<b>", "<em>", "\x02"):
            hit = True
        elif piece in ("</mark>", "</b>", "</em>", "\x03"):
            hit = False
        elif piece:
            text = html.unescape(piece) if is_html else piece
            out.append({"text": re.sub(r"\s+", " ", text), "hit": hit})
    return out


def _date_filter(value: str, name: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if not _DAY.match(value):
        raise BadQuery(f"The {name} date must look like 2026-06-30, not “{value}”.")
    return value


def _stage_search(site: Site, q: str, mode: str, limit: int, offset: int,
                  filters: dict[str, Any]
                  ) -> tuple[int | None, list[tuple[str, float, str]], list[str], bool | None]:
    from papersift.search import search

    try:
        from papersift.search import QueryError
    except ImportError:
        QueryError = ValueError  # noqa: N806
    try:
        found = search(site.store, site.settings, q, mode=mode, limit=limit, offset=offset,
                       **filters)
    except QueryError as exc:
        raise BadQuery(str(exc) or "That query could not be understood.") from None
    message = getattr(found, "message", None) or getattr(found, "error", None)
    if message:
        raise BadQuery(str(message)[:1].upper() + str(message)[1:])
    results = getattr(found, "hits", None)
    if results is None:
        results = getattr(found, "results", found)
    hits = []
    for result in results:
        get = result.get if isinstance(result, dict) else (lambda k, r=result: getattr(r, k, None))
        pid = _ids_of([result])
        if pid:
            snippet = get("snippet_html") or get("snippet") or ""
            hits.append((pid[0], float(get("score") or 0.0), snippet))
    total = getattr(found, "total", None)
    notes = list(getattr(found, "notes", None) or [])
    more = getattr(found, "has_more", None)
    return (int(total) if total is not None else None), hits, notes, more


def _fallback_search(site: Site, q: str, limit: int, offset: int,
                     filters: dict[str, Any]) -> tuple[int, list[tuple[str, float, str]]]:
    """Keyword search straight on the FTS index while the search stage is not installed."""
    words = _WORD.findall(q)
    if not words:
        raise BadQuery(f"“{q}” has no words to search for; try a few keywords.")
    match = " ".join('"' + w.replace('"', "") + '"' for w in words[:32])
    try:
        return site.store.keyword_search_page(
            match, limit, offset, category=filters.get("category"),
            since=filters.get("since"), until=filters.get("until"))
    except sqlite3.OperationalError as exc:
        raise BadQuery(f"That query could not be run: {exc}") from None


def search_page(site: Site, params: dict[str, str]) -> dict[str, Any]:
    q = (params.get("q") or "").strip()
    mode = (params.get("mode") or "hybrid").strip() or "hybrid"
    page = parse_page(params.get("page"))
    raw_filters = {k: (params.get(k) or "").strip() for k in ("category", "topic", "since",
                                                              "until")}
    overview = topics_overview(site)
    data: dict[str, Any] = {
        "page": "search", "title": f"Search: {q}" if q else "Search", "path": "/search",
        "query": {"q": q, "mode": mode, **raw_filters, "page": page},
        "feed": with_query("/search.atom", q=q, mode=mode, **raw_filters) if q else None,
        "modes": list(MODES),
        "categories": [c for c, _ in category_sizes(site)][:40],
        "topics": [{"slug": t["slug"], "label": t["label"]}
                   for s in overview["sections"] for t in s["topics"]],
        "message": None, "notes": [], "total": None, "results": [], "papers": [],
        "prev": None, "next": None,
    }
    if not q:
        return data
    size = site.page_size
    try:
        if len(q) > MAX_QUERY:
            raise BadQuery(f"That query is {len(q)} characters long; keep it under {MAX_QUERY}.")
        if mode not in MODES:
            raise BadQuery(f"Unknown search mode “{mode}”; use one of {', '.join(MODES)}.")
        filters = {"category": raw_filters["category"] or None,
                   "topic": raw_filters["topic"] or None,
                   "since": _date_filter(raw_filters["since"], "from"),
                   "until": _date_filter(raw_filters["until"], "until")}
        try:
            total, hits, notes, more = _stage_search(site, q, mode, size, (page - 1) * size,
                                                     filters)
        except ImportError:
            filters.pop("topic")
            total, hits = _fallback_search(site, q, size, (page - 1) * size, filters)
            notes, more = [], None
    except BadQuery as exc:
        data["message"] = str(exc)
        return data
    rows = site.store.listing_by_ids([pid for pid, _, _ in hits])
    for pid, score, snippet in hits:
        if pid not in rows:
            continue
        entry = item(rows[pid])
        entry["score"] = round(score, 4)
        entry["snippet"] = segments(snippet)
        data["results"].append(entry)
    data["papers"] = data["results"]
    data["total"] = total
    keep = {"q": q, "mode": mode if mode != "hybrid" else None, **raw_filters}
    data["notes"] = notes
    if more is None:
        more = (total is not None and page * size < total) or (total is None and len(hits) == size)
    data["prev"] = with_query("/search", page=page - 1, **keep) if page > 1 else None
    data["next"] = with_query("/search", page=page + 1, **keep) if more else None
    data["page_number"] = page
    data["category_label"] = category_label(raw_filters["category"]) \
        if raw_filters["category"] else None
    data["first_url"] = paper_url(data["results"][0]["id"]) if data["results"] else None
    return data
