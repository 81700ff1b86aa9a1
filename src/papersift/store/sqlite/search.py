"""Keyword search on FTS5: queries written in its syntax, bm25 with field weights, filters, term statistics."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from papersift.store.contracts import KeywordQuery, SearchFilters, StoreQueryError, Term
from papersift.store.postings import plain_terms
from papersift.store.sqlite.db import Concern, chunks, marks
from papersift.store.sqlite.postings import TOKENIZER, KeywordPostings
from papersift.store.tokens import remembered_tokens

# Document counts per database and term, with the index size they were read at (see
# term_doc_counts): shared by every connection of the process.
_DOC_COUNTS: dict[str, dict[str, tuple[int, int]]] = {}
_DOC_COUNTS_MAX = 200_000
_TOKENIZE_LOCK = threading.Lock()


def fts_term(term: Term) -> str:
    """A Term as an FTS5 string (quoted, so no word is read as an operator or column)."""
    quoted = '"' + term.text.replace('"', '""') + '"'
    return quoted + ("*" if term.prefix else "")


def fts_expression(query: KeywordQuery) -> str:
    """The FTS5 MATCH expression: explicit operators as written, the default one elsewhere.

    A term of weight w is written w times OR-ed together: bm25() sums over the query's phrases,
    so it counts w times, and the OR matches what the term alone matches."""
    parts: list[str] = []
    previous_was_term = False
    for item in query.items:
        if isinstance(item, str):
            parts.append(item)
            previous_was_term = False
            continue
        if previous_was_term:
            parts.append(query.default_operator)
        weight = max(1, int(item.weight))
        written = " OR ".join([fts_term(item)] * weight)
        parts.append(written if weight == 1 else f"({written})")
        previous_was_term = True
    return " ".join(parts)


def author_expression(authors: Sequence[str]) -> str | None:
    """An FTS5 column filter that requires every named author (words as a phrase)."""
    clauses = []
    for name in authors:
        words = [w for w in re.split(r"[^\w]+|_", name) if w]
        if words:
            clauses.append('authors_text : "' + " ".join(words).replace('"', '""') + '"')
    return " AND ".join(clauses) if clauses else None


class Search(Concern):
    """The keyword index and search filters (contract: SearchStore)."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        super().__init__(conn, path)
        self._postings = KeywordPostings(conn, path)

    # ------------------------------------------------------------ term statistics
    def index_tokens(self, words: Sequence[str]) -> list[list[str]]:
        """Each word as the FTS index sees it (porter-stemmed, case-folded tokens), remembered."""
        return remembered_tokens("sqlite", words, self._tokenize)

    def _tokenize(self, words: list[str]) -> list[list[str]]:
        """Through a temporary FTS5 table with the index's own tokenizer, so no stemmer has to
        agree with SQLite's; works on read-only connections (the temp schema is private)."""
        if not words:
            return []
        with _TOKENIZE_LOCK:
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_tokens USING fts5("
                f"word, tokenize='{TOKENIZER}')")
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_tokens_vocab"
                " USING fts5vocab(temp, query_tokens, instance)")
            self.conn.execute("DELETE FROM temp.query_tokens")
            self.conn.executemany("INSERT INTO temp.query_tokens(rowid, word) VALUES (?, ?)",
                                  list(enumerate(words)))
            found: list[list[str]] = [[] for _ in words]
            for doc, term in self.conn.execute(
                    "SELECT doc, term FROM temp.query_tokens_vocab ORDER BY doc, offset"):
                found[doc].append(term)
            self.conn.execute("DELETE FROM temp.query_tokens")
        return found

    def term_doc_counts(self, tokens: Sequence[str]) -> dict[str, int]:
        """How many papers contain each (already tokenized) term.

        Counting reads the term's whole posting list, so counts are cached per database and
        refreshed when the index has grown by a few percent: df drifts slowly."""
        with _TOKENIZE_LOCK:
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_rows"
                " USING fts5vocab(main, papers_fts, row)")
        generation = self._fts_size() // 2000
        cache = _DOC_COUNTS.setdefault(str(self.path), {})
        counts: dict[str, int] = {}
        for term in tokens:
            cached = cache.get(term)
            if cached is None or cached[1] != generation:
                row = self.conn.execute(
                    "SELECT doc FROM temp.papers_fts_rows WHERE term = ?", (term,)).fetchone()
                if len(cache) > _DOC_COUNTS_MAX:
                    cache.clear()
                cached = cache[term] = (int(row[0]) if row else 0, generation)
            counts[term] = cached[0]
        return counts

    def prefix_terms(self, prefix: str, limit: int) -> dict[str, int]:
        """Terms in [prefix, prefix + U+10FFFF): fts5vocab walks the index in term order from
        the first, and LIMIT stops it, so the cost is that of `limit` terms at most."""
        if not prefix or limit < 1:
            return {}
        with _TOKENIZE_LOCK:
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.papers_fts_rows"
                " USING fts5vocab(main, papers_fts, row)")
        rows = self.conn.execute(
            "SELECT term, doc FROM temp.papers_fts_rows WHERE term >= ? AND term < ?"
            " ORDER BY term LIMIT ?", (prefix, prefix + "\U0010ffff", int(limit))).fetchall()
        return {str(term): int(doc) for term, doc in rows}

    def _fts_size(self) -> int:
        """Papers in the FTS index (including duplicates), cheaply."""
        row = self.conn.execute("SELECT max(pk) FROM papers").fetchone()
        return int(row[0] or 0)

    # -------------------------------------------------------------- filters
    def _filter_sql(self, filters: SearchFilters | None, alias: str = "p"
                    ) -> tuple[str, list[Any]]:
        """SQL conditions on papers `alias` (authors aside: they are matched in the index)."""
        clauses = [f"{alias}.duplicate_of IS NULL"]
        params: list[Any] = []
        if filters is None:
            return " AND ".join(clauses), params
        for category in filters.categories:
            if "." in category:
                clauses.append(f"EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper_id = {alias}.id"
                               " AND c.category = ? COLLATE NOCASE)")
                params.append(category)
            else:  # a whole archive: cat:cs
                clauses.append(f"EXISTS (SELECT 1 FROM paper_categories c WHERE c.paper_id = {alias}.id"
                               " AND (c.category = ? COLLATE NOCASE OR c.category LIKE ? ESCAPE '\\'))")
                params += [category, category.replace("%", "\\%").replace("_", "\\_") + ".%"]
        if filters.since:
            clauses.append(f"{alias}.sort_date >= ?")
            params.append(filters.since)
        if filters.until:
            # Inclusive at the precision given: until 2025-03 includes every day of March.
            clauses.append(f"substr({alias}.sort_date, 1, length(?)) <= ?")
            params += [filters.until, filters.until]
        if filters.topic:
            clauses.append(f"EXISTS (SELECT 1 FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
                           f" WHERE pt.paper_id = {alias}.id AND t.slug = ?)")
            params.append(filters.topic)
        return " AND ".join(clauses), params

    def _filtered(self, filters: SearchFilters | None) -> tuple[str, list[Any]]:
        """SELECT p.pk ... for the papers passing every filter, authors included."""
        where, params = self._filter_sql(filters)
        sql = f"SELECT p.pk FROM papers p WHERE {where}"
        authors = author_expression(filters.authors) if filters else None
        if authors:
            sql += " AND p.pk IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)"
            params.append(authors)
        return sql, params

    def filtered_pks(self, filters: SearchFilters | None) -> set[int]:
        sql, params = self._filtered(filters)
        return {r[0] for r in self.conn.execute(sql, params)}

    def recent_pks(self, filters: SearchFilters | None, limit: int) -> list[int]:
        sql, params = self._filtered(filters)
        sql += " ORDER BY p.sort_date DESC, p.pk DESC LIMIT ?"
        return [r[0] for r in self.conn.execute(sql, (*params, int(limit)))]

    # ------------------------------------------------------------- ranking
    def keyword_search(
        self, query: KeywordQuery, weights: Sequence[float],
        filters: SearchFilters | None = None, limit: int = 100,
    ) -> list[tuple[int, float]]:
        """(pk, bm25 score, higher is better) of the best matches, best first."""
        # FTS5 seeks its posting lists to the first rowid asked for: a window of the newest
        # rows reads only their share of each list.
        first = self._newest_from(query.newest_share)
        terms = plain_terms(query)
        if terms is not None and (filters is None or filters.is_empty()):
            # Plain words are ranked on papersift's own postings when they are built: the
            # same scores, without FTS5 decoding each match (store/sqlite/postings.py).
            ranked = self._postings.rank(
                terms, weights, limit, first, self.index_tokens,
                lambda after: self._fresh(query, weights, first, after, limit))
            if ranked is not None:
                return ranked
        match = fts_expression(query)
        authors = author_expression(filters.authors) if filters else None
        if authors:
            match = f"({match}) AND {authors}" if match else authors
        if filters is None or filters == SearchFilters(authors=filters.authors):
            return self._ranked(match, weights, first, limit)
        where, filter_params = self._filter_sql(filters)
        sql = ("SELECT p.pk, -bm25(papers_fts, ?, ?, ?) AS score FROM papers_fts"
               " JOIN papers p ON p.pk = papers_fts.rowid"
               f" WHERE papers_fts MATCH ? AND papers_fts.rowid >= ? AND {where}"
               " ORDER BY score DESC LIMIT ?")
        return self._run(sql, [*weights, match, first, *filter_params, int(limit)])

    def _ranked(self, match: str, weights: Sequence[float], first: int, limit: int
                ) -> list[tuple[int, float]]:
        # No join (authors are in the match): joining papers reads every matching row
        # (abstract and all) from disk.
        sql = ("SELECT rowid, -bm25(papers_fts, ?, ?, ?) AS score FROM papers_fts"
               " WHERE papers_fts MATCH ? AND rowid >= ? AND rowid NOT IN"
               " (SELECT pk FROM papers WHERE duplicate_of IS NOT NULL)"
               " ORDER BY score DESC LIMIT ?")
        return self._run(sql, [*weights, match, first, int(limit)])

    def _run(self, sql: str, params: list[Any]) -> list[tuple[int, float]]:
        """(pk, score) rows of a ranking statement whose first three parameters are the
        field weights."""
        params[:3] = [float(w) for w in params[:3]]
        try:
            return [(r[0], r[1]) for r in self.conn.execute(sql, params).fetchall()]
        except sqlite3.OperationalError as exc:
            raise StoreQueryError(str(exc)) from None

    def _fresh(self, query: KeywordQuery, weights: Sequence[float], first: int, after: int,
               limit: int) -> tuple[list[tuple[int, float]], Callable[[str], int]]:
        """FTS5's ranking of the papers past `after` (newer than the postings) from `first`
        on, and a count of a word's papers past `after` (a part of its idf)."""
        def count(word: str) -> int:
            return int(self.conn.execute(
                "SELECT count(*) FROM papers_fts WHERE papers_fts MATCH ? AND rowid > ?",
                (fts_term(Term(word)), after)).fetchone()[0])

        return self._ranked(fts_expression(query), weights, max(first, after + 1), limit), count

    # ------------------------------------------------------------ own postings
    def keyword_postings_status(self) -> dict[str, Any] | None:
        return self._postings.status()

    def build_keyword_postings(self, on_progress: Callable[[int, int], None] | None = None
                               ) -> dict[str, Any]:
        return self._postings.build(on_progress)

    def update_keyword_postings(self) -> dict[str, int]:
        return self._postings.update_tail()

    def _newest_from(self, share: float) -> int:
        """The first rowid of the newest `share` of the papers (pks grow as papers are added)."""
        if share >= 1.0:
            return 0
        last = self._fts_size()
        return int(last - max(0.0, share) * last)

    # ------------------------------------------------------------- display
    def search_rows(self, pks: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Display fields of these papers, keyed by pk."""
        found: dict[int, dict[str, Any]] = {}
        for chunk in chunks(list(pks)):
            for row in self.conn.execute(
                "SELECT pk, id, title, abstract, authors_text, primary_category, sort_date"
                f" FROM papers WHERE pk IN ({marks(chunk)})", chunk,
            ):
                found[row[0]] = {
                    "pk": row[0], "id": row[1], "title": row[2], "abstract": row[3],
                    "authors": row[4], "primary_category": row[5], "date": row[6],
                }
        return found

    def pk_of(self, paper_id: str) -> int | None:
        row = self.conn.execute("SELECT pk FROM papers WHERE id = ?", (paper_id,)).fetchone()
        return None if row is None else int(row[0])
