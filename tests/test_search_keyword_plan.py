"""The keyword side's plan: meaningful words weighted by their repeats, and the cap on a query's work (issues 17, 19)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from papersift.search import keyword as kw
from papersift.search.hybrid import feedback_vector
from papersift.search.keyword import parse_query, plan_keywords
from papersift.settings import Settings
from papersift.store import KeywordQuery, Store, Term, add_records
from papersift.store.sqlite.search import fts_expression
from tests.test_search_embed import paper
from tests.test_search_query import corpus, ids, keyword  # noqa: F401

# The plan and its ranking on both stores; the cap's work is counted on FTS5's lists (SQLite).
BOTH_BACKENDS = pytest.mark.backends("sqlite", "postgresql")


def plan(store: Store, query: str) -> kw.KeywordPlan:
    return plan_keywords(store.search, parse_query(query))


@BOTH_BACKENDS
def test_a_repeated_word_counts_as_often_as_it_is_repeated(corpus: Store) -> None:  # noqa: F811
    keywords = plan(corpus, "Rewards: what do sparse rewards and scalar rewards do to the reward?")
    weights = {t.text.lower(): t.weight for t in keywords.query.terms}
    # One term per stem ("rewards", "reward"), stop words out, at most MAX_WEIGHT.
    assert weights == {"rewards": kw.MAX_WEIGHT, "sparse": 1, "scalar": 1}
    assert fts_expression(KeywordQuery([Term("a", weight=2), Term("b")])) == '("a" OR "a") OR "b"'
    assert fts_expression(KeywordQuery([Term("a"), "NOT", Term("b", weight=2)], "AND")) == (
        '"a" NOT ("b" OR "b")')


@BOTH_BACKENDS
def test_the_repeated_word_ranks_first(corpus: Store, settings: Settings) -> None:  # noqa: F811
    # 00002 holds "protein" (asked three times), 00001 "collapse" (asked once).
    found = ids(keyword(corpus, settings, "protein collapse, protein, protein"))
    assert found == ["2501.00002", "2501.00001"]
    found = ids(keyword(corpus, settings, "collapse protein, collapse, collapse"))
    assert found == ["2501.00001", "2501.00002"]


@BOTH_BACKENDS
def test_a_long_question_is_not_cut_at_its_first_32_words(corpus: Store, settings: Settings) -> None:  # noqa: F811
    filler = " ".join(f"word{i}" for i in range(40))
    results = keyword(corpus, settings, f"{filler} critiques")
    assert ids(results) == ["2501.00003"] and not results.notes
    many = " ".join(f"w{i}" for i in range(kw.MAX_WORDS + 5))
    assert any(f"{kw.MAX_WORDS} rarest" in n for n in keyword(corpus, settings, many).notes)


@BOTH_BACKENDS
def test_written_queries_drop_joined_stop_words_and_relax_an_empty_and(
        corpus: Store, settings: Settings) -> None:  # noqa: F811
    keywords = plan(corpus, '"advantage collapse" of the training')
    assert [t.text for t in keywords.query.terms] == ["advantage collapse", "training"]
    assert fts_expression(keywords.query) == '"advantage collapse" AND "training"'
    # A stop word an operator touches is the reader's: kept.
    assert [t.text for t in plan(corpus, "the OR grpo").query.terms] == ["the", "grpo"]
    # No paper has the phrase and "protein": papers with either, said so.
    results = keyword(corpus, settings, '"advantage collapse" protein')
    assert set(ids(results)) == {"2501.00001", "2501.00002"}
    assert any("any of them" in n for n in results.notes)
    # Operators written by the reader are never relaxed.
    assert ids(keyword(corpus, settings, '"advantage collapse" AND protein')) == []


@BOTH_BACKENDS
def test_short_and_sprawling_prefixes_are_searched_as_words(
        corpus: Store, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    results = keyword(corpus, settings, "tr* OR critiq*")
    assert ids(results) == ["2501.00003"]  # "tr" is no word of the corpus; critiq* still is
    assert any("searched as whole words: tr* (" in n for n in results.notes)
    monkeypatch.setattr(kw, "MAX_EXPANSIONS", 1)
    results = keyword(corpus, settings, "tra* OR critiq*")  # training, transformer
    assert any("searched as whole words: tra* (" in n for n in results.notes)
    assert ids(keyword(corpus, settings, "critiq*")) == ["2501.00003"]  # one word: a prefix


# ------------------------------------------------------------- the cap on work

STEMS = ["bal", "cor", "dus", "fen", "gim", "hol", "kar", "lum", "mer", "nod", "pal", "ris",
         "sut", "tol", "ven", "wic", "yar", "zod", "bel", "cal"]
WORDS = [stem + a + b for stem in STEMS for a in "aeiou" for b in "nrstlkmp"]  # 800 words


@pytest.fixture
def big(store: Store) -> Store:
    """1,500 papers of 30 words drawn from 800 (each 3-letter stem begins 40 of them): a
    prefix of 3 letters here stands for ~2,250 postings, a word for ~56."""
    rng = random.Random(7)
    add_records(store, [paper(f"2502.{i:05d}", " ".join(rng.sample(WORDS, 5)),
                              " ".join(rng.sample(WORDS, 25))) for i in range(1500)])
    return store


def work_counted(store: Store, query: KeywordQuery) -> float:
    """Counted, not estimated: the papers each operand matches inside the searched window (the
    postings bm25 scores in an OR query), plus its whole list read at the scan ratio."""
    first = store.search._newest_from(query.newest_share)
    total = 0.0
    for term in query.terms:
        single = fts_expression(KeywordQuery([Term(term.text, term.phrase, term.prefix)]))
        scored, listed = store.conn.execute(
            "SELECT count(*) FILTER (WHERE rowid >= ?), count(*) FROM papers_fts"
            " WHERE papers_fts MATCH ?", (first, single)).fetchone()
        ratio = kw.PREFIX_SCAN_RATIO if term.prefix else kw.SCAN_RATIO
        total += (scored + listed / ratio) * term.weight
    return total


@pytest.mark.parametrize("query, cap", [
    (" OR ".join(stem + "*" for stem in STEMS[:16]), 6000),  # ~36,000 postings
    (" OR ".join(WORDS[::25]), 700),                          # 32 words, ~1,800
    (" ".join(WORDS[:30]), 700),                              # ranked words, ~1,700
])
def test_a_hostile_query_stays_within_the_cap(big: Store, settings: Settings, query: str,
                                              cap: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kw, "WORK_CAP", cap)
    uncapped = KeywordQuery(parse_query(query).items)
    keywords = plan(big, query)
    assert keywords.work <= cap
    assert work_counted(big, keywords.query) <= cap * 1.15  # the window is taken as uniform
    assert work_counted(big, uncapped) > 2 * cap  # the cap did something (~2,250 a prefix)
    assert work_counted(big, keywords.query) > cap / 2  # and did not cut everything
    results = keyword(big, settings, query)
    assert results.hits and any("only the newest" in n for n in results.notes), results.notes


def test_two_letter_prefixes_are_words(big: Store) -> None:
    parsed = parse_query(" OR ".join(stem[:2] + "*" for stem in STEMS))  # 20 of them
    keywords = plan_keywords(big.search, parsed)
    assert any("a prefix needs at least 3 letters" in n for n in parsed.notes)
    assert not any(t.prefix for t in keywords.query.terms) and keywords.work == 0


def test_a_prefixs_words_are_walked_once_until_a_commit(big: Store) -> None:
    """SQLite counts a prefix's words by reading their lists (`learn*`: 10 ms at a million
    papers): the plan's walk serves its ranking and the next search (see the store contract
    for a commit)."""
    walks: list[str] = []
    big.conn.set_trace_callback(lambda sql: "term >=" in sql and walks.append(sql))
    for _ in range(2):
        assert big.search.keyword_search(plan(big, "bal*").query, (1.0, 1.0, 1.0))
    assert len(walks) == 1


def test_plain_words_past_the_budget_lose_their_most_common(big: Store,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kw, "POSTINGS_BUDGET", 300)
    keywords = plan(big, " ".join(WORDS[:40]))
    kept = [t.text for t in keywords.query.terms]

    def docs(words: list[str]) -> list[int]:
        stems = [toks[0] for toks in big.search.index_tokens(words)]
        counts = big.search.term_doc_counts(stems)
        return [counts[stem] for stem in stems]

    assert 1 < len(kept) < 40 and sum(docs(kept)) <= 300 and keywords.work <= 300
    dropped = sorted(set(WORDS[:40]) - set(kept))
    assert min(docs(dropped)) >= max(docs(kept))  # the most common went


def test_feedback_moves_the_query_toward_the_best_fused_papers() -> None:
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    best, second = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    moved = feedback_vector(query, np.stack([best, second]), [1.0, 0.5], 0.5, 0.1)
    assert moved == pytest.approx(moved / np.linalg.norm(moved))
    assert moved[0] > moved[1] > moved[2] > 0  # toward the first far more than the second
    even = feedback_vector(query, np.stack([best, second]), [1.0, 0.5], 0.5, 100.0)
    assert even[1] == pytest.approx(even[2], rel=0.05)
    assert feedback_vector(query, np.stack([best]), [1.0], 0.0, 0.1) == pytest.approx(query)
