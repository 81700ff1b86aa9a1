"""Keyword search on FTS5: queries written in its syntax, bm25 with field weights, filters, term statistics."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence
from typing import Any

from papersift.store import search
from papersift.store.postings import Postings, idf
from papersift.store.sql import grouped
from papersift.store.sqlite.db import SQLiteDatabase
from papersift.store.sqlite.postings import KeywordPostings, averages, fts5_tokens
from papersift.store.values import KeywordQuery, SearchFilters, StoreQueryError, Term

# Document counts per database and term, with the index size they were read at (see
# term_doc_counts): shared by every connection of the process.
_DOC_COUNTS: dict[str, dict[str, tuple[int, int]]] = {}
_DOC_COUNTS_MAX = 200_000
_PREFIXES_MAX = 1000  # prefixes a connection keeps the terms of
_TOKENIZE_LOCK = threading.Lock()


def fts_term(term: Term) -> str:
    """A Term as an FTS5 string (quoted, so no word is read as an operator or column)."""
    return '"' + term.text.replace('"', '""') + '"' + ("*" if term.prefix else "")


def fts_expression(query: KeywordQuery) -> str:
    """The FTS5 MATCH expression: explicit operators as written, the default one elsewhere. A
    term of weight w is written w times OR-ed together: bm25() sums over the query's phrases,
    so it counts w times, and the OR matches what the term alone matches."""
    parts: list[str] = []
    for i, item in enumerate(query.items):
        if isinstance(item, str):
            parts.append(item)
            continue
        if i and isinstance(query.items[i - 1], Term):
            parts.append(query.default_operator)
        weight = max(1, int(item.weight))
        written = " OR ".join([fts_term(item)] * weight)
        parts.append(written if weight == 1 else f"({written})")
    return " ".join(parts)


def author_expression(authors: Sequence[str]) -> str | None:
    """An FTS5 column filter that requires every named author (words as a phrase)."""
    clauses = []
    for name in authors:
        words = [w for w in re.split(r"[^\w]+|_", name) if w]
        if words:
            clauses.append('authors_text : "' + " ".join(words).replace('"', '""') + '"')
    return " AND ".join(clauses) if clauses else None


class Search(search.Search):
    """Keyword search on FTS5 (contract: store.search.Search); the index's terms by fts5vocab."""

    def __init__(self, db: SQLiteDatabase) -> None:
        super().__init__(db, KeywordPostings(db))
        self.conn, self.path = db.conn, db.path
        self.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_rows"
                          " USING fts5vocab(main, papers_fts, row)")
        self._prefixes: dict[tuple[str, int], tuple[tuple[int, int], dict[str, int]]] = {}

    # ------------------------------------------------------------ term statistics
    def _tokenize(self, words: list[str]) -> list[list[str]]:
        with _TOKENIZE_LOCK:
            tokens = fts5_tokens(self.db, "query_tokens", ("word",), list(enumerate(words)))
        found = grouped((doc, term) for doc, _, term in tokens)
        return [found.get(doc, []) for doc in range(len(words))]

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """Counting reads the term's whole posting list, so counts are cached per database and
        refreshed when the index has grown by a few percent: df drifts slowly."""
        generation = self._postings.newest() // 2000
        cache = _DOC_COUNTS.setdefault(str(self.path), {})
        counts: dict[str, int] = {}
        for term in tokens:
            cached = cache.get(term)
            if cached is None or cached[1] != generation:
                docs = self.db.value("SELECT doc FROM temp.papers_fts_rows WHERE term = ?", (term,))
                if len(cache) > _DOC_COUNTS_MAX:
                    cache.clear()
                cached = cache[term] = (int(docs or 0), generation)
            counts[term] = cached[0]
        return counts

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """Terms in [prefix, prefix + U+10FFFF), in term order. fts5vocab counts each by reading
        its whole list (`learn*`: 10 ms at a million papers); a search asks twice: kept till a commit."""
        if not prefix or limit < 1:
            return {}
        key, seen = (prefix, limit), self.db.commits_seen()
        if self._prefixes.get(key, (None,))[0] != seen:
            if len(self._prefixes) > _PREFIXES_MAX:
                self._prefixes.clear()
            self._prefixes[key] = (seen, dict(self.db.rows(
                "SELECT term, doc FROM temp.papers_fts_rows WHERE term >= ? AND term < ?"
                " ORDER BY term LIMIT ?", (prefix, prefix + "\U0010ffff", int(limit)))))
        return dict(self._prefixes[key][1])

    def _authors_sql(self, authors: Sequence[str]) -> tuple[str, list[Any]] | None:
        match = author_expression(authors)
        return None if match is None else (
            "p.pk IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)", [match])

    # ------------------------------------------------------------- ranking
    def _on_postings(self, query: KeywordQuery, terms: list[Term], tokens: list[list[str]],
                     weights: Sequence[float], first: int, limit: int
                     ) -> list[tuple[int, float]] | None:
        def statistics(joined: list[Postings], after: int | None) -> tuple[list[float], float]:
            # FTS5's N and mean length; a term's papers are its lists' (and FTS5's past `after`).
            rows, tokens_total = averages(self.conn)
            factors = []
            for postings, term in zip(joined, terms, strict=True):
                docs = len(postings)
                if after is not None:
                    docs += int(self.db.value("SELECT count(*) FROM papers_fts WHERE papers_fts"
                                              " MATCH ? AND rowid > ?", (fts_term(term), after)))
                factors.append(idf(rows, docs) * max(1, term.weight))
            return factors, tokens_total / rows if rows else 0.0

        return self._postings.rank(tokens, weights, limit, first, lambda after: self._ranked(
            fts_expression(query), weights, max(first, after + 1), limit), statistics)

    def _sql_ranking(self, query: KeywordQuery, weights: Sequence[float],
                     filters: SearchFilters | None, first: int, limit: int
                     ) -> list[tuple[int, float]]:
        """bm25() with the field weights; FTS5 seeks its posting lists to the first rowid
        asked for, so a window of the newest rows reads only their share of each list."""
        match = fts_expression(query)
        authors = author_expression(filters.authors) if filters else None
        if authors:
            match = f"({match}) AND {authors}" if match else authors
        if filters is None or filters == SearchFilters(authors=filters.authors):
            return self._ranked(match, weights, first, limit)
        where, filter_params = self._filter_sql(filters, authors=False)
        sql = ("SELECT p.pk, -bm25(papers_fts, ?, ?, ?) AS score FROM papers_fts"
               " JOIN papers p ON p.pk = papers_fts.rowid"
               f" WHERE papers_fts MATCH ? AND papers_fts.rowid >= ? AND {where}"
               " ORDER BY score DESC LIMIT ?")
        return self._run(sql, [*weights, match, first, *filter_params, int(limit)])

    def _ranked(self, match: str, weights: Sequence[float], first: int, limit: int
                ) -> list[tuple[int, float]]:
        # No join (authors are in the match): a join reads every matching row, abstract and all.
        return self._run("SELECT rowid, -bm25(papers_fts, ?, ?, ?) AS score FROM papers_fts"
                         " WHERE papers_fts MATCH ? AND rowid >= ? AND rowid NOT IN"
                         " (SELECT pk FROM papers WHERE duplicate_of IS NOT NULL)"
                         " ORDER BY score DESC LIMIT ?", [*weights, match, first, int(limit)])

    def _run(self, sql: str, params: list[Any]) -> list[tuple[int, float]]:
        """(pk, score) rows of a ranking statement, its first three parameters the field weights."""
        params[:3] = [float(w) for w in params[:3]]
        try:
            return [(r[0], r[1]) for r in self.conn.execute(sql, params).fetchall()]
        except sqlite3.OperationalError as exc:
            raise StoreQueryError(str(exc)) from None
