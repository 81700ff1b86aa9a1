"""Properties over any input (issue 20): query repair never lets an index error reach the
reader, and the faithfulness gate never passes a summary that adds a number or a name."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from papersift.search import search
from papersift.search.keyword import parse_query
from papersift.settings import Settings, load_settings
from papersift.store import KeywordQuery, Store, add_records, open_store
from papersift.store.sqlite.search import fts_expression
from papersift.summarize.gate import check, source_for
from tests.test_search_embed import paper
from tests.test_search_query import READER_MESSAGES
from tests.test_summarize_gate import BLURB, PAPER, TLDR

# Pieces a reader might type, FTS5's own syntax among them, mixed with any text.
_PIECES = st.sampled_from([
    "AND", "OR", "NOT", "NEAR", "NEAR(", "(", ")", '"', "*", "^", ":", "-", "+", "{", "}", ",",
    "au:", "cat:", "year:", "date:", "topic:", "title:", "grpo", "training*", "col*", "a*",
    '"advantage collapse"', "the", "of", "rewards", "\x00", "🙂", "推理",
])
QUERIES = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map(" ".join),
    st.lists(_PIECES, max_size=12).map("".join),
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Settings]]:
    settings = load_settings(environ={}, data_dir=str(tmp_path_factory.mktemp("props") / "d"))
    store = open_store(settings)
    add_records(store, [
        paper("2501.00001", "Advantage collapse in GRPO training",
              "We show that group relative policy optimization suffers advantage collapse "
              "when rewards are sparse.", ["Grace Hopper"], ["cs.LG"], "2025-03-10"),
        paper("2501.00002", "Transformers for protein folding",
              "A transformer model predicts protein structures.", ["Rosalind Franklin"],
              ["q-bio.BM"], "2025-07-02"),
    ])
    yield store, settings
    store.close()


@hsettings(max_examples=300, deadline=None)
@given(raw=QUERIES)
def test_any_query_gets_results_or_a_message_never_an_index_error(
        corpus: tuple[Store, Settings], raw: str) -> None:
    store, settings = corpus
    results = search(store, settings, raw, mode="keyword")
    assert results.message in READER_MESSAGES, (raw, results.message)
    # The repaired operands and operators are themselves a valid FTS5 expression.
    parsed = parse_query(raw)
    for operator in ("AND", "OR"):
        expression = fts_expression(KeywordQuery(parsed.items, operator))
        if expression:
            with sqlite3.connect(":memory:") as conn:
                conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
                conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,))


# ------------------------------------------------------------------------ the gate

SOURCE = source_for(PAPER)


def _canonical(integer: int, decimals: str) -> str:
    decimals = decimals.rstrip("0")
    return f"{integer}.{decimals}" if decimals else str(integer)


@st.composite
def invented_numbers(draw: st.DrawFn) -> tuple[str, str]:
    """(as written, canonical value) of a number the abstract does not hold."""
    integer = draw(st.integers(min_value=0, max_value=10**7))
    decimals = draw(st.one_of(st.just(""), st.from_regex(r"[0-9]{1,3}", fullmatch=True)))
    grouped = draw(st.booleans()) and integer >= 1000
    written = f"{integer:,}" if grouped else str(integer)
    if decimals:
        written += "." + decimals
    suffix = draw(st.sampled_from(["", "%", " percent", "x", "k"]))
    return written + suffix, _canonical(integer, decimals)


@st.composite
def invented_names(draw: st.DrawFn) -> str:
    """A method, model or dataset name (capitals inside, or capitals with digits)."""
    name = draw(st.one_of(
        st.from_regex(r"[A-Z][a-z]{2,6}[A-Z][a-z]{1,6}", fullmatch=True),
        st.from_regex(r"[A-Z][A-Za-z]{2,6}[0-9]{1,3}", fullmatch=True),
        st.from_regex(r"[A-Z]{3,6}", fullmatch=True),
    ))
    lowered = name.lower()
    assume(lowered not in SOURCE.names and lowered + "s" not in SOURCE.names
           and lowered.rstrip("s") not in SOURCE.names)
    return name


def _with_word(text: str, word: str, position: int) -> str:
    """`word` inserted after the position-th word, never before the opening naming."""
    words = text.split()
    at = 3 + position % (len(words) - 3)
    return " ".join([*words[:at], word, *words[at:]])


@hsettings(max_examples=200, deadline=None)
@given(number=invented_numbers(), position=st.integers(min_value=0, max_value=200),
       in_tldr=st.booleans())
def test_a_summary_that_adds_a_number_never_passes(number: tuple[str, str], position: int,
                                                   in_tldr: bool) -> None:
    written, value = number
    assume(value not in SOURCE.numbers)
    tldr, blurb = (_with_word(TLDR, written, position), BLURB) if in_tldr else (
        TLDR, _with_word(BLURB, written, position))
    reasons = check(tldr, blurb, PAPER)
    label = "tldr" if in_tldr else "blurb"
    assert any(r.startswith(f"{label}: number not in the abstract") and value in r
               for r in reasons), (tldr, blurb, reasons)


@hsettings(max_examples=200, deadline=None)
@given(name=invented_names(), position=st.integers(min_value=0, max_value=200),
       in_tldr=st.booleans())
def test_a_summary_that_adds_a_name_never_passes(name: str, position: int, in_tldr: bool
                                                 ) -> None:
    tldr, blurb = (_with_word(TLDR, name, position), BLURB) if in_tldr else (
        TLDR, _with_word(BLURB, name, position))
    reasons = check(tldr, blurb, PAPER)
    label = "tldr" if in_tldr else "blurb"
    assert any(r.startswith(f"{label}: name not in the abstract") and name in r
               for r in reasons), (tldr, blurb, reasons)


def test_the_faithful_summary_the_properties_start_from_passes() -> None:
    assert check(TLDR, BLURB, PAPER) == []
