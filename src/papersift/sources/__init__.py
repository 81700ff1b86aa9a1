"""Paper sources: parse a SOURCE spec ('arxiv:cs.LG,cs.CL', 'file:PATH', ...) and open its record stream.

Each source module registers a plugins.SourcePlugin whose `open(arg, options, settings,
client)` returns an iterator of PaperRecord | Skipped. Sources never touch the store.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from papersift.errors import UsageError
from papersift.plugins import SourceOptions, plugins
from papersift.records import PaperRecord, Skipped
from papersift.settings import Settings

__all__ = ["SourceOptions", "SpecError", "open_parsed", "open_source", "parse_spec"]


class SpecError(UsageError):
    """A SOURCE spec that names no known source or has a bad argument."""


def parse_spec(spec: str) -> tuple[str, str]:
    """'arxiv:cs.LG' -> ('arxiv', 'cs.LG'); a bare existing path is taken as a file."""
    kind, sep, arg = spec.partition(":")
    sources = plugins().sources
    if not sep or kind not in sources:
        known = ", ".join(f"{k}:..." for k in sources.names())
        raise SpecError(f"unknown source {spec!r}; expected one of {known}")
    if sources.get(kind).needs_argument and not arg.strip():
        raise SpecError(f"{kind}: needs an argument: {sources.get(kind).help}")
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
    return open_parsed(*parse_spec(spec), options, settings, client)


def open_parsed(kind: str, arg: str, options: SourceOptions, settings: Settings,
                client: httpx.Client | None = None) -> Iterator[PaperRecord | Skipped]:
    """open_source of a spec parse_spec has read already."""
    stream = plugins().sources.get(kind).open(arg, options, settings, client)
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
