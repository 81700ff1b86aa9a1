"""The arXiv API (Atom feed of export.arxiv.org/api/query): papers of some categories submitted in a date range.

`arxiv:cs.LG,cs.CL` asks for `(cat:cs.LG OR cat:cs.CL) AND submittedDate:[since TO until]`
sorted by submission date, one page of `page_size` entries at a time, and reads both the
current (2026) and the older (2016) Atom layouts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date, datetime, timedelta

import httpx

from papersift.plugins import Plugins, SourcePlugin
from papersift.records import PaperRecord, Skipped, SourceError, split_arxiv_id
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.sources.http import BadResponse, Fetcher

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
_CATEGORY = re.compile(r"^[a-z][a-z\-]*(?:\.[A-Za-z][A-Za-z\-]*)?$")
_ERROR_ID = "/api/errors"


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    categories = parse_categories(arg)
    since = options.since or date.today() - timedelta(days=settings.since_days)
    until = options.until or date.today()
    if until < since:
        raise SourceError(f"arxiv: --until {until} is before --since {since}")
    return _stream(categories, since, until, settings, client)


def parse_categories(arg: str) -> list[str]:
    """'cs.LG, cs.CL' -> ['cs.LG', 'cs.CL']; SourceError on something that is no category."""
    categories = [c.strip() for c in re.split(r"[,+\s]+", arg) if c.strip()]
    bad = [c for c in categories if not _CATEGORY.match(c)]
    if bad or not categories:
        raise SourceError(f"arxiv: not arXiv categories: {', '.join(bad) or arg!r} (e.g. cs.LG,cs.CL)")
    return categories


def search_query(categories: list[str], since: date, until: date) -> str:
    cats = " OR ".join(f"cat:{c}" for c in categories)
    return f"({cats}) AND submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"


def _stream(
    categories: list[str], since: date, until: date, settings: Settings,
    client: httpx.Client | None,
) -> Iterator[PaperRecord | Skipped]:
    url = settings.arxiv_api_url
    page_size = max(1, int(settings.page_size))
    query = search_query(categories, since, until)
    start = 0
    with Fetcher(settings, client) as fetcher:
        while True:
            params = {
                "search_query": query, "sortBy": "submittedDate", "sortOrder": "descending",
                "start": start, "max_results": page_size,
            }
            page = fetcher.get(
                url, params, parse=lambda r, s=start: _parse_page(r.content, s),
                error_detail=_error_detail,
            )
            for number, item in enumerate(page.items, start=start + 1):
                if isinstance(item, Skipped):
                    item.where = f"{url}?start={start} entry {number}"
                yield item
            start += len(page.items)
            if len(page.items) < page_size or (page.total is not None and start >= page.total):
                return


class Page:
    def __init__(self, items: list[PaperRecord | Skipped], total: int | None) -> None:
        self.items = items
        self.total = total


def _parse_page(body: bytes, start: int) -> Page:
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise BadResponse(f"the Atom feed does not parse ({exc})") from None
    if root.tag != f"{ATOM}feed":
        raise BadResponse(f"expected an Atom feed, got <{root.tag}>")
    message = _error_message(root)
    if message:
        raise SourceError(f"arXiv API error: {message}")
    total = _int(root.findtext(f"{OPENSEARCH}totalResults"))
    entries = root.findall(f"{ATOM}entry")
    if not entries and total and start < total:
        # arXiv now and then serves an empty page in the middle of a result set.
        raise BadResponse(f"empty page at start={start} of {total} results")
    items: list[PaperRecord | Skipped] = []
    for entry in entries:
        try:
            items.append(parse_entry(entry))
        except ValueError as exc:
            items.append(Skipped("arxiv", "", str(exc)))
    return Page(items, total)


def _error_message(root: ET.Element) -> str | None:
    for entry in root.findall(f"{ATOM}entry"):
        if _ERROR_ID in (entry.findtext(f"{ATOM}id") or ""):
            return (entry.findtext(f"{ATOM}summary") or "unknown error").strip()
    return None


def _error_detail(response: httpx.Response) -> str | None:
    try:
        return _error_message(ET.fromstring(response.content))
    except ET.ParseError:
        return None


def parse_entry(entry: ET.Element) -> PaperRecord:
    """One Atom <entry> -> PaperRecord; ValueError says what is missing or malformed."""
    raw_id = (entry.findtext(f"{ATOM}id") or "").strip()
    if not raw_id:
        raise ValueError("entry without <id>")
    paper_id, version = split_arxiv_id(raw_id)
    title = entry.findtext(f"{ATOM}title") or ""
    if not title.strip():
        raise ValueError(f"{paper_id}: missing title")
    published = _timestamp(entry.findtext(f"{ATOM}published"), paper_id, "published")
    updated = _timestamp(entry.findtext(f"{ATOM}updated"), paper_id, "updated")
    primary = entry.find(f"{ARXIV}primary_category")
    categories = [primary.get("term", "")] if primary is not None else []
    categories += [c.get("term", "") for c in entry.findall(f"{ATOM}category")]
    links: dict[str, str] = {}
    for link in entry.findall(f"{ATOM}link"):
        href, rel, title_attr = link.get("href"), link.get("rel"), link.get("title")
        if not href:
            continue
        if rel == "alternate":
            links["abs"] = href
        elif title_attr in ("pdf", "doi"):
            links[title_attr] = href
    versions: list[tuple[int, str | None]] = []
    if published:
        versions.append((1, published[:10]))
    if version and version > 1 and updated:
        versions.append((version, updated[:10]))
    return PaperRecord(
        id=paper_id, version=version, title=title,
        abstract=entry.findtext(f"{ATOM}summary") or "",
        authors=[name for a in entry.findall(f"{ATOM}author")
                 if (name := (a.findtext(f"{ATOM}name") or "").strip())],
        categories=[c for c in dict.fromkeys(categories) if c],
        source="arxiv", submitted=published, updated=updated,
        doi=_text(entry.findtext(f"{ARXIV}doi")), comment=_text(entry.findtext(f"{ARXIV}comment")),
        journal_ref=_text(entry.findtext(f"{ARXIV}journal_ref")), links=links, versions=versions,
    )


def _timestamp(value: str | None, paper_id: str, name: str) -> str | None:
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{paper_id}: invalid <{name}> date {text!r}") from None
    return text


def _text(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


def _int(value: str | None) -> int | None:
    try:
        return int((value or "").strip())
    except ValueError:
        return None


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "arxiv", "comma-separated categories, e.g. arxiv:cs.LG,cs.CL",
        open_source))
