"""Hugging Face daily papers (huggingface.co/api/daily_papers?date=...): arXiv papers picked by the community, with upvotes.

`hf:2026-11-28` reads that day's list (`hf:` alone: today, UTC). Each item's `paper.id` is
an arXiv id; the record carries no version, so when arXiv already gave the paper its text
wins (the store ranks `hf` lowest) and only the extras (upvotes, comments, code) attach.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import httpx

from papersift.plugins import Plugins, SourcePlugin
from papersift.records import (
    PaperRecord,
    Skipped,
    SourceError,
    json_kind,
    shown,
    split_arxiv_id,
)
from papersift.settings import Settings
from papersift.sources import SourceOptions, jsontext
from papersift.sources.http import BadResponse, Fetcher


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    text = arg.strip()
    try:
        day = date.fromisoformat(text) if text else datetime.now(UTC).date()
    except ValueError:
        raise SourceError(f"hf: expected a day like 2026-11-28, not {text!r}") from None
    return _read(day, options, settings, client)


def _read(
    day: date, options: SourceOptions, settings: Settings, client: httpx.Client | None
) -> Iterator[PaperRecord | Skipped]:
    url = settings.hf_url
    with Fetcher(settings, client) as fetcher:
        depth = int(settings.max_json_depth)
        items = fetcher.get(url, {"date": day.isoformat()},
                            parse=lambda response: _json_list(response, depth))
    for number, item in enumerate(items, start=1):
        try:
            yield parse_item(item)
        except ValueError as exc:
            yield Skipped("hf", f"{url}?date={day} item {number}", str(exc))


def _json_list(response: httpx.Response, max_depth: int) -> list[Any]:
    try:
        data = jsontext.loads(response.content, max_depth)
    except jsontext.TooDeep as exc:
        # Nesting is the answer's shape, not a transfer accident: asking again gives the same.
        raise SourceError(f"the daily papers answer is {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadResponse(f"the daily papers JSON does not parse ({exc})") from None
    if not isinstance(data, list):
        raise BadResponse(f"expected a JSON list of papers, got {json_kind(data)}")
    return data


# paper field -> (extras key, the JSON type it must have)
_PAPER_EXTRAS: dict[str, tuple[str, type]] = {
    "upvotes": ("upvotes", int), "githubRepo": ("github_repo", str),
    "githubStars": ("github_stars", int), "projectPage": ("project_page", str),
}


def parse_item(item: Any) -> PaperRecord:
    """One daily-papers item -> PaperRecord; ValueError says what is wrong with it."""
    paper = item.get("paper") if isinstance(item, dict) else None
    if not isinstance(paper, dict):
        raise ValueError(f"item without a 'paper' object ({json_kind(paper)})")
    raw_id = paper.get("id")
    if raw_id is None or raw_id == "":
        raise ValueError("paper without an id")
    paper_id, _ = split_arxiv_id(raw_id)
    title = paper.get("title") or item.get("title")
    if title is None or (isinstance(title, str) and not title.strip()):
        raise ValueError(f"{paper_id}: missing title")
    if not isinstance(title, str):
        raise ValueError(f"{paper_id}: title is {json_kind(title)}, not text")
    abstract = paper.get("summary") or item.get("summary") or ""
    if not isinstance(abstract, str):
        raise ValueError(f"{paper_id}: summary is {json_kind(abstract)}, not text")
    return PaperRecord(
        id=paper_id, version=None, title=title, abstract=abstract,
        authors=_names(paper.get("authors") or [], paper_id), categories=[],
        source="hf", submitted=_timestamp(paper.get("publishedAt"), paper_id), announced=None,
        links={"abs": f"https://arxiv.org/abs/{paper_id}", "pdf": f"https://arxiv.org/pdf/{paper_id}",
               "hf": f"https://huggingface.co/papers/{paper_id}"},
        extras=_extras(item, paper, paper_id),
    )


def _names(authors: Any, paper_id: str) -> list[str]:
    if not isinstance(authors, list):
        raise ValueError(f"{paper_id}: authors is {json_kind(authors)}, not a list")
    return [a["name"].strip() for a in authors
            if isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"].strip()]


def _extras(item: dict[str, Any], paper: dict[str, Any], paper_id: str) -> dict[str, Any]:
    """Upvotes, comments, code: each of the type it must have, or ValueError."""
    extras: dict[str, Any] = {}
    fields = [(paper, name, key, kind) for name, (key, kind) in _PAPER_EXTRAS.items()]
    for source, name, key, kind in [*fields, (item, "numComments", "num_comments", int)]:
        value = source.get(name)
        if value is None or value == "":
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ValueError(f"{paper_id}: {name} is {json_kind(value)}, not "
                             + ("a whole number" if kind is int else "text"))
        extras[key] = value
    return extras


def _timestamp(value: Any, paper_id: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{paper_id}: publishedAt is {json_kind(value)}, not text")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{paper_id}: invalid publishedAt {shown(value)}") from None
    return value


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "hf", "a day (default today), e.g. hf:2026-11-28",
        open_source, needs_argument=False))
