"""Paper sources: parse a SOURCE spec ('arxiv:cs.LG,cs.CL', 'file:PATH', ...) and open its record stream.

Each source module exposes `open_source(arg, options, settings, client=None)` returning an
iterator of PaperRecord | Skipped. Sources never touch the store.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import httpx

from papersift.records import PaperRecord, Skipped
from papersift.settings import Settings

# kind -> (module, what the argument is)
SOURCE_KINDS: dict[str, tuple[str, str]] = {
    "arxiv": ("papersift.sources.arxiv_api", "comma-separated categories, e.g. arxiv:cs.LG,cs.CL"),
    "oai": ("papersift.sources.oai",
            "an OAI-PMH set or category (?prefix=arXivRaw adds version history; --since/--until),"
            " e.g. oai:cs.LG"),
    "announce": ("papersift.sources.announce",
                 "today's announcement feed of categories joined by '+' or ',' (replacements do"
                 " not count as news), e.g. announce:cs.LG"),
    "hf": ("papersift.sources.hf_daily", "a day, e.g. hf:2026-11-28 (default today)"),
    "file": ("papersift.sources.files", "a JSON-lines file (.gz accepted), e.g. file:papers.jsonl.gz"),
}


class SpecError(ValueError):
    """A SOURCE spec that names no known source or has a bad argument."""


@dataclass(frozen=True)
class SourceOptions:
    """Options that apply to every source that understands them."""

    since: date | None = None
    until: date | None = None
    limit: int | None = None  # stop after this many records (for trying a source out)


def parse_spec(spec: str) -> tuple[str, str]:
    """'arxiv:cs.LG' -> ('arxiv', 'cs.LG'); a bare existing path is taken as a file."""
    kind, sep, arg = spec.partition(":")
    if not sep or kind not in SOURCE_KINDS:
        known = ", ".join(f"{k}:..." for k in SOURCE_KINDS)
        raise SpecError(f"unknown source {spec!r}; expected one of {known}")
    if kind != "hf" and not arg.strip():
        raise SpecError(f"{kind}: needs an argument: {SOURCE_KINDS[kind][1]}")
    return kind, arg.strip()


def open_source(
    spec: str,
    options: SourceOptions,
    settings: Settings,
    client: httpx.Client | None = None,
) -> Iterator[PaperRecord | Skipped]:
    """The record stream of one SOURCE spec. Network sources use `client` when given (tests).

    `options.limit` is applied here for every source: the stream is not read past the last
    record wanted, so a paged source fetches no further page.
    """
    kind, arg = parse_spec(spec)
    module = importlib.import_module(SOURCE_KINDS[kind][0])
    stream = module.open_source(arg, options, settings, client=client)
    return _limited(stream, options.limit) if options.limit else stream


def _limited(items: Iterator[PaperRecord | Skipped], limit: int) -> Iterator[PaperRecord | Skipped]:
    """The items up to and including the limit-th record (skips pass through uncounted)."""
    emitted = 0
    for item in items:
        yield item
        if isinstance(item, PaperRecord):
            emitted += 1
            if emitted >= limit:
                return
