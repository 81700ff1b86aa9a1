"""Keyword search as both backends answer it: the filters, the rows a result list shows, the newest share of the papers, and the keyword postings; each backend's Search adds its index's syntax, term statistics and ranking."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from papersift.store.postings import PREFIX_MAX, StoredPostings, plain_terms
from papersift.store.sql import Concern, Database
from papersift.store.values import KeywordQuery, SearchFilters, Term

# A word's index tokens, remembered per backend: its tokenizer is fixed, and asking the
# database costs a statement or more (on SQLite under a lock).
_TOKENS: dict[tuple[str, str], tuple[str, ...]] = {}
_TOKENS_MAX = 100_000  # words (most words of queries recur); past it the memory starts again
_TOKENS_LOCK = threading.Lock()


class Search(Concern):
    """Keyword search (contract: this class; each backend's Search adds what its index does)."""

    def __init__(self, db: Database, postings: StoredPostings) -> None:
        super().__init__(db)
        self._postings = postings

    # ------------------------------------------------------- what a backend provides
    def _tokenize(self, words: list[str]) -> list[list[str]]:
        """Each of these (one or more) words' tokens, asked of the index's own tokenizer."""
        raise NotImplementedError

    def _authors_sql(self, authors: Sequence[str]) -> tuple[str, list[Any]] | None:
        """A condition on papers `p` requiring every named author (each name's words as
        a phrase), with its parameters; None if the names hold no word."""
        raise NotImplementedError

    def _on_postings(self, query: KeywordQuery, terms: list[Term], tokens: list[list[str]],
                     weights: Sequence[float], first: int, limit: int
                     ) -> list[tuple[int, float]] | None:
        """The postings' ranking of the terms (`tokens`: each one's), None without a build."""
        raise NotImplementedError

    def _sql_ranking(self, query: KeywordQuery, weights: Sequence[float],
                     filters: SearchFilters | None, first: int, limit: int
                     ) -> list[tuple[int, float]]:
        """The index's ranking of the matches from pk `first` on that pass the filters."""
        raise NotImplementedError

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """How many indexed papers (duplicates too) hold each (already tokenized) term: what
        a query on it costs. May be slightly stale."""
        raise NotImplementedError

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """The indexed terms that start with this (already tokenized) prefix, with their papers (as
        term_doc_counts): at most `limit`, so a caller learns cheaply that it expands too far."""
        raise NotImplementedError

    # ---------------------------------------------------------------- the contract
    def index_tokens(self, words: Sequence[str]) -> list[list[str]]:
        """Each word as the keyword index sees it (stemmed, case-folded tokens; cached per word)."""
        backend = self.db.dialect
        # Both tokenizers fold ASCII case: a query's "Mobile" and its plan's "mobile" are one
        # question (beyond ASCII, folding depends on the server's locale).
        keys = [w.lower() if w.isascii() else w for w in words]
        with _TOKENS_LOCK:
            found = {w: _TOKENS.get((backend, w)) for w in keys}
        missing = [w for w, tokens in found.items() if tokens is None]
        if missing:
            fresh = self._tokenize(missing)
            with _TOKENS_LOCK:
                if len(_TOKENS) > _TOKENS_MAX:
                    _TOKENS.clear()
                for word, tokens in zip(missing, fresh, strict=True):
                    found[word] = _TOKENS[(backend, word)] = tuple(tokens)
        return [list(found[w] or ()) for w in keys]

    def keyword_search(self, query: KeywordQuery, weights: Sequence[float],
                       filters: SearchFilters | None = None, limit: int = 100
                       ) -> list[tuple[int, float]]:
        """(pk, score, higher is better) of the best live matches, best first; `weights` are the
        field weights (title, abstract, authors). StoreQueryError if the index rejects the query."""
        first = self._newest_from(query.newest_share)
        terms = plain_terms(query)
        if terms is not None and (filters is None or filters.is_empty()):
            # Plain words rank on the postings if built: same scores, less cost (store/postings.py).
            words = self._postings_words(terms)
            ranked = words and self._on_postings(query, *words, weights, first, limit)
            if ranked is not None:
                return ranked
        return self._sql_ranking(query, weights, filters, first, limit)

    def _postings_words(self, terms: list[Term]) -> tuple[list[Term], list[list[str]]] | None:
        """The terms the postings rank, each with its tokens (a prefix: its stem's words, as FTS5
        and to_tsquery match it), or None where the index ranks: a word split in two, a prefix
        of PREFIX_MAX words or more, no word left (stop words match nothing either way)."""
        kept, tokens = [], []
        for term, found in zip(terms, self.index_tokens([t.text for t in terms]), strict=True):
            words = [*self.prefix_terms(found[0], PREFIX_MAX)] if term.prefix and found else found
            if len(found) > 1 or len(words) >= PREFIX_MAX:
                return None
            if words:
                kept.append(term)
                tokens.append(words)
        return (kept, tokens) if kept else None

    def keyword_postings_status(self) -> dict[str, Any] | None:
        """papersift's own keyword postings, which rank plain words without the engine's
        per-match cost: {built, papers, tail, behind (papers added or changed since)}."""
        return self._postings.status()

    def build_keyword_postings(self, on_progress: Callable[[int, int], None] | None = None
                               ) -> dict[str, Any]:
        """Build the postings anew from the keyword index (minutes at a million papers;
        `on_progress(done, total)`); until they are complete, searches use the previous ones."""
        return self._postings.build(on_progress)

    def update_keyword_postings(self) -> dict[str, int]:
        """Bring the postings up to date: {added, changed}; StoreError if none are built."""
        return self._postings.update_tail()

    def filtered_pks(self, filters: SearchFilters | None) -> set[int]:
        """pks of the live papers that pass the filters (authors included)."""
        where, params = self._filter_sql(filters)
        return set(self.db.column(f"SELECT p.pk FROM papers p WHERE {where}", params))

    def recent_pks(self, filters: SearchFilters | None, limit: int) -> list[int]:
        """The newest live papers passing the filters: the answer to a query of filters only."""
        where, params = self._filter_sql(filters)
        return self.db.column(f"SELECT p.pk FROM papers p WHERE {where}"
                              " ORDER BY p.sort_date DESC NULLS LAST, p.pk DESC LIMIT ?",
                              (*params, int(limit)))

    def search_rows(self, pks: Sequence[int]) -> dict[int, dict[str, Any]]:
        """{pk: {pk, id, title, abstract, authors (text), primary_category, date}}."""
        among, params = self.db.any_of("pk", list(pks), "bigint")
        return {row["pk"]: row for row in self.db.dicts(
            "SELECT pk, id, title, abstract, authors_text AS authors, primary_category,"
            f" sort_date AS date FROM papers WHERE {among}", params)}

    def pk_of(self, paper_id: str) -> int | None:
        return self.db.value("SELECT pk FROM papers WHERE id = ?", (paper_id,))

    # ------------------------------------------------------------- shared steps
    def _filter_sql(self, filters: SearchFilters | None, authors: bool = True
                    ) -> tuple[str, list[Any]]:
        """Conditions on live papers `p` passing the filters (authors too, unless in the index)."""
        clauses = ["p.duplicate_of IS NULL"]
        params: list[Any] = []
        if filters is None:
            return " AND ".join(clauses), params
        column, mark = self.db.caseless("c.category"), self.db.caseless("?")
        for category in filters.categories:
            exists = ("EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper_id ="
                      f" p.id AND ({column} = {mark}")
            if "." in category:
                clauses.append(f"{exists}))")
                params.append(category)
            else:  # a whole archive or source: cat:cs (cs.LG, ...), cat:biorxiv (biorxiv/...)
                like = f"{column} LIKE {mark} ESCAPE '\\'"
                clauses.append(f"{exists} OR {like} OR {like}))")
                stem = category.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                params += [category, stem + ".%", stem + "/%"]
        if filters.since:
            clauses.append("p.sort_date >= ?")
            params.append(filters.since)
        if filters.until:
            # Inclusive at the precision given: until 2025-03 includes every day of March.
            clauses.append("substr(p.sort_date, 1, length(?)) <= ?")
            params += [filters.until, filters.until]
        if filters.topic:
            clauses.append("EXISTS (SELECT 1 FROM paper_topics pt JOIN topics t ON"
                           " t.id = pt.topic_id WHERE pt.paper_id = p.id AND t.slug = ?)")
            params.append(filters.topic)
        found = self._authors_sql(filters.authors) if authors else None
        if found:
            clauses.append(found[0])
            params += found[1]
        return " AND ".join(clauses), params

    def _newest_from(self, share: float) -> int:
        """The first pk of the newest `share` of the papers (pks grow as papers are added)."""
        if share >= 1.0:
            return 0
        last = self._postings.newest()
        return int(last - max(0.0, share) * last)
