"""Backends by kind (sources, embedders, engines, summary writers, stores), registered through one hook.

A backend is a module with a `register(plugins)` function that adds plain objects to the
registries below. The built-in ones are listed in _builtin_modules(); a package outside
papersift registers the same way through the `papersift` entry-point group
(`[project.entry-points.papersift] mine = "mine.module"`). Adding a source, embedder,
writer or store backend is one module plus one line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from papersift.errors import UsageError

if TYPE_CHECKING:
    import httpx

    from papersift.records import PaperRecord, Skipped
    from papersift.settings import Settings

ENTRY_POINT_GROUP = "papersift"


@dataclass(frozen=True)
class SourceOptions:
    """Options that apply to every source that understands them."""

    since: date | None = None
    until: date | None = None
    limit: int | None = None  # stop after this many records (for trying a source out)


@dataclass(frozen=True)
class SourcePlugin:
    """A paper source: `open(argument, options, settings, client)` streams its records."""

    name: str  # the prefix of its SOURCE specs: 'arxiv' in 'arxiv:cs.LG'
    help: str  # what the argument is, ending with an example ("e.g. arxiv:cs.LG,cs.CL")
    open: Callable[[str, SourceOptions, Settings, httpx.Client | None],
                   Iterator[PaperRecord | Skipped]]
    needs_argument: bool = True
    # For a source that reads a local JSON-lines file: the file its argument names. The
    # ingest stage then reads it in a helper process (sources.files.read_lines), so that
    # the writing process only runs SQL.
    local_file: Callable[[str], Path] | None = None


@dataclass(frozen=True)
class EmbedderPlugin:
    """An embedding backend: `make(settings)` returns an object with model_id, dim, embed().

    `model_prefix(settings)` is how its model ids start, so that stored vectors can be told
    apart without loading the model."""

    name: str
    help: str
    make: Callable[[Settings], Any]
    model_prefix: Callable[[Settings], str]


@dataclass(frozen=True)
class WriterPlugin:
    """A summary writer: `make(settings)` returns an object with name, identity, write_many()."""

    name: str
    help: str
    make: Callable[[Settings], Any]


@dataclass(frozen=True)
class EnginePlugin:
    """Where a stage's batches are computed (the embed stage's texts, the assignment of new
    papers to topics): `run(settings, job, chunks)` takes a papersift.engines.Job and an
    iterable of chunks and yields each chunk with its result, in any order (the stage writes
    them to the store)."""

    name: str
    help: str
    run: Callable[[Settings, Any, Iterator[Any]], Iterator[tuple[Any, Any]]]


@dataclass(frozen=True)
class StorePlugin:
    """A store backend: `open(location, readonly)` for locations of its URL schemes."""

    name: str
    schemes: tuple[str, ...]
    # Returns a store.contracts.Store: the store registers here, so this module (below the
    # store in the layers) cannot name that type.
    open: Callable[[str, bool], Any]


P = TypeVar("P", SourcePlugin, EmbedderPlugin, WriterPlugin, StorePlugin, EnginePlugin)


class Registry(Generic[P]):
    """The plugins of one kind, by name, in the order they were registered."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, P] = {}

    def add(self, plugin: P) -> None:
        if plugin.name in self._items:
            raise ValueError(f"two {self.kind} plugins are named {plugin.name!r}")
        self._items[plugin.name] = plugin

    def get(self, name: str) -> P:
        try:
            return self._items[name]
        except KeyError:
            raise UsageError(f"unknown {self.kind} {name!r}; choose one of "
                             f"{', '.join(self._items)}") from None

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[P]:
        return iter(self._items.values())


@dataclass
class Plugins:
    """Every registry; what a plugin module's register() receives."""

    sources: Registry[SourcePlugin] = field(default_factory=lambda: Registry("source"))
    embedders: Registry[EmbedderPlugin] = field(default_factory=lambda: Registry("embedder"))
    writers: Registry[WriterPlugin] = field(default_factory=lambda: Registry("writer"))
    stores: Registry[StorePlugin] = field(default_factory=lambda: Registry("store backend"))
    engines: Registry[EnginePlugin] = field(default_factory=lambda: Registry("engine"))


def _builtin_modules() -> tuple[ModuleType, ...]:
    # Imported here, not at the top: these modules import this one for the plugin types.
    from papersift import engines
    from papersift.search import embed
    from papersift.sources import announce, arxiv_api, biorxiv, crossref, files, hf_daily, oai
    from papersift.store import postgres, sqlite
    from papersift.summarize import llm, writers

    return (arxiv_api, oai, announce, hf_daily, biorxiv, crossref, files, embed, engines, writers,
            llm, sqlite, postgres)


def _outside_modules() -> list[ModuleType]:
    return [entry.load() for entry in entry_points(group=ENTRY_POINT_GROUP)]


_loaded: Plugins | None = None
_lock = threading.Lock()


def plugins() -> Plugins:
    """The registries, filled on first use: built-in backends first, then outside ones."""
    global _loaded
    with _lock:
        if _loaded is None:
            found = Plugins()
            for module in (*_builtin_modules(), *_outside_modules()):
                module.register(found)
            _loaded = found
        return _loaded
