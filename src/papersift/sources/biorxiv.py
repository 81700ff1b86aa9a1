"""bioRxiv and medRxiv (api.biorxiv.org/details/{server}/{from}/{to}/{cursor}/json): preprints posted in a date range.

`biorxiv:neuroscience,cell_biology`, `medrxiv:epidemiology` or `biorxiv:all` read every
version posted between --since and --until, 100 records a page, the cursor moving by the
page's count until the answer's total. One DOI names a preprint across its versions, so
each record is `doi:10.1101/...` with its version number: a new version is a new version
of one paper. `published` (the journal DOI, or "NA") becomes an 'is-preprint-of' relation.

The API gives counts as text ("total": "60568"), answers a range with nothing in it with
{"messages": [{"status": "no posts found"}]}, keeps withdrawn preprints (type "withdrawn")
and has begun to issue DOIs under a second prefix (10.64898/ next to 10.1101/): each is
read as it is, and a record it cannot use is skipped with its reason.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import httpx

from papersift.plugins import Plugins, SourcePlugin
from papersift.records import (
    PaperRecord,
    Skipped,
    SourceError,
    doi_id,
    json_kind,
    normalize_doi,
    shown,
)
from papersift.settings import Settings
from papersift.sources import SourceOptions, jsontext
from papersift.sources.http import BadResponse, Fetcher
from papersift.sources.markup import inline_text

SERVERS = ("biorxiv", "medrxiv")
_CATEGORY = re.compile(r"^[a-z][a-z_\- ]*[a-z]$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SITE = {"biorxiv": "https://www.biorxiv.org", "medrxiv": "https://www.medrxiv.org"}


def parse_categories(server: str, arg: str) -> list[str | None]:
    """'neuroscience, Cell Biology' -> ['neuroscience', 'cell_biology']; 'all' -> [None]."""
    names = [c.strip().lower().replace(" ", "_").replace("-", "_")
             for c in arg.split(",") if c.strip()]
    if not names or names == ["all"]:
        return [None]
    bad = [c for c in names if not _CATEGORY.match(c) or c == "all"]
    if bad:
        raise SourceError(f"{server}: not {server} categories: {', '.join(bad)} "
                          f"(e.g. {server}:neuroscience,cell_biology or {server}:all)")
    return list(dict.fromkeys(names))


def category_name(server: str, category: str) -> str:
    """The papersift category of a server's subject: 'biorxiv/evolutionary_biology'."""
    return f"{server}/{'_'.join(category.lower().split())}"


def _opener(server: str):  # noqa: ANN202 - the SourcePlugin.open signature
    def open_source(
        arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
    ) -> Iterator[PaperRecord | Skipped]:
        categories = parse_categories(server, arg)
        until = options.until or date.today()
        since = options.since or until - timedelta(days=settings.since_days)
        if until < since:
            raise SourceError(f"{server}: --until {until} is before --since {since}")
        return _stream(server, categories, since, until, settings, client)
    return open_source


@dataclass
class Page:
    items: list[Any]
    count: int  # records this page says it holds (the cursor moves by this)
    total: int | None  # records in the whole interval, when the answer says


def _stream(
    server: str, categories: list[str | None], since: date, until: date, settings: Settings,
    client: httpx.Client | None,
) -> Iterator[PaperRecord | Skipped]:
    base = settings.biorxiv_url.rstrip("/")
    depth = int(settings.max_json_depth)
    with Fetcher(settings, client) as fetcher:
        for category in categories:
            params = {"category": category} if category else None
            cursor = 0
            while True:
                url = f"{base}/details/{server}/{since}/{until}/{cursor}/json"
                page = fetcher.get(url, params, parse=lambda r: _parse_page(r.content, depth),
                                   error_detail=error_detail)
                where = url + (f"?category={category}" if category else "")
                for number, item in enumerate(page.items, start=cursor + 1):
                    try:
                        yield parse_item(item, server)
                    except ValueError as exc:
                        yield Skipped(server, f"{where} record {number}", str(exc))
                cursor += page.count
                # A short page, or the cursor past the total: the interval is read.
                if not page.items or page.total is None or cursor >= page.total:
                    break


def _parse_page(body: bytes, max_depth: int) -> Page:
    try:
        data = jsontext.loads(body, max_depth)
    except jsontext.TooDeep as exc:
        raise SourceError(f"the details answer is {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadResponse(f"the details JSON does not parse ({exc})") from None
    if not isinstance(data, dict):
        raise BadResponse(f"expected a JSON object, got {json_kind(data)}")
    messages = data.get("messages")
    message = messages[0] if isinstance(messages, list) and messages else {}
    if not isinstance(message, dict):
        message = {}
    status = str(message.get("status", "")).strip().lower()
    collection = data.get("collection")
    if status == "no posts found" or (collection == [] and status != "ok"):
        return Page([], 0, 0)  # an interval (or category) with nothing posted in it
    if status != "ok":
        raise SourceError(f"the details API says: {shown(message.get('status'), 200)}")
    if not isinstance(collection, list):
        raise BadResponse(f"'collection' is {json_kind(collection)}, not a list")
    # Counts come as text ("43629") or numbers; the page's own length when the count is unusable.
    count = _count(message.get("count"))
    return Page(collection, count if count else len(collection), _count(message.get("total")))


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def error_detail(response: httpx.Response) -> str | None:
    """What an error answer says: a JSON error's name and message (a challenge page: its
    address), else None (the fetcher quotes the start of the body)."""
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    name, message = data.get("name"), data.get("message")
    details = data.get("details") if isinstance(data.get("details"), dict) else {}
    said = ": ".join(p for p in (name, message) if isinstance(p, str) and p)
    if isinstance(details.get("challengeUrl"), str):
        said += ("; the service wants a browser to pass a challenge first (try again later "
                 "or from another address)")
    return said.strip("; ") or None


def parse_item(item: Any, server: str) -> PaperRecord:
    """One record of the collection -> PaperRecord; ValueError says what is wrong with it."""
    if not isinstance(item, dict):
        raise ValueError(f"record is {json_kind(item)}, not an object")
    if item.get("doi") in (None, ""):
        raise ValueError("record without a doi")
    doi = normalize_doi(item["doi"])
    title = _text(item, "title", doi)
    if not title:
        raise ValueError(f"{doi}: missing title")
    version = _version(item.get("version"), doi)
    day = _day(item.get("date"), doi)
    category = _text(item, "category", doi)
    site = _SITE.get(server, _SITE["biorxiv"])
    page = f"{site}/content/{doi}v{version}"
    links = {"abs": page, "pdf": page + ".full.pdf"}
    if isinstance(item.get("jatsxml"), str) and item["jatsxml"].startswith(("http://", "https://")):
        links["jats"] = item["jatsxml"]
    relations = []
    published = item.get("published")
    if isinstance(published, str) and published.strip() not in ("", "NA"):
        # A link to no DOI links nothing; the preprint itself is fine.
        with contextlib.suppress(ValueError):
            relations.append(("is-preprint-of", doi_id(published)))
    return PaperRecord(
        id=f"doi:{doi}", version=version, title=inline_text(title),
        abstract=_text(item, "abstract", doi), authors=split_authors(_text(item, "authors", doi)),
        categories=[category_name(server, category)] if category else [],
        source=server, submitted=day, updated=day, doi=doi,
        license=_text(item, "license", doi) or None, links=links,
        versions=[(version, day)] if day else [], relations=relations,
        extras=_extras(item, server),
    )


def split_authors(text: str) -> list[str]:
    """'Wright, K. M.; Coop, G.' -> ['K. M. Wright', 'G. Coop'] (given names first, as every
    other source writes them); a name without a comma stays as written."""
    names = []
    for part in text.split(";"):
        family, comma, given = (" ".join(part.split())).partition(",")
        name = f"{given.strip()} {family.strip()}".strip() if comma else family.strip()
        if name:
            names.append(name)
    return names


def _text(item: dict[str, Any], name: str, doi: str) -> str:
    value = item.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{doi}: {name} is {json_kind(value)}, not text")
    return value.strip()


def _version(value: Any, doi: str) -> int:
    # The API writes versions as text ("3"); a number is read too.
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{doi}: version is {shown(value)}, not a whole number from 1")
    return int(text)


def _day(value: Any, doi: str) -> str | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str) or not _DAY.match(value.strip()):
        raise ValueError(f"{doi}: date {shown(value)} is not a day like 2024-01-31")
    try:
        return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        raise ValueError(f"{doi}: date {shown(value)} is not a day that exists") from None


def _extras(item: dict[str, Any], server: str) -> dict[str, Any]:
    extras: dict[str, Any] = {"server": item.get("server") if isinstance(item.get("server"), str)
                              else server}
    for name, key in (("type", "type"), ("author_corresponding", "corresponding_author"),
                      ("author_corresponding_institution", "corresponding_institution")):
        value = item.get(name)
        if isinstance(value, str) and " ".join(value.split()):
            extras[key] = " ".join(value.split())
    if extras.get("type", "").lower() == "withdrawn":
        extras["withdrawn"] = True
    return extras


def register(plugins: Plugins) -> None:
    for server in SERVERS:
        plugins.sources.add(SourcePlugin(
            server, f"comma-separated {server} categories or all, "
            f"e.g. {server}:{'neuroscience' if server == 'biorxiv' else 'epidemiology'}",
            _opener(server), needs_argument=False))
