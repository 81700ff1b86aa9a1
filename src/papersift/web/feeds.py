"""Atom feeds built from a page's dict: the same papers the page shows, as entries."""

from __future__ import annotations

import re
from typing import Any
from xml.etree import ElementTree as ET

from papersift.clock import utc_now
from papersift.latex import readable

ATOM = "http://www.w3.org/2005/Atom"
# What XML 1.0 cannot hold at all, escaped or not: C0 controls but tab, newline and carriage
# return, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """The text without the characters XML forbids: the last guard of every XML output
    (ingest already removes them, but a store may predate that)."""
    return _NOT_XML.sub("", text) if _NOT_XML.search(text) else text


def _stamp(day: str | None) -> str:
    return f"{day[:10]}T00:00:00Z" if day else utc_now()


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: xml_safe(str(v)) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_safe(str(text))
    return element


def atom_feed(data: dict[str, Any], base_url: str, site_title: str) -> bytes:
    """Serialize a page's papers as an Atom 1.0 document (ElementTree escapes every string)."""
    base = base_url.rstrip("/")
    papers = data.get("papers") or []
    feed = ET.Element("feed", {"xmlns": ATOM})
    title = data.get("title") or site_title
    _sub(feed, "title", title if title == site_title else f"{title} — {site_title}")
    self_path = data.get("feed") or data.get("path") or "/"
    _sub(feed, "id", base + self_path)
    _sub(feed, "link", rel="self", href=base + self_path)
    _sub(feed, "link", rel="alternate", type="text/html", href=base + (data.get("path") or "/"))
    dates = [p["date"] for p in papers if p.get("date")]
    _sub(feed, "updated", _stamp(max(dates) if dates else None))
    _sub(_sub(feed, "author"), "name", site_title)
    _sub(feed, "generator", "papersift")
    for paper in papers:
        entry = _sub(feed, "entry")
        _sub(entry, "id", base + paper["url"])
        _sub(entry, "title", readable(paper["title"]))  # idempotent on a page's clean title
        _sub(entry, "link", rel="alternate", type="text/html", href=base + paper["url"])
        _sub(entry, "updated", _stamp(paper.get("date")))
        _sub(entry, "published", _stamp(paper.get("date")))
        for person in paper.get("authors") or []:
            author = _sub(entry, "author")
            _sub(author, "name", person["name"])
            _sub(author, "uri", base + person["url"])
        if paper.get("n_authors", 0) > len(paper.get("authors") or []):
            _sub(_sub(entry, "contributor"), "name", "et al.")
        _sub(entry, "summary", readable(paper.get("blurb")), type="text")
        if paper.get("topic"):
            _sub(entry, "category", term=paper["topic"]["slug"], label=paper["topic"]["label"])
        elif paper.get("category"):
            _sub(entry, "category", term=paper["category"])
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="unicode")).encode()
