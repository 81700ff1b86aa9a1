"""Where semantic search finds a query's nearest papers: the store's own index (PostgreSQL's HNSW) or the local index file (search/ann.py)."""

from __future__ import annotations

import threading
from typing import Protocol

import numpy as np

from papersift.search.ann import VectorIndex, load_index, update_index
from papersift.settings import Settings, SettingsError
from papersift.store import SearchFilters, Store


class Neighbours(Protocol):
    """The nearest papers of one model's vectors, under one search's filters."""

    count: int  # vectors searchable (0: semantic search needs `papersift embed`)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(pk, inner product) of the k nearest papers passing the filters, nearest first."""
        ...

    def vectors(self, pks: list[int]) -> tuple[list[int], np.ndarray]:
        """(pks that have a vector, their vectors)."""
        ...


class LocalNeighbours:
    """The local hnswlib file of the data dir (the SQLite store: one machine, one file)."""

    def __init__(self, index: VectorIndex, store: Store, filters: SearchFilters | None) -> None:
        self.index, self.store, self.filters = index, store, filters
        self.count = index.count
        self._allowed: set[int] | None = None

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        if self.filters is not None and not self.filters.is_empty() and self._allowed is None:
            self._allowed = self.store.search.filtered_pks(self.filters)  # once per search
        return self.index.search(vector, k, self._allowed)

    def vectors(self, pks: list[int]) -> tuple[list[int], np.ndarray]:
        return self.index.vectors(pks)


# {(store location, model): (data_version, count)}: counting a million rows per query would
# cost more than the search itself; the count only moves when the data does.
_counts: dict[tuple[str, str], tuple[int, int]] = {}
_counts_lock = threading.Lock()


class StoreNeighbours:
    """The store's own index (`store.embeddings.indexes_vectors()`), shared by every worker
    and machine and kept current by the store itself: nothing to build or reload."""

    def __init__(self, store: Store, model: str, filters: SearchFilters | None,
                 count: int | None = None) -> None:
        self.store, self.model, self.filters = store, model, filters
        self.count = _count(store, model) if count is None else count

    def search(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        return self.store.embeddings.nearest_papers(self.model, vector, k, self.filters)

    def vectors(self, pks: list[int]) -> tuple[list[int], np.ndarray]:
        return self.store.embeddings.embedding_vectors(self.model, pks)


def _count(store: Store, model: str) -> int:
    key, version = (store.location, model), store.data_version()
    with _counts_lock:
        cached = _counts.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    count = store.embeddings.count_embeddings(model)
    with _counts_lock:
        _counts[key] = (version, count)
    return count


def _choice(settings: Settings) -> str:
    choice = settings.vector_search.strip().lower()
    if choice not in ("auto", "store", "local"):
        raise SettingsError(f"vector_search is {settings.vector_search!r}: use auto, store or"
                            " local")
    return choice


def searches_locally(store: Store, settings: Settings, model: str,
                     held: int | None = None) -> bool:
    """Whether semantic search walks the local file: always for a store without an index of
    its own; for one with it (PostgreSQL) when `vector_search` says local, or says auto and
    the store holds at most `local_index_max_vectors` of this model's vectors. (Measured at
    30,000 and 98,742 papers: the server's walk and the read of the candidates' vectors make
    hybrid search 1.2-2.2x the stock stack's p95, the local file 0.6-1.3x, for 340 MB more
    memory at 98,742; at a million the file would cost 1.7 GB per machine, and the server's
    walk is faster than the stock stack there.) `held`: that count, when already read."""
    choice = _choice(settings)
    if choice == "auto" and store.embeddings.indexes_vectors():
        return (_count(store, model) if held is None else held) <= settings.local_index_max_vectors
    return choice == "local" or not store.embeddings.indexes_vectors()


def open_neighbours(store: Store, settings: Settings, model: str,
                    filters: SearchFilters | None = None) -> Neighbours | None:
    """The store's index when it keeps one (unless the settings ask for the local file), else
    the local file (built from the store's vectors the first time it is needed); None when
    there is nothing to search."""
    held = None
    if store.embeddings.indexes_vectors() and _choice(settings) != "local":
        held = _count(store, model)  # what auto decides by and the store's walk reports
    if not searches_locally(store, settings, model, held):
        return StoreNeighbours(store, model, filters, held)
    index = load_index(settings, model)
    if index is None and store.embeddings.count_embeddings(model):
        update_index(store, settings, model)
        index = load_index(settings, model)
    return None if index is None else LocalNeighbours(index, store, filters)


def refresh_local_index(store: Store, settings: Settings, model: str,
                        seen_version: int | None = None) -> tuple[int, dict[str, object] | None]:
    """Bring this machine's index file up to date with the store's vectors when semantic
    search walks it and another machine may write them (a store with an index of its own,
    walked locally: see searches_locally): (the store's data_version now, update_index's
    report, or None when nothing was done: not searching locally, or nothing committed since
    `seen_version`).
    `serve` calls it before serving and then every `local_index_refresh` seconds."""
    version = store.data_version()
    if not (store.embeddings.indexes_vectors() and searches_locally(store, settings, model)):
        return version, None
    if seen_version is not None and version == seen_version:
        return version, None
    return version, update_index(store, settings, model)
