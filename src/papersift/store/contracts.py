"""What a store offers: its concerns, each name answering one question; a Protocol for each concern with two implementations.

A Store is reached through its concerns (`store.papers.get_paper(id)`,
`store.topics.list_topics()`, ...), in the spirit of sqlite-utils' table objects. A portable
concern is one class written once over store.sql's Database (store.readers.Readers, ...):
that class is its contract, its docstrings the documentation. The concerns each backend
writes its own way (papers' writes, keyword search, vectors) have a Protocol below, which
every backend implements with the same arguments, results and errors.
tests/test_store_contract.py is the suite each backend must pass, and
tests/test_architecture.py checks that no public name is defined by two concerns.

Rows are plain dicts (JSON-ready); ids are arXiv ids without version; `pk` is the store's
own integer key of a paper (what the nearest-neighbour index is keyed by); dates are ISO
strings. "Live" papers are those that are not linked as a duplicate of another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import numpy as np

from papersift.records.prepare import PreparedRecord
from papersift.store.delivery import Delivery
from papersift.store.links import Links
from papersift.store.merges import Merges
from papersift.store.pages import Pages
from papersift.store.readers import Readers
from papersift.store.summaries import Summaries
from papersift.store.tables import Tables
from papersift.store.topics import Topics

# The values the Protocols name, and what the search modules import from here (the
# rest of papersift takes them from papersift.store, which takes them from store.values).
from papersift.store.values import (
    KeywordQuery,
    SearchFilters,
    StoreError,
    StoreQueryError,
    Term,
    UpsertReport,
)

__all__ = [
    "CONCERNS", "EmbeddingsStore", "KeywordQuery", "PapersStore", "SearchFilters", "SearchStore",
    "Store", "StoreError", "StoreQueryError", "Term", "UpsertReport",
]


class PapersStore(Protocol):
    """Papers with their versions, authors, categories and sources."""

    def upsert_papers(self, items: Sequence[PreparedRecord]) -> UpsertReport:
        """Insert or merge a batch in one transaction (rules: papersift.records.merge).

        A record its source already gave unchanged costs one lookup and counts as
        unchanged; a new paper with the DOI or title key of a stored one is linked to it
        as a duplicate."""
        ...

    def current_lines(self, keys: Sequence[int]) -> set[int]:
        """The line keys (PreparedRecord.line_key) whose record is still what its source
        last gave for its paper: such a line need not be parsed again."""
        ...

    def bulk_load(self, wanted: bool = True) -> AbstractContextManager[bool]:
        """A context for loading many papers; yields whether the backend defers index work
        to its end (if `wanted` and the store was empty, or an earlier load was cut short)."""
        ...

    def record_ingest_run(self, sources: list[str], started_at: str,
                          report: dict[str, Any]) -> int:
        """Keep the report of one ingest run; returns its id."""
        ...

    def count_papers(self, include_duplicates: bool = False) -> int: ...

    def resolve_ids(self, ids: Sequence[str]) -> dict[str, str]:
        """{id: the id signals about it are kept under (its original if it is a duplicate)}
        for each of these ids the store holds, in one query."""
        ...

    def get_paper(self, paper_id: str) -> dict[str, Any] | None:
        """The whole paper: its columns, `authors` [{name, slug}], `categories` (primary
        first), `versions` [{version, date}], `sources` {source: extras}, `duplicates` [ids],
        `links` {name: url}; None if unknown."""
        ...

    def iter_papers(self, ids: Sequence[str] | None = None, since: str | None = None,
                    batch: int = 1000) -> Iterable[dict[str, Any]]:
        """Live papers (all, or these ids; from `since` on) in storage order, with `authors`
        as a list of names: what the stages read."""
        ...

    def paper_dates(self, ids: Sequence[str] | None = None) -> dict[str, str | None]:
        """{id: sort_date} of live papers (all, or these)."""
        ...

    def primary_categories(self) -> dict[str, str | None]:
        """{id: primary category} of live papers."""
        ...

    def stats(self) -> dict[str, Any]:
        """papers, distinct_papers, duplicates, authors, by_source, by_category, by_month,
        full_text_index_pending, indexes_pending."""
        ...

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every table of this concern in a canonical order, for comparing two stores."""
        ...


class SearchStore(Protocol):
    """The keyword index, search filters, and the rows a result list shows."""

    def index_tokens(self, words: Sequence[str]) -> list[list[str]]:
        """Each word as the keyword index sees it (stemmed, case-folded tokens)."""
        ...

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """How many indexed papers (duplicates too) hold each (already tokenized) term: what
        a query on it costs. May be slightly stale."""
        ...

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """The indexed terms that start with this (already tokenized) prefix, each with its
        number of papers (as term_doc_counts): at most `limit` of them, so that a caller can
        learn that a prefix expands too far without reading all of it."""
        ...

    def keyword_search(self, query: KeywordQuery, weights: Sequence[float],
                       filters: SearchFilters | None = None, limit: int = 100
                       ) -> list[tuple[int, float]]:
        """(pk, score, higher is better) of the best live matches, best first; `weights`
        are the field weights (title, abstract, authors). StoreQueryError if the index
        rejects the query."""
        ...

    def keyword_postings_status(self) -> dict[str, Any] | None:
        """papersift's own keyword postings, which rank plain words without the engine's
        per-match cost: {built, papers, tail, behind (papers added or changed since)}, or
        None where the backend ranks every query in its own index."""
        ...

    def build_keyword_postings(self, on_progress: Callable[[int, int], None] | None = None
                               ) -> dict[str, Any]:
        """Build the postings anew from the keyword index (minutes at a million papers;
        `on_progress(done, total)` in index entries); they take over when complete, the
        searches meanwhile use the previous ones. StoreError where they are not kept."""
        ...

    def update_keyword_postings(self) -> dict[str, int]:
        """Bring the postings up to date with the papers added or changed since: {added,
        changed}. StoreError if none are built."""
        ...

    def filtered_pks(self, filters: SearchFilters | None) -> set[int]:
        """pks of the live papers that pass the filters (authors included)."""
        ...

    def recent_pks(self, filters: SearchFilters | None, limit: int) -> list[int]:
        """The newest live papers passing the filters: the answer to a query of filters only."""
        ...

    def search_rows(self, pks: Sequence[int]) -> dict[int, dict[str, Any]]:
        """{pk: {pk, id, title, abstract, authors (text), primary_category, date}}."""
        ...

    def pk_of(self, paper_id: str) -> int | None: ...


class EmbeddingsStore(Protocol):
    """One vector per paper and model, keyed by a hash of the embedded text."""

    def iter_embedding_inputs(self, model: str, batch: int = 512
                              ) -> Iterator[list[tuple[str, str, str, str | None]]]:
        """Batches of (paper id, title, abstract, stored text hash or None) of every live
        paper: the embed stage decides by the hash what is missing or stale."""
        ...

    def put_embeddings(self, model: str, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        """Store (paper id, text hash, vector) rows in one transaction, replacing older ones."""
        ...

    def embedding_matrix(self, model: str, ids: Sequence[str] | None = None
                         ) -> tuple[list[str], np.ndarray]:
        """(paper ids, float32 matrix) of the live papers' vectors, in storage order."""
        ...

    def embedding_vectors(self, model: str, pks: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(pks found, float32 matrix) for these pks, in the order asked."""
        ...

    def embedding_state(self, model: str) -> dict[int, str]:
        """{pk: text hash} of every live paper's vector (what an index must hold)."""
        ...

    def get_embedding(self, paper_id: str, model: str) -> np.ndarray | None: ...

    def has_embedding(self, paper_id: str) -> bool:
        """Whether any model's vector of this paper is stored."""
        ...

    def count_embeddings(self, model: str) -> int: ...

    def embedding_models(self) -> list[str]:
        """Models with stored vectors, most vectors first."""
        ...

    def nearest_papers(self, model: str, vector: np.ndarray, k: int,
                       filters: SearchFilters | None = None) -> list[tuple[int, float]]:
        """(pk, inner product with `vector`) of the k live papers whose vectors of this model
        are nearest to it, nearest first, among those passing `filters`. A backend that
        indexes vectors (`indexes_vectors`) answers approximately from its index; otherwise
        the answer is exact (every vector is read: what recall is measured against)."""
        ...

    def indexes_vectors(self) -> bool:
        """Whether nearest_papers answers from a nearest-neighbour index kept in the store,
        fast at any size (PostgreSQL's HNSW): the search layer then asks the store instead of
        building the local index file (search/ann.py) from it."""
        ...

    def drop_vector_index(self) -> bool:
        """Drop the store's own nearest-neighbour index before a bulk write, so that each
        write does not also insert into it (True if an index was dropped; False for a store
        without one). Until `build_vector_index` runs, nearest_papers is exact and slow."""
        ...

    def build_vector_index(self, memory_mb: int, workers: int) -> float | None:
        """Build the store's own index if it is missing, in one pass over the stored
        vectors, with up to `memory_mb` of memory and `workers` parallel workers; seconds
        taken, or None when there was nothing to build. Safe to call at any time: a bulk
        write that was stopped before its index was rebuilt is mended by the next call."""
        ...


@runtime_checkable
class Store(Protocol):
    """A store: its concerns, and what belongs to the connection as a whole."""

    papers: PapersStore
    search: SearchStore
    embeddings: EmbeddingsStore
    summaries: Summaries
    topics: Topics
    pages: Pages
    readers: Readers
    delivery: Delivery
    tables: Tables
    merges: Merges
    links: Links
    location: str  # what open_store() takes to open this store again (helper processes do)

    def data_version(self) -> int:
        """A number that moves whenever another connection commits (page caches check it)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...


# The concerns in the order a Store lists them, with their contracts: a Protocol, or the one
# class both backends use (tests iterate this).
CONCERNS: dict[str, type] = {
    "papers": PapersStore, "search": SearchStore, "embeddings": EmbeddingsStore,
    "summaries": Summaries, "topics": Topics, "pages": Pages,
    "readers": Readers, "delivery": Delivery, "tables": Tables, "merges": Merges,
    "links": Links,
}
