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
from papersift.records import PaperRecord, Skipped, SourceError, split_arxiv_id
from papersift.settings import Settings
from papersift.sources import SourceOptions, jsontext
from papersift.sources.http import BadResponse, Fetcher

# paper field -> extras key, for the extras worth keeping when present.
_PAPER_EXTRAS = {
    "upvotes": "upvotes", "githubRepo": "github_repo", "githubStars": "github_stars",
    "projectPage": "project_page",
}


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
        items = fetcher.get(url, {"date": day.isoformat()}, parse=_json_list)
    for number, item in enumerate(items, start=1):
        try:
            yield parse_item(item)
        except ValueError as exc:
            yield Skipped("hf", f"{url}?date={day} item {number}", str(exc))


def _json_list(response: httpx.Response) -> list[Any]:
    try:
        data = jsontext.loads(response.content)
    except json.JSONDecodeError as exc:
        raise BadResponse(f"the daily papers JSON does not parse ({exc})") from None
    if not isinstance(data, list):
        raise BadResponse(f"expected a JSON list of papers, got {type(data).__name__}")
    return data


def parse_item(item: Any) -> PaperRecord:
    """One daily-papers item -> PaperRecord; ValueError says what is wrong with it."""
    paper = item.get("paper") if isinstance(item, dict) else None
    if not isinstance(paper, dict):
        raise ValueError("item without a 'paper' object")
    raw_id = paper.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise ValueError("paper without an id")
    paper_id, _ = split_arxiv_id(raw_id)
    title = paper.get("title") or item.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"{paper_id}: missing title")
    abstract = paper.get("summary") or item.get("summary") or ""
    if not isinstance(abstract, str):
        raise ValueError(f"{paper_id}: summary is not text")
    authors = paper.get("authors") or []
    if not isinstance(authors, list):
        raise ValueError(f"{paper_id}: authors is not a list")
    names = [a["name"].strip() for a in authors
             if isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"].strip()]
    extras = {key: paper[field] for field, key in _PAPER_EXTRAS.items()
              if paper.get(field) not in (None, "")}
    if isinstance(item.get("numComments"), int):
        extras["num_comments"] = item["numComments"]
    return PaperRecord(
        id=paper_id, version=None, title=title, abstract=abstract, authors=names, categories=[],
        source="hf", submitted=_timestamp(paper.get("publishedAt"), paper_id), announced=None,
        links={"abs": f"https://arxiv.org/abs/{paper_id}", "pdf": f"https://arxiv.org/pdf/{paper_id}",
               "hf": f"https://huggingface.co/papers/{paper_id}"},
        extras=extras,
    )


def _timestamp(value: Any, paper_id: str) -> str | None:
    if value in (None, ""):
        return None
    try:
        datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{paper_id}: invalid publishedAt {value!r}") from None
    return str(value)


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "hf", "a day (default today), e.g. hf:2026-11-28",
        open_source, needs_argument=False))
