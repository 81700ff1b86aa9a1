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
from collections.abc import Sequence
from typing import Any

import psycopg

from papersift.store import search
from papersift.store.postgres.db import PostgresDatabase
from papersift.store.postgres.postings import LENGTH, KeywordPostings
from papersift.store.postings import K1, B, cached, idf
from papersift.store.values import KeywordQuery, SearchFilters, StoreQueryError, Term

CONFIG = "papersift_english"  # the text search configuration of migration 0001
_OPERATORS = ("AND", "OR", "NOT")
# Per database: the index size // 2000 the papers' average length was read at, and the length.
_LENGTHS: dict[str, tuple[int, float]] = {}


def quote_lexeme(lexeme: str) -> str:
    """A lexeme as tsquery input text (taken as it is: no stemming)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def term_sql(term: Term) -> tuple[str, str]:
    """(SQL of a tsquery, its parameter) for one Term: stemmed as the index is."""
    if term.prefix:
        return f"to_tsquery('{CONFIG}', ?)", quote_lexeme(term.text) + ":*"
    function = "phraseto_tsquery" if term.phrase else "plainto_tsquery"
    return f"{function}('{CONFIG}', ?)", term.text


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


class Search(search.Search):
    """Keyword search on a weighted tsvector (contract: store.search.Search)."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, KeywordPostings(db))

    # ------------------------------------------------------------ term statistics
    def _tokenize(self, words: list[str]) -> list[list[str]]:
        """Diacritics removed, Snowball-stemmed, lower case."""
        return [list(r[0]) for r in self.db.rows(
            "SELECT coalesce((SELECT array_agg(v.lexeme ORDER BY p.pos) FROM"
            f" unnest(to_tsvector('{CONFIG}', w.word)) AS v(lexeme, positions, weights),"
            " unnest(v.positions) AS p(pos)), '{}')"
            " FROM unnest(?::text[]) WITH ORDINALITY AS w(word, i) ORDER BY w.i",
            (list(words),))]

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """From the writers' lexicon (migration 0008): a key lookup each, current at each
        commit. What a ranking just after needs comes along (KeywordPostings.read_ahead)."""
        return self._postings.read_ahead(list(tokens))[0] if tokens else {}

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """Terms in [prefix, prefix + U+10FFFF), in term order, from the lexicon (byte order,
        which is code point order: FTS5's vocabulary walk and Python's sort agree)."""
        if not prefix or limit < 1:
            return {}
        return dict(self.db.rows(
            "SELECT lexeme, papers FROM lexicon WHERE lexeme >= ? AND lexeme < ? ORDER BY lexeme"
            " LIMIT ?", (prefix, prefix + "\U0010ffff", int(limit))))

    def _average_length(self, size: int) -> float:
        """The papers' average length (LENGTH) as the postings build keeps it, else every paper's
        (0.74 s at a million papers: issue 36), read again when the store grew by 2,000."""
        return max(cached(_LENGTHS, self.db.location, size // 2000, lambda: float(
            self._postings.average_length() or self.db.value(
                f"SELECT coalesce(avg{LENGTH}, 1) FROM papers p"))), 1.0)

    def _idf(self, terms: list[Term]) -> tuple[list[float], int]:
        """idf of each term (a word or phrase by its rarest token, a prefix by its matches),
        and the store's size (its highest pk), read in the same round trip as the counts."""
        tokens = self.index_tokens([t.text for t in terms])
        # A prefix is its stem's, as to_tsquery matches it ('studies:*' is 'studi:*').
        stems = {i: found[0] if len(found) == 1 else t.text.lower()
                 for i, (t, found) in enumerate(zip(terms, tokens, strict=True)) if t.prefix}
        keys = [[f"prefix:{stems[i]}"] if i in stems else found for i, found in enumerate(tokens)]
        words = sorted({k for i, found in enumerate(tokens) if i not in stems for k in found})
        # The counts as the plan or the ranking read them an instant ago (one round trip fewer,
        # and of the ranking's snapshot), else read now.
        counts, size = self._postings.just_counted(words) or self._postings.read_ahead(words)
        if stems:  # a prefix's papers: its words' counts summed, from the lexicon (a paper with
            # two counts twice); counting the tsquery's matches read every matching row: 0.8 s
            # for a common prefix, the first time a process met it at 30,000 papers (issue 36)
            counts |= {f"prefix:{p}": min(int(n), max(size, 0)) for p, n in self.db.rows(
                "SELECT u.p, (SELECT coalesce(sum(papers), 0) FROM lexicon WHERE lexeme >= u.p"
                " AND lexeme < u.p || chr(1114111)) FROM unnest(?::text[]) AS u(p)",
                (list(stems.values()),))}
        return [idf(max(size, 1), min((counts.get(k, 0) for k in found), default=0))
                for found in keys], size

    def _authors_sql(self, authors: Sequence[str]) -> tuple[str, list[Any]] | None:
        """A tsquery: each name's words as a phrase among the authors' lexemes (weight class C)."""
        phrases = []
        for name in authors:
            words = [w for w in re.split(r"[^\w]+|_", name) if w]
            lexemes = [lex for toks in self.index_tokens(words) for lex in toks] if words else []
            if lexemes:
                phrases.append("(" + " <-> ".join(quote_lexeme(x) + ":C" for x in lexemes) + ")")
        return None if not phrases else ("p.fts @@ ?::tsquery", [" & ".join(phrases)])

    # ------------------------------------------------------------- ranking
    def _on_postings(self, query: KeywordQuery, terms: list[Term], tokens: list[list[str]],
                     weights: Sequence[float], first: int, limit: int
                     ) -> list[tuple[int, float]] | None:
        def statistics(joined: object, after: int | None) -> tuple[list[float], float]:
            # The counts the ranking's read brought (a prefix's words summed, as in _idf).
            words = sorted({w for found in tokens for w in found})
            counts, size = self._postings.just_counted(words) or self._postings.read_ahead(words)
            return ([idf(max(size, 1), min(sum(counts.get(w, 0) for w in found), size))
                     * max(1, int(t.weight)) for t, found in zip(terms, tokens, strict=True)],
                    self._average_length(size))

        return self._postings.rank(tokens, weights, limit, first, lambda after: self._sql_ranking(
            query, weights, None, max(first, after + 1), limit), statistics)

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
            frequencies.append(f"? * ts_rank_cd(?::float4[], d.fts, {sql}, 0) AS t{i}")
            frequency_params += [scale, array, param]
            terms.append(f"? * f.t{i} * {K1 + 1} / (f.t{i} + {K1} * (1 - {B} + {B}"
                         " * d.length / ?))")
            term_params += [weight * max(1, int(term.weight)), average]  # a repeated term counts w times
        # The lateral copy reads each matching document's vector out of TOAST once, not once
        # per term, and each term's frequency is computed once (OFFSET 0: not inlined).
        sql = (f"SELECT p.pk, {' + '.join(terms)} AS score FROM papers p,"
               f" LATERAL (SELECT p.fts || ''::tsvector AS fts, {LENGTH} AS length OFFSET 0) AS d,"
               f" LATERAL (SELECT {', '.join(frequencies)} OFFSET 0) AS f"
               f" WHERE p.fts @@ {match} AND p.pk >= ? AND {where}"
               " ORDER BY score DESC, p.pk LIMIT ?")
        try:
            return [(r[0], float(r[1])) for r in self.db.rows(
                sql, (*term_params, *frequency_params, *match_params,
                      first, *filter_params, int(limit)))]
        except (psycopg.DataError, psycopg.ProgrammingError) as exc:
            raise StoreQueryError(str(exc).strip()) from None
