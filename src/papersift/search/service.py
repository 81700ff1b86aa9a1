"""The search the web layer and the CLI call: keyword, semantic or hybrid, with filters, snippets and paging."""

from __future__ import annotations

import html
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from papersift.latex import readable
from papersift.search.ann import dot
from papersift.search.cores import current_core, off_core
from papersift.search.embed import Embedder, EmbedderError, default_embedder, embedding_text
from papersift.search.highlight import Highlighter
from papersift.search.hybrid import (
    DEFAULT_FUSION,
    FusionParams,
    best_first,
    feedback_vector,
    fused_scores,
    rrf,
)
from papersift.search.keyword import (
    KeywordPlan,
    ParsedQuery,
    QueryError,
    parse_query,
    plan_keywords,
)
from papersift.search.neighbours import Neighbours, open_neighbours
from papersift.settings import Settings
from papersift.store import Store, StoreQueryError

MODES = ("keyword", "semantic", "hybrid")
MAX_LIMIT = 100
MAX_OFFSET = 1000
SNIPPET_WORDS = 40
# Keyword matches hybrid search takes (their bm25 scores semantic candidates too). Returning
# and sorting them costs per row, about 2 ms a query more for 1,000 than for 100 at a million
# papers. SciFact's hybrid nDCG@10 with 1,000 / 300 / 100: 0.7238 / 0.7231 / 0.7209 among
# 98,752 arXiv papers; 0.7423 alone with 1,000 or 300 (benchmarks/bench_search_scale.py).
KEYWORD_SCORED = 300
# Searches' store sides (_store_side) run at once beside their query vectors (their Python
# takes turns on the GIL anyway); more wait.
STORE_SIDE_THREADS = 4


@dataclass
class SearchHit:
    """One result. `title_html` and `snippet_html` are safe HTML: the paper's text is escaped and
    the only markup is <mark>…</mark> around matched words. `snippet` is the same text, plain."""

    paper_id: str
    title: str
    title_html: str
    snippet: str
    snippet_html: str
    score: float
    authors: str
    primary_category: str | None
    date: str | None
    keyword_score: float | None = None
    semantic_score: float | None = None


@dataclass
class SearchResults:
    """A page of results. `total` counts the results one can page through (the fused candidate
    pool, at most MAX_OFFSET + limit), not every paper that mentions a word."""

    query: str
    mode: str
    hits: list[SearchHit] = field(default_factory=list)
    total: int = 0
    offset: int = 0
    limit: int = 20
    has_more: bool = False
    message: str | None = None
    notes: list[str] = field(default_factory=list)
    took_ms: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Semantic:
    """The query's vector, or why there is none."""

    vector: np.ndarray | None = None     # None: not asked for, or it failed
    unavailable: str | None = None       # why the embedder could not be set up
    failed: str | None = None            # why computing the vector failed


@dataclass
class _Plan:
    parsed: ParsedQuery            # with its filters (the scope's joined in: _parsed)
    keywords: KeywordPlan          # what the keyword side runs (its query None if nothing)
    highlighter: Highlighter | None  # marks the words that match the query's terms (None:
                                     # no snippets)


@dataclass
class _StoreSide:
    """What a search reads from the store while its vector is computed: the keyword plan,
    its ranking, the index semantic search walks and the keyword candidates' vectors."""

    plan: _Plan
    scored: list[tuple[int, float]]  # best first: `pool`, or KEYWORD_SCORED in hybrid search
    index: Neighbours | None         # None: no vectors to walk (or no vector asked for)
    vectors: tuple[list[int], np.ndarray] | None  # the best `pool`'s, for the fusion
    notes: list[str]                 # what the reader is told of the ranking


def search(
    store: Store, settings: Settings, query: str, mode: str = "hybrid", limit: int = 20,
    offset: int = 0, category: str | None = None, since: str | None = None,
    until: str | None = None, topic: str | None = None, fusion: FusionParams = DEFAULT_FUSION,
    embedder: Embedder | None = None, snippets: bool = True,
) -> SearchResults:
    """Answer a query. Bad input gives results with a `message`; a mode or paging value that
    makes no sense raises QueryError (a ValueError) with a message meant for the reader.
    `snippets=False` skips highlighting (evaluation needs only the ranking)."""
    started = time.perf_counter()
    if mode not in MODES:
        raise QueryError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    if not isinstance(limit, int) or limit < 1:
        raise QueryError("limit must be a positive whole number")
    if not isinstance(offset, int) or offset < 0:
        raise QueryError("offset must be zero or a positive whole number")
    limit = min(limit, MAX_LIMIT)
    results = SearchResults(query=query if isinstance(query, str) else "", mode=mode,
                            offset=offset, limit=limit)
    if offset > MAX_OFFSET:
        results.message = f"results stop after the first {MAX_OFFSET}; refine the query"
        return _finish(results, started)
    parsed = _parsed(query, (category, since, until, topic))
    pool = max(fusion.pool, offset + limit)
    try:
        semantic, side = _sides(store, settings, parsed, mode, pool, fusion, embedder, snippets)
        results.notes = [*parsed.notes, *side.notes]  # the parser's and plan's, the ranking's
        ranked, kw_scores, sem_scores = _rank(store, semantic, side, mode, pool, fusion,
                                              results)
    except StoreQueryError as exc:
        # Our queries are built to be valid; if the index still objects, say so, not crash.
        results.notes = list(parsed.notes)
        results.message = f"the keyword query could not be run ({exc}); try simpler words"
        return _finish(results, started)
    results.total = len(ranked)
    page = ranked[offset:offset + limit]
    results.has_more = offset + limit < len(ranked)
    rows = store.search.search_rows([pk for pk, _ in page])
    results.hits = _hits([(rows[pk], score, kw_scores.get(pk), sem_scores.get(pk))
                          for pk, score in page if pk in rows], side.plan.highlighter)
    if not results.hits and results.message is None:
        results.message = "no papers match" + (" these filters" if not parsed.filters.is_empty()
                                               else "")
    return _finish(results, started)


def _finish(results: SearchResults, started: float) -> SearchResults:
    results.took_ms = round((time.perf_counter() - started) * 1000, 2)
    return results


def _parsed(query: str, scope: tuple[str | None, str | None, str | None, str | None],
            ) -> ParsedQuery:
    """The parsed query, its filters joined by `scope`'s (category, since, until, topic)."""
    parsed = parse_query(query if isinstance(query, str) else "")
    filters = parsed.filters
    category, since, until, topic = scope
    if category:
        filters.categories.append(category.strip())
    filters.since = since or filters.since
    filters.until = until or filters.until
    filters.topic = topic or filters.topic
    return parsed


def _sides(store: Store, settings: Settings, parsed: ParsedQuery, mode: str, pool: int,
           fusion: FusionParams, embedder: Embedder | None, snippets: bool,
           ) -> tuple[_Semantic, _StoreSide]:
    """The query's vector, and the store's side of the search (_store_side), side by side:
    the store's on a helper thread while this one computes the vector (ONNX Runtime and
    HTTP let go of the GIL).

    This way round, the thread that starts the search runs the model at once and is busy
    until the vector is there, by when the store's side is usually done: nothing waits on a
    thread woken from an idle core, which takes ~0.2 ms here (p95 over 1 ms between
    processes). With the vector on a second thread (up to 2026-12-06), the search waited
    twice for that; this way hybrid p50 is 9-15% lower (docs/benchmarks.md, 2026-12-06).
    The store is the helper's until its side is done: this thread does not touch it. A
    helper not started when the vector is there is called off and its work done here: after
    an idle spell its core takes up to ~3 ms to wake (p90 here; 0.2 ms when busy), longer
    than a title's vector (docs/benchmarks.md, 2026-12-06 late night). (A store without
    vectors yet gets a vector it does not walk: rare, and cheaper than asking the store
    first on every search.)"""
    text = parsed.text.strip() if mode != "keyword" else ""
    semantic, model = _Semantic(), None
    vector: Callable[[], np.ndarray] | None = None
    if text:
        try:
            embedder = embedder or default_embedder(settings)
            model = embedder.model_id
            vector = _vector_of(embedder, text)
        except EmbedderError as exc:
            semantic.unavailable = f"semantic search is unavailable: {exc}"
    if vector is None:
        return semantic, _store_side(store, settings, parsed, mode, pool, fusion, snippets,
                                     None)
    # Kept off this thread's core: Linux wakes the helper on its waker's core when it can,
    # where it takes turns with the model's run while the other core idles (after an idle
    # spell: a one-thread run 2.77 ms beside it, 2.50 alone, 2.52 with the helper kept off).
    helper = _helpers().submit(off_core, current_core(), _store_side, store, settings, parsed,
                               mode, pool, fusion, snippets, model)
    try:
        semantic.vector = vector()
    except EmbedderError as exc:  # a remote embedder that is down: keyword only, and why
        semantic.failed = f"semantic search is unavailable: {exc}"
    finally:
        if not helper.cancel():  # started: the store is the helper's until it is done
            wait([helper])
    if helper.cancelled():  # not started by the time the vector was there: done here at once
        return semantic, _store_side(store, settings, parsed, mode, pool, fusion, snippets, model)
    return semantic, helper.result()


def _vector_of(embedder: Embedder, text: str) -> Callable[[], np.ndarray]:
    """What computes `text`'s vector; an embedder that can (`prepared`) tokenizes it now, so
    that the call is the model's run alone, which lets go of the GIL for the helper."""
    prepared = getattr(embedder, "prepared", None)
    return prepared(text) if prepared is not None else lambda: embedder.embed([text])[0]


def _store_side(store: Store, settings: Settings, parsed: ParsedQuery, mode: str, pool: int,
                fusion: FusionParams, snippets: bool, model: str | None) -> _StoreSide:
    """The keyword plan, its ranking (keyword and hybrid search), and when `model` is given
    the index of its vectors, with, for the fusion, the vectors of the keyword side's best
    `pool`."""
    keywords = plan_keywords(store.search, parsed, rank=mode != "semantic")
    plan = _Plan(parsed, keywords,
                 Highlighter(keywords.stems) if snippets else None)
    scored: list[tuple[int, float]] = []
    notes: list[str] = []
    if mode in ("keyword", "hybrid") and keywords.query:
        # The best KEYWORD_SCORED instead of `pool` gives the fusion the bm25 of semantic
        # candidates too (below that, ~0).
        scored = _keyword_ranking(store, plan, fusion.bm25_weights,
                                  max(pool, KEYWORD_SCORED) if mode == "hybrid" else pool,
                                  notes)
    index = None if model is None else open_neighbours(store, settings, model, parsed.filters)
    vectors = None
    if (scored and mode == "hybrid" and fusion.method != "rrf" and index is not None
            and index.count):
        vectors = index.vectors([pk for pk, _ in scored[:pool]])
    return _StoreSide(plan, scored, index, vectors, notes)


def _keyword_ranking(store: Store, plan: _Plan, weights: tuple[float, float, float],
                     limit: int, notes: list[str]) -> list[tuple[int, float]]:
    """The keyword side's best `limit`; a query of implicit ANDs that matches nothing is
    ranked again on any of its words."""
    keywords = plan.keywords
    if keywords.query is None:
        return []
    filters = plan.parsed.filters
    scored = store.search.keyword_search(keywords.query, weights, filters, limit)
    if not scored and keywords.relaxed is not None:
        scored = store.search.keyword_search(keywords.relaxed, weights, filters, limit)
        if scored:
            notes.append("no paper has all of these words: papers with any of them")
    return scored


def _rank(store: Store, semantic: _Semantic, side: _StoreSide, mode: str, pool: int,
          fusion: FusionParams, results: SearchResults,
          ) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, float]]:
    plan = side.plan
    filters = plan.parsed.filters
    semantic_text = plan.parsed.text.strip() if mode != "keyword" else ""
    if not plan.parsed.terms and not semantic_text:
        if filters.is_empty():
            results.message = "type some words to search for"
            return [], {}, {}
        pks = store.search.recent_pks(filters, pool)
        results.notes.append("no search words: the newest papers that pass the filters")
        return [(pk, 0.0) for pk in pks], {}, {}

    kw_ranked, kw_all = side.scored[:pool], dict(side.scored)
    if mode == "keyword":
        if not plan.keywords.query:
            results.message = "no words to search for by keyword"
        return kw_ranked, dict(kw_ranked), {}

    index = side.index
    if semantic.unavailable:
        results.notes.append(semantic.unavailable)
    if index is None or index.count == 0:
        if mode == "semantic":
            results.message = "semantic search needs embeddings: run `papersift embed`"
            return [], {}, {}
        results.notes.append("semantic search needs embeddings (`papersift embed`); keyword only")
        return kw_ranked, dict(kw_ranked), {}
    if semantic.failed:
        results.notes.append(semantic.failed)
        if mode == "semantic":
            results.message = "semantic search is unavailable right now: try keyword search"
            return [], {}, {}
        return kw_ranked, dict(kw_ranked), {}
    query_vector = semantic.vector
    sem_ranked = [] if query_vector is None else index.search(query_vector, pool)
    if mode == "semantic":
        return sem_ranked, {}, dict(sem_ranked)

    if fusion.method == "rrf":
        return plain_rrf(kw_ranked, sem_ranked), dict(kw_ranked), dict(sem_ranked)
    return _hybrid(index, query_vector, kw_ranked, kw_all, sem_ranked, fusion, side.vectors)


def _hybrid(index: Neighbours, query_vector: np.ndarray | None,
            kw_ranked: list[tuple[int, float]], kw_all: dict[int, float],
            sem_ranked: list[tuple[int, float]], fusion: FusionParams,
            kw_known: tuple[list[int], np.ndarray] | None = None,
            ) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, float]]:
    """Score fusion of the union of both sides' candidates (the keyword side's best
    `kw_ranked`, every semantic one), each scored on both sides, so one side's silence is a
    measured 0, not a gap: a candidate the semantic side did not return gets its cosine from
    its vector, one the keyword side ranked past `kw_ranked` its bm25 (`kw_all`). Then once
    more with the query vector moved toward the fused best: the moved vector rescores the
    candidates already found (their vectors: the keyword side's `kw_known`, read before, and
    the semantic side's others), not a second walk of the graph. Arrays in candidate order
    throughout: dicts per round cost ~0.4 ms a query, the arrays' sums ~0.05."""
    kw_pks = [pk for pk, _ in kw_ranked]
    sem_first = dict(sem_ranked)
    have, vectors = kw_known or (index.vectors(kw_pks) if kw_pks else ([], None))
    ranked_kw = set(kw_pks)
    others = [pk for pk in sem_first if pk not in ranked_kw]
    more, more_vectors = index.vectors(others) if others else ([], None)
    found = [m for m in (vectors, more_vectors) if m is not None and len(m)]
    known = np.concatenate(found) if found else None
    # The candidates: the keyword side's, then the semantic side's others. Their order is
    # the vectors' when every one has a vector (the rule): no lookup per candidate then.
    pks = kw_pks + others
    ids = np.asarray(pks, dtype=np.int64)
    if have == kw_pks and more == others:
        rows = np.arange(len(pks), dtype=np.int64)
    else:
        row_of = {pk: i for i, pk in enumerate(have + more)}
        rows = np.asarray([row_of.get(pk, -1) for pk in pks], dtype=np.int64)
    keyword = np.asarray([score for _, score in kw_ranked]
                         + [kw_all.get(pk, 0.0) for pk in others], dtype=np.float64)
    cosines = np.asarray([sem_first.get(pk, np.nan) for pk in kw_pks]
                         + [sem_first[pk] for pk in others], dtype=np.float64)
    with_vector = rows >= 0
    if query_vector is not None and known is not None:
        missing = np.isnan(cosines) & with_vector
        if missing.any():
            cosines[missing] = dot(known, query_vector)[rows[missing]]
    # The order does not depend on the candidates': equal scores go by id (best_first).
    fused = fused_scores(keyword, cosines, fusion.keyword_weight)
    order = best_first(ids, fused)
    top = [i for i in order[:fusion.feedback_docs].tolist() if with_vector[i]]
    if query_vector is not None and known is not None and top:
        moved = feedback_vector(query_vector, known[rows[top]], fused[top].tolist(),
                                fusion.feedback_weight, fusion.feedback_temperature)
        # Every candidate with a vector is scored again by it; the others keep the walk's.
        cosines = np.where(with_vector, dot(known, moved)[rows], cosines)
        fused = fused_scores(keyword, cosines, fusion.keyword_weight)
        order = best_first(ids, fused)
    ranked = list(zip(ids[order].tolist(), fused[order].tolist(), strict=True))
    semantic = {pk: c for pk, c in zip(pks, cosines.tolist(), strict=True) if c == c}  # not NaN
    return ranked, kw_all, semantic  # kw_all: every candidate's bm25 that has one


def plain_rrf(kw_ranked: list[tuple[int, float]], sem_ranked: list[tuple[int, float]],
              k: float = 60.0) -> list[tuple[int, float]]:
    return rrf([[pk for pk, _ in kw_ranked], [pk for pk, _ in sem_ranked]], k=k)


# Per process: a forked worker cannot use its parent's threads.
_helper_pool: tuple[int, ThreadPoolExecutor] | None = None
_helper_pool_lock = threading.Lock()


def _helpers() -> ThreadPoolExecutor:
    global _helper_pool
    with _helper_pool_lock:
        if _helper_pool is None or _helper_pool[0] != os.getpid():
            _helper_pool = (os.getpid(), ThreadPoolExecutor(
                max_workers=STORE_SIDE_THREADS, thread_name_prefix="search-store-side"))
        return _helper_pool[1]


def _hits(found: list[tuple[dict[str, Any], float, float | None, float | None]],
          highlighter: Highlighter | None) -> list[SearchHit]:
    """A page's hits from (row, score, keyword score, semantic score); the matches in all
    their titles and abstracts found together (Highlighter.spans_each). Without a
    highlighter: no snippets, titles escaped."""
    # What a reader sees has its LaTeX rendered, as on every page: "$\\textit{x}$" is "x".
    titles = [readable(row["title"]) for row, *_ in found]
    abstracts = [readable(row["abstract"]) for row, *_ in found] if highlighter else []
    spans = highlighter.spans_each(titles + abstracts) if highlighter else []
    hits = []
    for i, (row, score, kw, sem) in enumerate(found):
        snippet = snippet_html = ""
        title_html = html.escape(titles[i])
        if highlighter is not None:
            snippet, snippet_html = highlighter.snippet(abstracts[i], SNIPPET_WORDS, spaced=True,
                                                        spans=spans[len(found) + i])
            title_html = highlighter.mark(titles[i], spans[i])
        hits.append(SearchHit(
            paper_id=row["id"], title=titles[i], title_html=title_html, snippet=snippet,
            snippet_html=snippet_html, score=round(float(score), 6), authors=row["authors"],
            primary_category=row["primary_category"], date=row["date"],
            keyword_score=None if kw is None else round(float(kw), 4),
            semantic_score=None if sem is None else round(float(sem), 4),
        ))
    return hits


def similar_papers(store: Store, settings: Settings, paper_id: str, limit: int = 10,
                   embedder: Embedder | None = None) -> list[SearchHit]:
    """Papers nearest in meaning to this one (not itself, not duplicates); [] if it is unknown."""
    pk = store.search.pk_of(paper_id)
    if pk is None or limit < 1:
        return []
    embedder = embedder or default_embedder(settings)
    index = open_neighbours(store, settings, embedder.model_id)
    vector = store.embeddings.get_embedding(paper_id, embedder.model_id)
    if vector is None:
        paper = store.papers.get_paper(paper_id)
        if paper is None:
            return []
        vector = embedder.embed([embedding_text(paper["title"], paper["abstract"])])[0]
    if index is None:
        return []
    near = [(p, s) for p, s in index.search(vector, min(limit, MAX_LIMIT) + 1) if p != pk][:limit]
    rows = store.search.search_rows([p for p, _ in near])
    return _hits([(rows[p], s, None, s) for p, s in near if p in rows], Highlighter([]))


