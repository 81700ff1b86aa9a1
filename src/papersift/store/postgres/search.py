"""Keyword search on a weighted tsvector: queries written as tsquery, ranked by BM25 as FTS5 computes it, filters, term statistics.

The index (papers.fts, GIN) holds title, abstract and authors as weight classes A, B and C.
PostgreSQL's own ts_rank has no inverse document frequency, so a long query's common words
would count as much as its rare ones. The score is FTS5's bm25 instead, term by term: idf
(from term_doc_counts) times a saturating, length-normalised term frequency, where the term
frequency is the sum of the field weights of the term's occurrences, which is exactly what
ts_rank_cd returns for a query of that one term. docs/architecture.md compares the two.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from papersift.store.contracts import (
    KeywordQuery,
    SearchFilters,
    StoreQueryError,
    Term,
)
from papersift.store.postgres.db import Concern, Connector
from papersift.store.postgres.postings import LENGTH, KeywordPostings
from papersift.store.postings import idf, plain_terms
from papersift.store.tokens import remembered_tokens

CONFIG = "papersift_english"  # the text search configuration of migration 0001
# FTS5's bm25 parameters (sqlite/ext/fts5/fts5_aux.c).
K1, B = 1.2, 0.75
_OPERATORS = ("AND", "OR", "NOT")
# Document counts per database and term, with the index size they were read at.
_DOC_COUNTS: dict[str, dict[str, tuple[int, int]]] = {}  # " length": the average length
_DOC_COUNTS_MAX = 200_000
_COUNTS_LOCK = threading.Lock()
# How long the counts a search plan read serve its ranking (see Search._statistics).
JUST_READ_SECONDS = 1.0


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as tsquery input text (taken as it is: no stemming)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def term_sql(term: Term) -> tuple[str, str]:
    """(SQL of a tsquery, its parameter) for one Term: stemmed as the index is."""
    if term.prefix:
        return f"to_tsquery('{CONFIG}', %s)", quote_lexeme(term.text) + ":*"
    if term.phrase:
        return f"phraseto_tsquery('{CONFIG}', %s)", term.text
    return f"plainto_tsquery('{CONFIG}', %s)", term.text


def tsquery_sql(query: KeywordQuery) -> tuple[str, list[str], list[tuple[Term, str, str]]]:
    """(SQL of the whole tsquery, its parameters in order, the scored terms as (term, SQL,
    parameter)). FTS5's precedence: NOT (binary: 'a NOT b' is a and not b) binds tightest,
    then AND, then OR; SQL's tsquery operators are all equal, so every group is bracketed."""
    sequence: list[Any] = []  # operand, operator, operand, ...
    scored: list[tuple[Term, str, str]] = []
    for item in query.items:
        if isinstance(item, Term):
            if sequence and not isinstance(sequence[-1], str):
                sequence.append(query.default_operator)
            sql, param = term_sql(item)
            if not (sequence and sequence[-1] == "NOT"):
                scored.append((item, sql, param))
            sequence.append((sql, [param]))
        elif item in _OPERATORS and sequence and not isinstance(sequence[-1], str):
            sequence.append(item)
        else:
            raise StoreQueryError(f"the keyword query has {item!r} where it cannot be")
    if not sequence or isinstance(sequence[-1], str):
        raise StoreQueryError("the keyword query has no words, or ends with an operator")
    negated = [sequence[0]]
    for operator, (sql, params) in zip(sequence[1::2], sequence[2::2], strict=True):
        if operator == "NOT":
            left_sql, left_params = negated[-1]
            negated[-1] = (f"({left_sql} && !!{sql})", left_params + params)
        else:
            negated += [operator, (sql, params)]
    groups: list[list[tuple[str, list[str]]]] = [[negated[0]]]
    for operator, operand in zip(negated[1::2], negated[2::2], strict=True):
        if operator == "AND":
            groups[-1].append(operand)
        else:
            groups.append([operand])
    sql = " || ".join("(" + " && ".join(s for s, _ in group) + ")" for group in groups)
    return f"({sql})", [p for group in groups for _, params in group for p in params], scored


def rank_weights(weights: Sequence[float]) -> tuple[list[float], float]:
    """(ts_rank_cd's weight array {D, C, B, A}, the factor that undoes its scaling) from
    (title, abstract, authors): ts_rank_cd refuses weights above 1, so they are divided by
    the largest, and the term frequencies it returns multiplied back."""
    title, abstract, authors = (max(float(w), 0.0) for w in weights)
    top = max(title, abstract, authors) or 1.0
    scaled = [max(w / top, 1e-6) for w in (authors, abstract, title)]
    return [min(scaled), *scaled], top


class Search(Concern):
    """The keyword index and search filters (contract: SearchStore)."""

    def __init__(self, connector: Connector, location: str) -> None:
        super().__init__(connector, location)
        self._postings = KeywordPostings(connector, location)
        # (when, counts, size) of the last term_doc_counts: the search plan reads them, and
        # the ranking a moment later needs the same again (see _statistics).
        self._just_read: tuple[float, dict[str, int], int] | None = None

    # ------------------------------------------------------------ term statistics
    def index_tokens(self, words: Sequence[str]) -> list[list[str]]:
        """Each word as the index sees it (diacritics removed, Snowball-stemmed, lower case),
        remembered."""
        return remembered_tokens("postgresql", words, self._tokenize)

    def _tokenize(self, words: list[str]) -> list[list[str]]:
        if not words:
            return []
        return [list(r[0]) for r in self.rows(
            "SELECT coalesce((SELECT array_agg(v.lexeme ORDER BY p.pos) FROM"
            f" unnest(to_tsvector('{CONFIG}', w.word)) AS v(lexeme, positions, weights),"
            " unnest(v.positions) AS p(pos)), '{}')"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, i) ORDER BY w.i",
            (list(words),))]

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """How many papers contain each (already tokenized) term, from the lexicon the
        writers keep (migration 0008): one key lookup each, current at every commit."""
        if not tokens:
            return {}
        counts, size = self._read_statistics(list(tokens))
        self._just_read = (time.monotonic(), counts, size)
        return {token: counts[token] for token in tokens}

    def _read_statistics(self, tokens: list[str]) -> tuple[dict[str, int], int]:
        """(the papers that hold each token, the store's size: its highest pk), in one round
        trip."""
        rows = self.rows("SELECT lexeme, papers FROM lexicon WHERE lexeme = ANY(%s)"
                         " UNION ALL SELECT NULL, coalesce(max(pk), 0) FROM papers", (tokens,))
        size = next(int(n) for lexeme, n in rows if lexeme is None)
        found = {lexeme: int(n) for lexeme, n in rows if lexeme is not None}
        return {token: found.get(token, 0) for token in tokens}, size

    def _statistics(self, tokens: list[str]) -> tuple[dict[str, int], int]:
        """The tokens' paper counts and the store's size, as term_doc_counts read them an
        instant ago when it read all of these tokens (a search's plan, then its ranking: one
        round trip fewer, and no older than two statements in separate snapshots would be),
        else read now. Used once: a later ranking reads them again."""
        just, self._just_read = self._just_read, None
        if (just is not None and time.monotonic() - just[0] < JUST_READ_SECONDS
                and all(token in just[1] for token in tokens)):
            return {token: just[1][token] for token in tokens}, just[2]
        return self._read_statistics(tokens)

    def _prefix_counts(self, prefixes: list[str], size: int) -> dict[str, int]:
        """{"prefix:" + prefix: papers holding a word of the prefix}, from the lexicon: the sum
        of its words' paper counts (a paper with two of them counts twice), at most `size`.
        Counting the matches of the tsquery instead read every matching row: 0.8 s for a
        common prefix the first time a process met it, at 30,000 papers (issue 36)."""
        if not prefixes:
            return {}
        rows = self.rows(
            "SELECT u.i, (SELECT coalesce(sum(papers), 0) FROM lexicon"
            " WHERE lexeme >= u.p AND lexeme < u.p || chr(1114111))"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS u(p, i)", (prefixes,))
        return {f"prefix:{prefixes[int(i) - 1]}": min(int(n), max(size, 0)) for i, n in rows}

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """Terms in [prefix, prefix + U+10FFFF), in term order, from the lexicon (byte order,
        which is code point order: FTS5's vocabulary walk and Python's sort agree)."""
        if not prefix or limit < 1:
            return {}
        last = ord(prefix[-1])
        after = prefix[:-1] + chr(last + 1) if last < 0x10FFFF else None
        bound = "" if after is None else " AND lexeme < %s"
        return dict(self.rows(
            f"SELECT lexeme, papers FROM lexicon WHERE lexeme >= %s{bound} ORDER BY lexeme"
            " LIMIT %s", (prefix, *([after] if after else []), int(limit))))

    def _average_length(self, size: int) -> float:
        """The papers' average length (LENGTH), cached like the document counts."""
        generation = size // 2000
        with _COUNTS_LOCK:
            cached = _DOC_COUNTS.setdefault(self.location, {}).get(" length")
        if cached is None or cached[1] != generation:
            length = float(self.value(f"SELECT coalesce(avg{LENGTH}, 1) FROM papers p"))
            cached = (length, generation)  # type: ignore[assignment]
            with _COUNTS_LOCK:
                _DOC_COUNTS.setdefault(self.location, {})[" length"] = cached  # type: ignore[assignment]
        return max(float(cached[0]), 1.0)

    def _size(self) -> int:
        """Papers in the index (duplicates too), cheaply: the highest pk."""
        return int(self.value("SELECT coalesce(max(pk), 0) FROM papers"))

    def _idf(self, terms: list[Term]) -> tuple[list[float], int]:
        """idf of each term (a word or phrase by its rarest token, a prefix by its matches),
        and the store's size (its highest pk), read in the same round trip as the counts."""
        tokens = self.index_tokens([t.text for t in terms if not t.prefix])
        per_term: dict[int, list[str]] = {}
        it = iter(tokens)
        for i, term in enumerate(terms):
            if not term.prefix:
                per_term[i] = next(it)
        counts, size = self._statistics(sorted({tok for toks in per_term.values() for tok in toks}))
        counts |= self._prefix_counts([t.text.lower() for t in terms if t.prefix], size)
        documents = max(size, 1)
        result = []
        for i, term in enumerate(terms):
            keys = per_term.get(i, [f"prefix:{term.text.lower()}"])
            matching = min((counts.get(k, 0) for k in keys), default=0)
            result.append(idf(documents, matching))
        return result, size

    # -------------------------------------------------------------- filters
    def _filter_sql(self, filters: SearchFilters | None, alias: str = "p"
                    ) -> tuple[str, list[Any]]:
        """SQL conditions on papers `alias` (authors aside: see _authors_sql)."""
        clauses = [f"{alias}.duplicate_of IS NULL"]
        params: list[Any] = []
        if filters is None:
            return " AND ".join(clauses), params
        for category in filters.categories:
            if "." in category:
                clauses.append(f"EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper_id = {alias}.id"
                               " AND lower(c.category) = lower(%s))")
                params.append(category)
            else:  # a whole archive: cat:cs
                clauses.append(f"EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper_id = {alias}.id"
                               " AND (lower(c.category) = lower(%s)"
                               " OR lower(c.category) LIKE lower(%s) ESCAPE '\\'))")
                params += [category, category.replace("\\", "\\\\").replace("%", "\\%")
                           .replace("_", "\\_") + ".%"]
        if filters.since:
            clauses.append(f"{alias}.sort_date >= %s")
            params.append(filters.since)
        if filters.until:
            # Inclusive at the precision given: until 2025-03 includes every day of March.
            clauses.append(f"substr({alias}.sort_date, 1, length(%s)) <= %s")
            params += [filters.until, filters.until]
        if filters.topic:
            clauses.append(f"EXISTS (SELECT 1 FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
                           f" WHERE pt.paper_id = {alias}.id AND t.slug = %s)")
            params.append(filters.topic)
        authors = self._authors_query(filters.authors)
        if authors:
            clauses.append(f"{alias}.fts @@ %s::tsquery")
            params.append(authors)
        return " AND ".join(clauses), params

    def _authors_query(self, authors: Sequence[str]) -> str | None:
        """A tsquery requiring every named author: each name's words as a phrase among the
        authors' lexemes (weight class C)."""
        phrases = []
        for name in authors:
            words = [w for w in re.split(r"[^\w]+|_", name) if w]
            lexemes = [lex for toks in self.index_tokens(words) for lex in toks] if words else []
            if lexemes:
                phrases.append("(" + " <-> ".join(quote_lexeme(x) + ":C" for x in lexemes) + ")")
        return " & ".join(phrases) if phrases else None

    # ------------------------------------------------------------ own postings
    def keyword_postings_status(self) -> dict[str, Any] | None:
        return self._postings.status()

    def build_keyword_postings(self, on_progress: Callable[[int, int], None] | None = None
                               ) -> dict[str, Any]:
        return self._postings.build(on_progress)

    def update_keyword_postings(self) -> dict[str, int]:
        return self._postings.update_tail()

    def filtered_pks(self, filters: SearchFilters | None) -> set[int]:
        where, params = self._filter_sql(filters)
        return {r[0] for r in self.rows(f"SELECT p.pk FROM papers p WHERE {where}", params)}

    def recent_pks(self, filters: SearchFilters | None, limit: int) -> list[int]:
        where, params = self._filter_sql(filters)
        return [r[0] for r in self.rows(
            f"SELECT p.pk FROM papers p WHERE {where}"
            " ORDER BY p.sort_date DESC NULLS LAST, p.pk DESC LIMIT %s", (*params, int(limit)))]

    # ------------------------------------------------------------- ranking
    def keyword_search(
        self, query: KeywordQuery, weights: Sequence[float],
        filters: SearchFilters | None = None, limit: int = 100,
    ) -> list[tuple[int, float]]:
        """(pk, score, higher is better) of the best live matches, best first."""
        first = self._newest_from(query.newest_share)
        terms = plain_terms(query)
        if terms is not None and (filters is None or filters.is_empty()):
            # Plain words are ranked on papersift's own postings when they are built: the
            # same bm25, without reading each match's tsvector (store/postgres/postings.py).
            ranked = self._on_postings(query, terms, weights, first, limit)
            if ranked is not None:
                return ranked
        return self._sql_ranking(query, weights, filters, first, limit)

    def _on_postings(self, query: KeywordQuery, terms: list[Term], weights: Sequence[float],
                     first: int, limit: int) -> list[tuple[int, float]] | None:
        """The postings' ranking, or None (no build, or a word the index splits in two). A
        word the index drops (a stop word of its dictionary) matches nothing either way."""
        kept, tokens = [], []
        for term, found in zip(terms, self.index_tokens([t.text for t in terms]), strict=True):
            if len(found) > 1:
                return None
            if found:
                kept.append(term)
                tokens.append(found[0])
        if not kept:
            return None

        def statistics() -> tuple[list[float], float]:
            idfs, size = self._idf(kept)
            return ([w * max(1, int(t.weight)) for t, w in zip(kept, idfs, strict=True)],
                    self._average_length(size))

        return self._postings.rank(
            tokens, statistics, weights, limit, first,
            lambda after: self._sql_ranking(query, weights, None, max(first, after + 1), limit))

    def _sql_ranking(self, query: KeywordQuery, weights: Sequence[float],
                     filters: SearchFilters | None, first: int, limit: int
                     ) -> list[tuple[int, float]]:
        """The tsvector query's bm25 of the matches from pk `first` on that pass the filters."""
        match, match_params, scored = tsquery_sql(query)
        where, filter_params = self._filter_sql(filters)
        array, scale = rank_weights(weights)
        idfs, size = self._idf([t for t, _, _ in scored])
        average = self._average_length(size)
        frequencies, frequency_params, terms, term_params = [], [], [], []
        for i, ((term, sql, param), weight) in enumerate(zip(scored, idfs, strict=True)):
            # ts_rank_cd of one term, without normalisation: the weights of its occurrences.
            frequencies.append(f"%s * ts_rank_cd(%s::float4[], d.fts, {sql}, 0) AS t{i}")
            frequency_params += [scale, array, param]
            terms.append(f"%s * f.t{i} * {K1 + 1} / (f.t{i} + {K1} * (1 - {B} + {B}"
                         " * d.length / %s))")
            term_params += [weight * max(1, int(term.weight)), average]  # a repeated term counts w times
        # The lateral copy reads each matching document's vector out of TOAST once, not once
        # per term, and each term's frequency is computed once (OFFSET 0: not inlined).
        sql = (f"SELECT p.pk, {' + '.join(terms)} AS score FROM papers p,"
               f" LATERAL (SELECT p.fts || ''::tsvector AS fts, {LENGTH} AS length OFFSET 0) AS d,"
               f" LATERAL (SELECT {', '.join(frequencies)} OFFSET 0) AS f"
               f" WHERE p.fts @@ {match} AND p.pk >= %s AND {where}"
               " ORDER BY score DESC, p.pk LIMIT %s")
        try:
            return [(r[0], float(r[1])) for r in self.rows(
                sql, (*term_params, *frequency_params, *match_params,
                      first, *filter_params, int(limit)))]
        except (psycopg.DataError, psycopg.ProgrammingError) as exc:
            raise StoreQueryError(str(exc).strip()) from None

    def _newest_from(self, share: float) -> int:
        """The first pk of the newest `share` of the papers (pks grow as papers are added)."""
        if share >= 1.0:
            return 0
        last = self._size()
        return int(last - max(0.0, share) * last)

    # ------------------------------------------------------------- display
    def search_rows(self, pks: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Display fields of these papers, keyed by pk."""
        return {row[0]: {
            "pk": row[0], "id": row[1], "title": row[2], "abstract": row[3],
            "authors": row[4], "primary_category": row[5], "date": row[6],
        } for row in self.rows(
            "SELECT pk, id, title, abstract, authors_text, primary_category, sort_date"
            " FROM papers WHERE pk = ANY(%s::bigint[])", (list(pks),))}

    def pk_of(self, paper_id: str) -> int | None:
        return self.value("SELECT pk FROM papers WHERE id = %s", (paper_id,))
