"""arXiv's daily announcement feed (RSS 2.0 of rss.arxiv.org): today's new, cross-listed and replaced papers.

`announce:cs.LG+cs.AI` (or `cs.LG,cs.AI`) reads `{rss_url}/cs.LG+cs.AI`. Each item's description
starts `arXiv:2609.26811v1 Announce Type: new` and carries the abstract after `Abstract:`.
New papers (and first versions cross-listed from another category) are announced that day;
for replacements and late cross-listings the day is when the update was announced, so it
becomes `updated` and not `announced` (a paper's news day is its first announcement). Weekends and holidays give an empty feed, which is not an error.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from email.utils import parsedate_to_datetime

import httpx

from papersift.plugins import Plugins, SourcePlugin
from papersift.records import PaperRecord, Skipped, SourceError, split_arxiv_id
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.sources.files import split_author_string
from papersift.sources.http import BadResponse, Fetcher

ARXIV = "{http://arxiv.org/schemas/atom}"
DC = "{http://purl.org/dc/elements/1.1/}"
_CATEGORY = re.compile(r"^[a-z][a-z\-]*(?:\.[A-Za-z][A-Za-z\-]*)?$")
_HEAD = re.compile(r"^\s*arXiv:(\S+)\s+Announce Type:\s*([\w-]+)", re.I)
_ABSTRACT = re.compile(r"Abstract:[ \t]*", re.I)


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    categories = [c for c in re.split(r"[,+\s]+", arg) if c]
    bad = [c for c in categories if not _CATEGORY.match(c)]
    if bad or not categories:
        raise SourceError(f"announce: not arXiv categories: {', '.join(bad) or arg!r} (e.g. cs.LG+cs.AI)")
    url = settings.rss_url.rstrip("/") + "/" + "+".join(categories)
    return _read(url, options, settings, client)


def _read(
    url: str, options: SourceOptions, settings: Settings, client: httpx.Client | None
) -> Iterator[PaperRecord | Skipped]:
    with Fetcher(settings, client) as fetcher:
        items = fetcher.get(url, parse=lambda r: parse_feed(r.content, url))
    for item in items:
        if isinstance(item, PaperRecord) and not _in_range(item, options):
            continue
        yield item


def _in_range(record: PaperRecord, options: SourceOptions) -> bool:
    day = record.announced or record.updated or ""
    if options.since and day and day < options.since.isoformat():
        return False
    return not (options.until and day and day > options.until.isoformat())


def parse_feed(body: bytes, where: str = "feed") -> list[PaperRecord | Skipped]:
    """A whole RSS document -> records, with a Skipped for each unusable item."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise BadResponse(f"the RSS feed does not parse ({exc})") from None
    channel = root.find("channel")
    if root.tag != "rss" or channel is None:
        raise BadResponse(f"expected an RSS 2.0 feed, got <{root.tag}>")
    channel_day = _rfc822_day(channel.findtext("pubDate"))
    items: list[PaperRecord | Skipped] = []
    for number, item in enumerate(channel.findall("item"), start=1):
        try:
            items.append(parse_item(item, channel_day))
        except ValueError as exc:
            items.append(Skipped("announce", f"{where} item {number}", str(exc)))
    return items


def parse_item(item: ET.Element, channel_day: str | None = None) -> PaperRecord:
    """One RSS <item> -> PaperRecord; ValueError says what is wrong with it."""
    description = item.findtext("description") or ""
    head = _HEAD.match(description)
    if not head:
        raise ValueError("description does not start with 'arXiv:<id> Announce Type: ...'")
    paper_id, version = split_arxiv_id(head.group(1))
    announce_type = (item.findtext(f"{ARXIV}announce_type") or head.group(2)).strip().lower()
    title = item.findtext("title") or ""
    if not title.strip():
        raise ValueError(f"{paper_id}: missing title")
    abstract_at = _ABSTRACT.search(description, head.end())
    abstract = description[abstract_at.end():] if abstract_at else ""
    raw_day = item.findtext("pubDate")
    day = _rfc822_day(raw_day) if raw_day else channel_day
    if raw_day and day is None:
        raise ValueError(f"{paper_id}: invalid pubDate {raw_day!r}")
    # A cross-listing of a later version is an old paper reaching one more category.
    first = announce_type == "new" or (announce_type == "cross" and (version or 1) == 1)
    creators = item.findtext(f"{DC}creator") or ""
    links = {"abs": f"https://arxiv.org/abs/{paper_id}", "pdf": f"https://arxiv.org/pdf/{paper_id}"}
    doi = _text(item.findtext(f"{ARXIV}DOI"))
    if doi:
        links["doi"] = f"https://doi.org/{doi}"
    return PaperRecord(
        id=paper_id, version=version, title=title, abstract=abstract,
        authors=split_author_string(creators),
        categories=[c for c in dict.fromkeys(
            (e.text or "").strip() for e in item.findall("category")) if c],
        source="announce", announced=day if first else None, updated=None if first else day,
        doi=doi, journal_ref=_text(item.findtext(f"{ARXIV}journal_reference")),
        license=_text(item.findtext(f"{DC}rights")), links=links,
        extras={"announce_type": announce_type},
    )


def _rfc822_day(value: str | None) -> str | None:
    """'Thu, 24 Sep 2026 00:00:00 -0400' -> '2026-09-24' (the day in arXiv's own time zone)."""
    if not value or not value.strip():
        return None
    try:
        return parsedate_to_datetime(value.strip()).date().isoformat()
    except (TypeError, ValueError, IndexError):
        return None


def _text(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "announce", "today's announcement feed of categories joined by '+' or ','"
                " (replacements do not count as news), e.g. announce:cs.LG",
        open_source))
