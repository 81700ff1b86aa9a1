"""What every store backend offers: one contract per concern, each name answering one question.

A Store is reached through its concerns (`store.papers.get_paper(id)`,
`store.topics.list_topics()`, ...), in the spirit of sqlite-utils' table objects. A backend
implements every method below with the same arguments, results and errors;
tests/test_store_contract.py is the suite each backend must pass, and
tests/test_architecture.py checks that no public name is defined by two concerns.

Rows are plain dicts (JSON-ready); ids are arXiv ids without version; `pk` is the store's
own integer key of a paper (what the nearest-neighbour index is keyed by); dates are ISO
strings. "Live" papers are those that are not linked as a duplicate of another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, runtime_checkable

import numpy as np

from papersift.errors import PapersiftError
from papersift.records.prepare import PreparedRecord


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

    `items` are Terms and the explicit operators "AND", "OR", "NOT" between them (always
    well formed: an operator stands between two operands); `default_operator` joins two
    Terms that have none between them. (Authors are a filter: SearchFilters.authors.)
    """

    items: list[Term | str] = field(default_factory=list)
    default_operator: str = "OR"
    # Below 1, only this share of the papers is searched, the most recently added: how the
    # search layer caps the work of a query that matches too much to rank in full.
    newest_share: float = 1.0

    @property
    def terms(self) -> list[Term]:
        return [item for item in self.items if isinstance(item, Term)]


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


class SummariesStore(Protocol):
    """TL;DRs and blurbs with provenance, staleness and readers' flags."""

    def summary_states(self, since: str | None = None, batch: int = 1000
                       ) -> Iterable[dict[str, Any]]:
        """Every live paper (from `since` on): id, title, abstract, authors, sort_date and
        its summary's summary_hash, flagged, hidden (None without a summary)."""
        ...

    def get_summary(self, paper_id: str) -> dict[str, Any] | None:
        """The stored summary with provenance and flags, hidden or not."""
        ...

    def summaries_for(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The visible (not hidden) summaries of these papers, by id."""
        ...

    def summary_stats(self) -> dict[str, Any]:
        """papers, summarized, missing, by_writer, flagged, hidden, with_notes."""
        ...

    def put_summaries(self, rows: Sequence[dict[str, Any]]) -> int:
        """Insert or replace (paper_id, tldr, blurb, writer, input_hash, and optionally model,
        prompt_version, created_at, notes, tokens, seconds, flagged, flag_reason, hidden)
        rows in one transaction; returns how many."""
        ...

    def flag_summary(self, paper_id: str, reason: str) -> bool:
        """Mark a summary as wrong; False when the paper has none."""
        ...

    def hide_summary(self, paper_id: str, note: str | None = None) -> bool:
        """Stop showing a summary (kept, with the note appended); False when there is none."""
        ...


class TopicsStore(Protocol):
    """Topics, sections, assignments, rebuild history, slug redirects and LLM names.

    A topic is a dict: id, slug, label (what readers see: the LLM's name if any, else the
    key-phrase label), key_label, llm_label, key_phrases (list), section_id, section_slug,
    section_label, is_other, size, created_build, retired_build.
    """

    def topic_texts(self, model: str) -> dict[str, tuple[str, str]]:
        """{id: (title, abstract)} of every live paper with a vector of this model."""
        ...

    def topic_state(self) -> dict[str, Any]:
        """What a rebuild maps against: {topics (with centroids), sections, assignments
        {paper: topic id}, taken_slugs}."""
        ...

    def topic_centroids(self) -> tuple[list[int], np.ndarray, int | None]:
        """(ids, unit centroid matrix) of live regular topics, and the "other" topic's id."""
        ...

    def assigned_paper_ids(self) -> set[str]: ...

    def latest_topic_build(self) -> dict[str, Any] | None:
        """The newest build: id, created_at, method, params (dict), n_papers, report (dict)."""
        ...

    def replace_topics(self, build: dict[str, Any]) -> dict[str, Any]:
        """Write a whole rebuild in one transaction (the plan of topics.stage.plan_build);
        returns {build_id, topic_ids: {key: id}, section_ids: {key: id}}."""
        ...

    def assign_papers(self, rows: Sequence[tuple[str, int, float | None]]) -> int:
        """Give papers a topic without a rebuild: (paper id, topic id, similarity) rows."""
        ...

    def set_topic_llm_labels(self, labels: Sequence[tuple[int, str | None]]) -> None: ...

    def cached_topic_label(self, input_hash: str) -> tuple[bool, str | None]:
        """(found, label) of an LLM naming input; a cached failure is (True, None)."""
        ...

    def put_topic_label(self, input_hash: str, label: str | None, model: str,
                        notes: str | None = None) -> None: ...

    def has_topics(self) -> bool:
        """Whether a live topic holds at least one paper."""
        ...

    def list_topics(self, include_other: bool = True) -> list[dict[str, Any]]:
        """Live topics, largest first ("other" last)."""
        ...

    def list_sections(self) -> list[dict[str, Any]]:
        """Sections in order: id, slug, label, position, size, and `topics` largest first."""
        ...

    def find_topic(self, slug: str) -> dict[str, Any] | None:
        """The live topic with this slug; for an old slug, the live topic it now redirects
        to, with `redirected_from` (the slug asked) and `redirect_reason`; else None."""
        ...

    def find_section(self, slug: str) -> dict[str, Any] | None:
        """{id, slug, label} of a section."""
        ...

    def paper_topic(self, paper_id: str) -> dict[str, Any] | None:
        """The live topic of a paper."""
        ...

    def topic_sample_titles(self, topic_id: int, n: int = 5) -> list[str]:
        """Titles of the papers nearest the topic's centre."""
        ...

    def topic_assignments(self) -> list[tuple[str, int, bool]]:
        """(paper id, topic id, is_other) of every assigned live paper."""
        ...

    def weekly_topic_counts(self, since: str | None = None, topic_id: int | None = None
                            ) -> dict[int, dict[str, int]]:
        """{topic id: {Monday of the week: live papers}} (from `since` on; one topic or all)."""
        ...

    def topic_counts_between(self, start: str, end: str) -> dict[int, int]:
        """Live papers per topic with start <= sort_date < end."""
        ...


# A stored day further ahead than this is a bad date (kept from before records' dates were
# checked at ingest, or copied in): the day listings do not offer it, so it cannot head the
# front page. Wider than any sensible max_days_ahead.
FEED_HORIZON_DAYS = 31


def feed_horizon() -> str:
    """The last day (ISO) the day listings offer: today (UTC) plus FEED_HORIZON_DAYS."""
    return (datetime.now(UTC).date() + timedelta(days=FEED_HORIZON_DAYS)).isoformat()


class PagesStore(Protocol):
    """The reads of the site's listings: days, topics, sections, categories, authors, sitemap.

    A listing row: id, title, abstract, authors_text, sort_date, announced, primary_category,
    lead_authors [{name, slug}] (first three), n_authors, summary (visible, or None) and
    topic ({slug, label, section_slug, section_label, section_position}, or None).
    """

    def latest_day(self) -> str | None:
        """The newest day, up to feed_horizon(), that has a live paper."""
        ...

    def day_neighbours(self, day: str) -> tuple[str | None, str | None]:
        """(previous day with live papers, next day with live papers up to feed_horizon())."""
        ...

    def day_papers(self, day: str) -> list[dict[str, Any]]:
        """Every live paper of this day, by id."""
        ...

    def day_papers_page(self, day: str, limit: int, offset: int
                        ) -> tuple[int, list[dict[str, Any]]]:
        """(live papers of the day, one page of them by id)."""
        ...

    def all_days(self) -> list[str]:
        """Every day up to feed_horizon() with a live paper, newest first."""
        ...

    def topic_papers_page(self, topic_id: int, limit: int, offset: int
                          ) -> tuple[int, list[dict[str, Any]]]:
        """(papers of the topic, one page of them newest first)."""
        ...

    def section_papers_page(self, section_id: int, limit: int, offset: int
                            ) -> list[dict[str, Any]]:
        """One page of a section's papers, newest first."""
        ...

    def category_papers_page(self, category: str, limit: int, offset: int
                             ) -> tuple[int, list[dict[str, Any]]]:
        """(papers carrying the category, primary or cross-list; a page newest first)."""
        ...

    def category_sizes(self) -> list[tuple[str, int]]:
        """(category, live papers) for every category, largest first."""
        ...

    def find_author(self, slug: str) -> dict[str, Any] | None:
        """{id, name, slug} of an author."""
        ...

    def author_papers_page(self, author_id: int, limit: int, offset: int
                           ) -> tuple[int, list[dict[str, Any]]]:
        """(the author's live papers, one page of them newest first)."""
        ...

    def coauthors(self, author_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """Most frequent co-authors: name, slug, papers together."""
        ...

    def author_topics(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        """The author's topics, most papers first: slug, label, papers."""
        ...

    def author_categories(self, author_id: int, limit: int = 10) -> list[dict[str, Any]]:
        """The author's primary categories, most papers first: category, papers."""
        ...

    def listing_by_ids(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Listing rows of these live papers, by id."""
        ...

    def sitemap_counts(self) -> dict[str, int]:
        """Live papers, authors and live topics."""
        ...

    def sitemap_slice(self, kind: str, limit: int, offset: int) -> list[tuple[str, str | None]]:
        """(key, last date) of papers, authors, topics or sections in a stable order."""
        ...

    def authors_with_papers(self) -> Iterator[str]:
        """Slugs of the authors with at least one live paper."""
        ...


class ReadersStore(Protocol):
    """Readers: accounts, sessions, and each reader's own signals. Every method that takes a
    reader_id reads or writes only that reader's rows: no call reaches another's data.

    A reader is a dict: id, name, email, created_at, last_seen_at, signals_version (moves
    whenever the reader's follows, reactions, collections or profile entries change) and
    link_key (random, made with the account: every emailed link carries it, so no link reaches
    another account). Ids are never handed out twice, not even after a reader is removed.
    """

    def add_reader(self, name: str, email: str | None, password_hash: str) -> int:
        """A new reader's id; StoreConflict if the name (any case) is taken."""
        ...

    def find_reader(self, name: str) -> dict[str, Any] | None:
        """The reader of this name (any case), with `password_hash`."""
        ...

    def get_reader(self, reader_id: int) -> dict[str, Any] | None: ...

    def list_readers(self) -> list[dict[str, Any]]:
        """Every reader, by name, without password hashes or link keys."""
        ...

    def remove_reader(self, reader_id: int) -> bool:
        """Delete the reader and everything that is theirs, in one transaction."""
        ...

    def set_password_hash(self, reader_id: int, password_hash: str) -> None: ...

    def add_session(self, reader_id: int, token_hash: str, csrf_token: str,
                    expires_at: str) -> None: ...

    def session_of(self, token_hash: str, now: str) -> dict[str, Any] | None:
        """{reader, csrf_token, expires_at} of a session that has not expired (and marks the
        reader seen); None for an unknown or expired one."""
        ...

    def end_session(self, token_hash: str) -> None: ...

    def end_sessions(self, reader_id: int) -> int:
        """End every session of a reader; returns how many."""
        ...

    def claim_login_attempt(self, limits: Sequence[tuple[str, int]], attempt: str,
                            since: str, at: str) -> bool:
        """One atomic step: True, and one mark under each key (tagged `attempt`), if every key
        ('name:ada', 'ip:10.0.0.1', ...) has fewer marks than its limit since `since`; False,
        and nothing written, otherwise. Concurrent claims never pass a limit together."""
        ...

    def forgive_login_attempt(self, attempt: str) -> None:
        """Take back the marks of one attempt (its password was right)."""
        ...

    def clear_login_failures(self, key: str) -> None: ...

    def add_invitation(self, code_hash: str, expires_at: str) -> None: ...

    def invitation_open(self, code_hash: str, now: str) -> bool:
        """Whether an unused, unexpired invitation has this code."""
        ...

    def use_invitation(self, code_hash: str, reader_id: int, now: str) -> bool:
        """Spend an unused, unexpired invitation on this reader; False if there is none."""
        ...

    def add_follow(self, reader_id: int, kind: str, value: str) -> bool:
        """Follow a topic, section, author, category or search; False if already followed."""
        ...

    def remove_follow(self, reader_id: int, kind: str, value: str) -> bool: ...

    def follows_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{kind, value, created_at}, oldest first."""
        ...

    def set_reaction(self, reader_id: int, paper_id: str, reaction: str) -> None:
        """'up', 'down' or 'not_interested' (replacing the reader's earlier one)."""
        ...

    def set_reactions(self, reader_id: int, paper_ids: Sequence[str], reaction: str) -> None:
        """set_reaction for many papers as one write (an import of a whole library)."""
        ...

    def clear_reaction(self, reader_id: int, paper_id: str) -> bool: ...

    def reactions_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{paper_id, reaction, at}, newest first."""
        ...

    def add_to_collection(self, reader_id: int, name: str, paper_id: str) -> None:
        """Save a paper to a named collection (made on first use)."""
        ...

    def remove_from_collection(self, reader_id: int, name: str, paper_id: str) -> bool: ...

    def remove_collection(self, reader_id: int, name: str) -> bool: ...

    def collections_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{name, papers, created_at}, by name."""
        ...

    def collection_papers(self, reader_id: int, name: str) -> list[str] | None:
        """Paper ids of a collection, newest saved first; None if there is no such collection."""
        ...

    def add_claim(self, reader_id: int, author_slug: str) -> bool:
        """"This is me": the reader says they are this author; False if claimed already."""
        ...

    def remove_claim(self, reader_id: int, author_slug: str) -> bool: ...

    def claims_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{author_slug, created_at} of the reader's claims, oldest first."""
        ...

    def saved_in(self, reader_id: int, paper_ids: Sequence[str]) -> dict[str, list[str]]:
        """{paper_id: names of the reader's collections holding it} for these papers (those
        in no collection left out)."""
        ...

    def add_feedback(self, reader_id: int, text: str) -> int: ...

    def feedback_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{id, text, at}, newest first."""
        ...

    def add_profile_entry(self, reader_id: int, kind: str, phrase: str,
                          feedback_id: int | None = None) -> int | None:
        """A 'more', 'less' or 'exclude' entry's id; None if the reader has it already."""
        ...

    def remove_profile_entry(self, reader_id: int, entry_id: int) -> bool: ...

    def profile_entries(self, reader_id: int) -> list[dict[str, Any]]:
        """{id, kind, phrase, feedback_id, created_at}, oldest first."""
        ...

    def mark_shown(self, reader_id: int, paper_ids: Sequence[str], at: str) -> None:
        """Remember these papers as shown (the first time counts)."""
        ...

    def shown_before(self, reader_id: int, before: str) -> set[str]:
        """Papers first shown to the reader before this time (ISO)."""
        ...

    def shown_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{paper_id, first_at} of every paper shown to the reader, newest first."""
        ...

    def ranking_rows(self, ids: Sequence[str] | None = None, since: str | None = None
                     ) -> list[dict[str, Any]]:
        """Live papers (these ids, or those from `since` on), in storage order: id, title,
        abstract, categories, authors, author_slugs, topic_id, section_id, sort_date."""
        ...

    def background_rows(self, n: int, before: str) -> list[dict[str, Any]]:
        """About n live papers from before that day, spread evenly over the store (the same
        ones each time): what a reader's model learns against."""
        ...


class DeliveryStore(Protocol):
    """How each reader is reached: digest schedules, the digests made and sent, the papers
    sent (never twice), one-click links used, and private feed tokens."""

    def delivery_settings(self, reader_id: int) -> dict[str, Any]:
        """{schedule ('daily', 'weekly', 'off'), days (['mon', ...]), paused}: defaults for a
        reader who set none."""
        ...

    def set_delivery_settings(self, reader_id: int, schedule: str, days: Sequence[str],
                              paused: bool) -> None: ...

    def set_feed_token(self, reader_id: int, token_hash: str | None) -> None:
        """The hash of the reader's private feed token (None revokes it)."""
        ...

    def reader_of_feed_token(self, token_hash: str) -> dict[str, Any] | None: ...

    def digest_recipients(self) -> list[dict[str, Any]]:
        """Readers with an email address: {reader, settings, last_sent_at}."""
        ...

    def start_digest(self, reader_id: int, day: str, message_id: str,
                     paper_ids: Sequence[str]) -> dict[str, Any]:
        """The reader's digest of that day, made pending with these papers unless one exists
        (then it is returned as it is)."""
        ...

    def claim_digest(self, digest_id: int, claimant: str, until: str, now: str) -> bool:
        """Take the digest for sending until `until`: True for one caller only while the
        digest is unsent and nobody else's claim runs (a claim past its time is free again, so
        a sender killed mid-way does not hold it for ever)."""
        ...

    def mark_digest_sent(self, digest_id: int, sent_at: str) -> None:
        """Sent: its papers count as sent to the reader, in the same transaction."""
        ...

    def mark_digest_failed(self, digest_id: int, error: str) -> None: ...

    def digests_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{id, day, message_id, papers, status, attempts, last_error, created_at, sent_at},
        newest first."""
        ...

    def sent_paper_ids(self, reader_id: int) -> set[str]: ...

    def use_link(self, nonce: str, reader_id: int, at: str) -> str | None:
        """Spend a one-click link: None the first time, else when it was used before."""
        ...


class TablesStore(Protocol):
    """Every table's rows as all backends share them (store.tables.TABLES): what
    `papersift migrate` copies from one store into another and then compares.

    A row is a tuple of the table's columns in TABLES' order (None, int, float, str or
    bytes; a vector as its float32 little-endian bytes); rows come in key order."""

    def table_names(self) -> list[str]:
        """The tables a copy goes through, in order."""
        ...

    def count_rows(self, table: str, through: Sequence[Any] | None = None) -> int:
        """Rows of a table (those whose key is at most `through`, if given)."""
        ...

    def last_key(self, table: str) -> tuple[Any, ...] | None:
        """The highest key of a table, None if it is empty."""
        ...

    def read_rows(self, table: str, after: Sequence[Any] | None = None,
                  limit: int = 1000) -> list[tuple[Any, ...]]:
        """Up to `limit` rows in key order, from the first key above `after`."""
        ...

    def write_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> int:
        """Add rows in one transaction, skipping those whose key is stored; what derives
        from them (the keyword index, the next ids handed out) follows. Returns how many
        were added."""
        ...


@runtime_checkable
class Store(Protocol):
    """A store: its concerns, and what belongs to the connection as a whole."""

    papers: PapersStore
    search: SearchStore
    embeddings: EmbeddingsStore
    summaries: SummariesStore
    topics: TopicsStore
    pages: PagesStore
    readers: ReadersStore
    delivery: DeliveryStore
    tables: TablesStore
    location: str  # what open_store() takes to open this store again (helper processes do)

    def data_version(self) -> int:
        """A number that moves whenever another connection commits (page caches check it)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...


# The concerns in the order a Store lists them, with their contracts (tests iterate this).
CONCERNS: dict[str, type] = {
    "papers": PapersStore, "search": SearchStore, "embeddings": EmbeddingsStore,
    "summaries": SummariesStore, "topics": TopicsStore, "pages": PagesStore,
    "readers": ReadersStore, "delivery": DeliveryStore, "tables": TablesStore,
}
