"""What a store offers: its concerns, each name answering one question, each written once as a class.

A Store is reached through its concerns (`store.papers.get_paper(id)`, ...), as sqlite-utils' tables
are. A concern's class over store.sql's Database (store.readers.Readers, ...) is its contract, its
docstrings the documentation; where the backends differ (papers' writes, keyword search, vectors), a
backend extends it, adding no public method. tests/test_store_contract.py is the suite each backend
must pass; tests/test_architecture.py checks that no public name is in two concerns.

Rows are plain dicts (JSON-ready); ids are arXiv ids without version; `pk` is the store's
own integer key of a paper (what the nearest-neighbour index is keyed by); dates are ISO
strings. "Live" papers are those that are not linked as a duplicate of another.
"""

from __future__ import annotations

from typing import Protocol, Self, get_type_hints, runtime_checkable

from papersift.store.delivery import Delivery
from papersift.store.embeddings import Embeddings
from papersift.store.links import Links
from papersift.store.merges import Merges
from papersift.store.pages import Pages
from papersift.store.papers import Papers
from papersift.store.readers import Readers
from papersift.store.search import Search
from papersift.store.sql import Database
from papersift.store.summaries import Summaries
from papersift.store.tables import Tables
from papersift.store.topics import Topics

__all__ = ["CONCERNS", "SQLStore", "Store"]


@runtime_checkable
class Store(Protocol):
    """A store: its concerns, and what belongs to the connection as a whole."""

    papers: Papers
    search: Search
    embeddings: Embeddings
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

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...


# The concerns in the order a Store lists them, with their contracts (tests iterate this): a
# new concern is its module and one line in Store.
CONCERNS: dict[str, type] = {name: kind for name, kind in get_type_hints(Store).items()
                             if name != "location"}


class SQLStore:
    """A store over one Database (contract: Store), each concern built over it; a backend gives its
    own Papers, Search (and Embeddings) classes, data_version and close (a `with` block's end)."""

    def __init__(self, db: Database, papers: type[Papers], search: type[Search],
                 embeddings: type[Embeddings] = Embeddings) -> None:
        self.db = db
        self.location = db.location
        self.papers = papers(db)
        self.search = search(db)
        self.embeddings = embeddings(db, self.search)
        for name, concern in CONCERNS.items():  # the portable concerns: their class as it is
            if not hasattr(self, name):
                setattr(self, name, concern(db))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]
