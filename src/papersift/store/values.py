"""The errors a store raises and the values its methods take and give (every concern imports them from here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from papersift.errors import PapersiftError


class StoreError(PapersiftError):
    """The database cannot be opened, is from a newer papersift, or a helper of it failed."""


class StoreUnavailable(StoreError):
    """The database server does not answer (down, restarting, unreachable): try again soon."""


class StoreConflict(StoreError):
    """A write that would repeat what must be unique (a reader name already taken)."""


class StoreQueryError(StoreError):
    """The keyword index rejected a query (the search layer builds valid ones; say so if not)."""


@dataclass
class UpsertReport:
    """What one batch did to the store."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (paper, duplicate of)


@dataclass
class SearchFilters:
    """Restrictions on which papers a search may return; dates are inclusive ISO prefixes."""

    authors: list[str] = field(default_factory=list)  # each name's words as a phrase
    categories: list[str] = field(default_factory=list)  # 'cs.LG', or a whole archive: 'cs'
    since: str | None = None
    until: str | None = None
    topic: str | None = None  # a topic slug

    def is_empty(self) -> bool:
        return not (self.authors or self.categories or self.since or self.until or self.topic)


@dataclass
class Term:
    """One operand of a keyword query: a word, a prefix word, or a phrase. `weight` is how many
    times it counts in the ranking (a word a long question repeats is what it is about)."""

    text: str
    phrase: bool = False
    prefix: bool = False
    weight: int = 1


@dataclass
class KeywordQuery:
    """A keyword query as the search layer parsed it; each backend writes it in its own syntax.
    `items` are Terms and the explicit operators "AND", "OR", "NOT" between them (always well
    formed: an operator stands between two operands); `default_operator` joins two Terms that
    have none between them. (Authors are a filter: SearchFilters.authors.)"""

    items: list[Term | str] = field(default_factory=list)
    default_operator: str = "OR"
    # Below 1, only this share of the papers is searched, the most recently added: how the
    # search layer caps the work of a query that matches too much to rank in full.
    newest_share: float = 1.0

    @property
    def terms(self) -> list[Term]:
        return [item for item in self.items if isinstance(item, Term)]
