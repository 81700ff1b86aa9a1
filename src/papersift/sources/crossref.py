"""Crossref (api.crossref.org/works): journal articles, proceedings and preprints by Crossref's own filter syntax.

`crossref:issn:1461-023X,type:journal-article` passes `issn:1461-023X,type:journal-article`
as `filter=` unchanged, pages through the result with Crossref's deep-paging cursor
(`cursor=*`, then each answer's `next-cursor`) and adds `from-created-date` /
`until-created-date` from --since / --until (the days a work was registered, which is when it
is news) unless the filter bounds a date itself.

Polite use, as Crossref asks: the `mailto` setting goes with every request (the "polite
pool"), the delay between requests grows to what the X-Rate-Limit-* headers allow, and a 429
or 503 waits for its Retry-After (the fetcher's retries).

Each work is `doi:<DOI>`. Abstracts arrive as JATS XML (`<jats:p>`, `<jats:title>`) or HTML
and become plain text; a work without one keeps an empty abstract and says so in
`extras['abstract'] = 'absent'` (no blurb is made up for it). Published dates may be partial
(`[[2023, 3]]`): the record's day is when the DOI was created, and the issue date is kept as
given ('2023-03') in extras. `relation` entries that say two DOIs are one work
(has-preprint, is-preprint-of, is-version-of, ...) become the record's relations.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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
from papersift.records.prepare import slugify
from papersift.settings import Settings
from papersift.sources import SourceOptions, jsontext
from papersift.sources.http import BadResponse, Fetcher
from papersift.sources.markup import inline_text, to_text

MAX_ROWS = 1000  # Crossref's largest page
# Relations that make two DOIs one work (not has-review, is-supplemented-by, references...).
SAME_WORK = ("has-preprint", "is-preprint-of", "has-version", "is-version-of",
             "is-identical-to", "has-manuscript", "is-manuscript-of")
_FILTER_NAME = re.compile(r"^[a-z][a-z0-9.\-]*$")


def parse_filter(arg: str) -> str:
    """Crossref's filter as given, checked for its shape ('name:value,name:value')."""
    text = arg.strip()
    pairs = [p.strip() for p in text.split(",")] if text else []
    bad = [p for p in pairs if ":" not in p or not _FILTER_NAME.match(p.partition(":")[0])]
    if bad or not pairs:
        raise SourceError(f"crossref: not a Crossref filter: {', '.join(bad) or repr(arg)} "
                          "(e.g. crossref:issn:1461-023X,type:journal-article)")
    return ",".join(pairs)


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    query_filter = parse_filter(arg)
    names = {p.partition(":")[0] for p in query_filter.split(",")}
    if not any(n.endswith("-date") for n in names):
        until = options.until or date.today()
        since = options.since or until - timedelta(days=settings.since_days)
        if until < since:
            raise SourceError(f"crossref: --until {until} is before --since {since}")
        query_filter += f",from-created-date:{since},until-created-date:{until}"
    return _stream(query_filter, settings, client)


def _stream(query_filter: str, settings: Settings, client: httpx.Client | None
            ) -> Iterator[PaperRecord | Skipped]:
    url = settings.crossref_url.rstrip("/") + "/works"
    rows = max(1, min(MAX_ROWS, int(settings.page_size)))
    depth = int(settings.max_json_depth)
    params: dict[str, Any] = {"filter": query_filter, "rows": rows, "cursor": "*"}
    if settings.mailto.strip():
        params["mailto"] = settings.mailto.strip()
    seen = 0
    with Fetcher(settings, client) as fetcher:
        while True:
            page = fetcher.get(url, params, parse=lambda r: _parse_page(r, depth, fetcher),
                               error_detail=error_detail)
            for number, item in enumerate(page["items"], start=seen + 1):
                try:
                    yield parse_item(item)
                except ValueError as exc:
                    yield Skipped("crossref", f"{url}?filter={query_filter} item {number}",
                                  str(exc))
            seen += len(page["items"])
            # Crossref's cursor keeps answering with empty pages past the end.
            if (not page["items"] or not page["next"] or page["next"] == params["cursor"]
                    or (page["total"] is not None and seen >= page["total"])):
                return
            params["cursor"] = page["next"]


def _parse_page(response: httpx.Response, max_depth: int, fetcher: Fetcher) -> dict[str, Any]:
    _keep_rate(response, fetcher)
    try:
        data = jsontext.loads(response.content, max_depth)
    except jsontext.TooDeep as exc:
        raise SourceError(f"the works answer is {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadResponse(f"the works JSON does not parse ({exc})") from None
    if not isinstance(data, dict):
        raise BadResponse(f"expected a JSON object, got {json_kind(data)}")
    if data.get("status") != "ok":
        raise SourceError(f"Crossref says: {_messages(data) or shown(data.get('status'))}")
    message = data.get("message")
    items = message.get("items") if isinstance(message, dict) else None
    if not isinstance(items, list):
        raise BadResponse(f"expected message.items, a list; got {json_kind(items)}")
    total = message.get("total-results")
    if isinstance(total, str) and total.strip().isdigit():
        total = int(total)
    cursor = message.get("next-cursor")
    return {"items": items, "total": total if isinstance(total, int) else None,
            "next": cursor if isinstance(cursor, str) and cursor else None}


def _keep_rate(response: httpx.Response, fetcher: Fetcher) -> None:
    """Slow down to what Crossref's X-Rate-Limit-Limit / -Interval headers allow."""
    limit = response.headers.get("x-rate-limit-limit", "").strip()
    interval = response.headers.get("x-rate-limit-interval", "").strip().rstrip("s")
    if limit.isdigit() and int(limit) > 0 and interval.replace(".", "", 1).isdigit():
        fetcher.delay = max(fetcher.delay, float(interval) / int(limit))


def _messages(data: dict[str, Any]) -> str:
    """Crossref's error answer: {"status": "failed", "message": [{"message": ...}, ...]}."""
    message = data.get("message")
    entries = message if isinstance(message, list) else [message]
    said = [e.get("message") if isinstance(e, dict) else e for e in entries]
    return "; ".join(str(s) for s in said if isinstance(s, str) and s)[:500]


def error_detail(response: httpx.Response) -> str | None:
    try:
        data = json.loads(response.content)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    if "challengeUrl" in str(data.get("details", "")):
        return (f"{data.get('name', 'challenge')}: the service wants a browser to pass a "
                "challenge first (try again later or from another address)")
    return _messages(data) or None


def parse_item(item: Any) -> PaperRecord:
    """One work -> PaperRecord; ValueError says what is missing or malformed."""
    if not isinstance(item, dict):
        raise ValueError(f"work is {json_kind(item)}, not an object")
    if item.get("DOI") in (None, ""):
        raise ValueError("work without a DOI")
    doi = normalize_doi(item["DOI"])
    title = inline_text(_first(item, "title", doi))
    if not title:
        raise ValueError(f"{doi}: missing title")
    if subtitle := inline_text(_first(item, "subtitle", doi)):
        title = f"{title}: {subtitle}"
    raw_abstract = item.get("abstract")
    if raw_abstract is not None and not isinstance(raw_abstract, str):
        raise ValueError(f"{doi}: abstract is {json_kind(raw_abstract)}, not text")
    abstract = to_text(raw_abstract or "")
    created = _created(item, doi)
    extras = _extras(item)
    if not abstract:
        extras["abstract"] = "absent"
    return PaperRecord(
        id=f"doi:{doi}", title=title, abstract=abstract, authors=_authors(item, doi),
        categories=_categories(item),
        source="crossref", submitted=created, updated=_day_of(item.get("deposited")),
        doi=doi, journal_ref=_journal_ref(item, doi), license=_license(item),
        links=_links(item, doi), versions=[], relations=_relations(item, doi), extras=extras,
    )


def _first(item: dict[str, Any], name: str, doi: str) -> str:
    values = item.get(name)
    if values is None:
        return ""
    if isinstance(values, str):
        return values
    if not isinstance(values, list):
        raise ValueError(f"{doi}: {name} is {json_kind(values)}, not a list")
    return next((v for v in values if isinstance(v, str) and v.strip()), "")


def _texts(item: dict[str, Any], name: str) -> list[str]:
    values = item.get(name)
    return [" ".join(v.split()) for v in values if isinstance(v, str) and v.strip()] \
        if isinstance(values, list) else []


def _authors(item: dict[str, Any], doi: str) -> list[str]:
    people = item.get("author", [])
    if not isinstance(people, list):
        raise ValueError(f"{doi}: author is {json_kind(people)}, not a list")
    names = []
    for person in people:
        if not isinstance(person, dict):
            continue
        given, family = person.get("given"), person.get("family")
        parts = [p for p in (given, family) if isinstance(p, str) and p.strip()]
        # An organization (a consortium) has only "name".
        name = " ".join(parts) if parts else person.get("name")
        if isinstance(name, str) and inline_text(name):
            names.append(inline_text(name))
    return names


def date_parts(value: Any) -> str | None:
    """{'date-parts': [[2023, 3]]} -> '2023-03' (as precise as given); None when absent or bad."""
    parts = value.get("date-parts") if isinstance(value, dict) else None
    first = parts[0] if isinstance(parts, list) and parts and isinstance(parts[0], list) else []
    numbers = [p for p in first[:3] if isinstance(p, int) and not isinstance(p, bool)]
    # Crossref writes date-parts [[null]] for a date it does not know.
    if not numbers or len(numbers) != len(first[:3]) or not 1000 <= numbers[0] <= 9999:
        return None
    text = "-".join([f"{numbers[0]:04d}", *(f"{n:02d}" for n in numbers[1:])])
    try:
        date.fromisoformat((text + "-01-01")[:10])
    except ValueError:
        return None
    return text


def _day_of(value: Any) -> str | None:
    """A full day from a Crossref date object (its date-parts), None when partial or absent."""
    text = date_parts(value)
    return text if text and len(text) == 10 else None


def _created(item: dict[str, Any], doi: str) -> str | None:
    day = _day_of(item.get("created"))
    if day is None and item.get("created") is not None:
        raise ValueError(f"{doi}: created date {shown(item.get('created'))} is not a day")
    return day


def _journal_ref(item: dict[str, Any], doi: str) -> str | None:
    container = inline_text(_first(item, "container-title", doi))
    if not container:
        return None
    issued = date_parts(item.get("issued")) or ""
    volume, issue, pages = (item.get(k) for k in ("volume", "issue", "page"))
    ref = container
    if isinstance(volume, str) and volume:
        ref += f" {volume}"
        if isinstance(issue, str) and issue:
            ref += f"({issue})"
    if isinstance(pages, str) and pages:
        ref += f", {pages}"
    return f"{ref} ({issued[:4]})" if issued else ref


def _license(item: dict[str, Any]) -> str | None:
    licenses = [x for x in item.get("license") or [] if isinstance(x, dict)
                and isinstance(x.get("URL"), str)] if isinstance(item.get("license"), list) else []
    # The version of record's license first: that is the text a reader reaches.
    licenses.sort(key=lambda x: x.get("content-version") != "vor")
    return licenses[0]["URL"] if licenses else None


def _categories(item: dict[str, Any]) -> list[str]:
    """Crossref's subjects ('crossref/ecology'), then the journal ('journal/ecology_letters');
    a work in neither (a preprint, a dataset) by its type ('crossref/posted_content'), so that
    every work has a category page, filter and follow (sources.categories)."""
    found = [f"crossref/{_slug(s)}" for s in _texts(item, "subject")]
    found += [f"journal/{_slug(t)}" for t in _texts(item, "container-title")[:1]]
    if not found and isinstance(item.get("type"), str) and item["type"].strip():
        found.append(f"crossref/{_slug(item['type'])}")
    return [c for c in dict.fromkeys(found) if c.partition("/")[2]]


def _slug(text: str) -> str:
    """'Ecology Letters' -> 'ecology_letters'; 'posted-content' -> 'posted_content'."""
    return slugify(inline_text(text)).replace("-", "_")[:120]


def _links(item: dict[str, Any], doi: str) -> dict[str, str]:
    links = {"abs": f"https://doi.org/{doi}"}
    for link in item.get("link") or [] if isinstance(item.get("link"), list) else []:
        if (isinstance(link, dict) and link.get("content-type") == "application/pdf"
                and isinstance(link.get("URL"), str) and link["URL"].startswith("http")):
            links.setdefault("pdf", link["URL"])
    return links


def _relations(item: dict[str, Any], doi: str) -> list[tuple[str, str]]:
    relation = item.get("relation")
    if not isinstance(relation, dict):
        return []
    found: list[tuple[str, str]] = []
    for kind in SAME_WORK:
        for target in relation.get(kind) or []:
            if not isinstance(target, dict) or str(target.get("id-type", "")).lower() != "doi":
                continue
            try:
                found.append((kind, doi_id(target.get("id"))))
            except ValueError:
                continue  # a link to a malformed DOI links nothing; the work itself is fine
    return found


def _extras(item: dict[str, Any]) -> dict[str, Any]:
    extras: dict[str, Any] = {}
    for name, key in (("type", "type"), ("subtype", "subtype"), ("publisher", "publisher")):
        if isinstance(item.get(name), str) and item[name].strip():
            extras[key] = item[name].strip()
    issued = date_parts(item.get("issued"))
    if issued:
        extras["issued"] = issued  # '2023', '2023-03' or '2023-03-05': as precise as Crossref
    institution = item.get("institution")
    first = institution[0] if isinstance(institution, list) and institution else None
    if isinstance(first, dict) and isinstance(first.get("name"), str):
        extras["institution"] = first["name"]  # 'bioRxiv' for posted content
    return extras


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "crossref", "a Crossref works filter, e.g. crossref:issn:1461-023X,type:journal-article",
        open_source))
