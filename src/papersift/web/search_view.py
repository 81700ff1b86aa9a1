"""The search page's data: one box, filters, highlighted snippets, pagination; bad queries get a message."""

from __future__ import annotations

import html
import logging
import re
from typing import Any

from papersift.errors import UsageError
from papersift.readers.signals import saved_search
from papersift.search import QueryError, search
from papersift.search.onnx_export import model_ready
from papersift.web import urls
from papersift.web.categories import category_label
from papersift.web.views import Site, category_sizes, item, parse_page, topics_overview

log = logging.getLogger(__name__)

MODES = ("hybrid", "keyword", "semantic")
MAX_QUERY = 500
_DAY = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")
_MARKS = re.compile(r"(<mark>|</mark>|<b>|</b>|<em>|</em>|\x02|\x03)")


class BadQuery(UsageError):
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


NOT_READY = ("Semantic search is not ready yet (its model is prepared when the server starts "
             "or `papersift update` runs): these are keyword results.")


def _date_filter(value: str, name: str) -> str | None:
    value = value.strip()
    if not value:
        return None
    if not _DAY.match(value):
        raise BadQuery(f"The {name} date must look like 2026-06-30, not “{value}”.")
    return value


def _stage_search(site: Site, q: str, mode: str, limit: int, offset: int,
                  filters: dict[str, Any]
                  ) -> tuple[int, list[tuple[str, float, str]], list[str], bool, str | None]:
    """(total, [(id, score, snippet_html)], notes, has_more, message) from the search stage."""
    try:
        found = search(site.store, site.settings, q, mode=mode, limit=limit, offset=offset,
                       **filters)
    except QueryError as exc:
        raise BadQuery(str(exc) or "That query could not be understood.") from None
    hits = [(hit.paper_id, hit.score, hit.snippet_html) for hit in found.hits]
    message = found.message
    if message:
        message = message[:1].upper() + message[1:]
    return found.total, hits, list(found.notes), found.has_more, message


def _answer(site: Site, q: str, mode: str, page: int, raw_filters: dict[str, str]
            ) -> tuple[int, list[tuple[str, float, str]], list[str], bool]:
    """(total, hits, notes, has_more) of a query; BadQuery with what the reader should fix."""
    if len(q) > MAX_QUERY:
        raise BadQuery(f"That query is {len(q)} characters long; keep it under {MAX_QUERY}.")
    if mode not in MODES:
        raise BadQuery(f"Unknown search mode “{mode}”; use one of {', '.join(MODES)}.")
    filters = {"category": raw_filters["category"] or None,
               "topic": raw_filters["topic"] or None,
               "since": _date_filter(raw_filters["since"], "from"),
               "until": _date_filter(raw_filters["until"], "until")}
    ready = mode == "keyword" or model_ready(site.settings)
    size = site.page_size
    total, hits, notes, more, message = _stage_search(
        site, q, mode if ready else "keyword", size, (page - 1) * size, filters)
    if message and not hits:
        # "No papers match", "type some words": the whole answer, shown as the message.
        raise BadQuery(message)
    if message:
        notes.insert(0, message)
    if not ready:
        notes.insert(0, NOT_READY)
    return total, hits, notes, more


def search_page(site: Site, params: dict[str, str]) -> dict[str, Any]:
    q = (params.get("q") or "").strip()
    mode = (params.get("mode") or "hybrid").strip() or "hybrid"
    page = parse_page(params.get("page"))
    raw_filters = {k: (params.get(k) or "").strip() for k in ("category", "topic", "since",
                                                              "until")}
    overview = topics_overview(site)
    data: dict[str, Any] = {
        "page": "search", "title": f"Search: {q}" if q else "Search", "path": urls.SEARCH,
        # The page with its query: where signing in comes back to.
        "here": urls.with_query(urls.SEARCH, q=q, mode=params.get("mode"), **raw_filters,
                                page=page),
        "query": {"q": q, "mode": mode, **raw_filters, "page": page},
        "feed": urls.with_query(urls.SEARCH_FEED, q=q, mode=mode, **raw_filters) if q else None,
        "modes": list(MODES),
        "categories": [c for c, _ in category_sizes(site)][:40],
        "topics": [{"slug": t["slug"], "label": t["label"]}
                   for s in overview["sections"] for t in s["topics"]],
        "message": None, "notes": [], "total": None, "results": [], "papers": [],
        "prev": None, "next": None,
    }
    if not q:
        return data
    # Following this search keeps its filters: the feed applies them as this page does.
    data["follow_target"] = "search:" + saved_search(
        q, raw_filters["category"], raw_filters["topic"], raw_filters["since"],
        raw_filters["until"])
    try:
        total, hits, notes, more = _answer(site, q, mode, page, raw_filters)
    except BadQuery as exc:
        data["message"] = str(exc)
        return data
    rows = site.store.pages.listing_by_ids([pid for pid, _, _ in hits])
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
    data["prev"] = urls.with_query(urls.SEARCH, page=page - 1, **keep) if page > 1 else None
    data["next"] = urls.with_query(urls.SEARCH, page=page + 1, **keep) if more else None
    data["page_number"] = page
    data["category_label"] = category_label(raw_filters["category"]) \
        if raw_filters["category"] else None
    data["first_url"] = urls.paper(data["results"][0]["id"]) if data["results"] else None
    return data
