"""Query parsing and repair, and keyword search on a real FTS5 index (no model needed)."""

from __future__ import annotations

import pytest

from papersift.search import QueryError, search
from papersift.search.keyword import parse_query
from papersift.settings import Settings
from papersift.store import KeywordQuery, Store, Term, add_records
from papersift.store.sqlite.search import fts_expression
from tests.conftest import shared_file
from tests.store_sql import run_sql
from tests.test_search_embed import paper

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def corpus(store: Store) -> Store:
    add_records(store, [
        paper("2501.00001", "Advantage collapse in GRPO training",
              "We show that group relative policy optimization suffers advantage collapse "
              "when rewards are sparse.", ["Grace Hopper", "Alan Turing"], ["cs.LG", "cs.AI"],
              "2025-03-10"),
        paper("2501.00002", "Transformers for protein folding",
              "A transformer model predicts protein structures from sequences.",
              ["Rosalind Franklin"], ["q-bio.BM", "cs.LG"], "2025-07-02"),
        paper("2501.00003", "Learning agents from written critiques",
              "Agents trained on natural language feedback instead of scalar rewards. "
              "<script>alert(1)</script> & more.", ["Alan Turing"], ["cs.CL"], "2026-01-15"),
        paper("2501.00004", "大规模语言模型的推理", "我们研究大规模语言模型的推理能力。",
              ["Li Wei"], ["cs.CL"], "2026-02-01"),
    ])
    return store


def keyword(store: Store, settings: Settings, query: str, **kw: object):  # noqa: ANN201
    return search(store, settings, query, mode="keyword", **kw)


def ids(results) -> list[str]:  # noqa: ANN001
    return [hit.paper_id for hit in results.hits]


@pytest.mark.parametrize("raw, expression, note", [
    ('"unbalanced quote', '"unbalanced" OR "quote"', "unbalanced quote"),
    ("AND", "", "operator"),
    ("grpo AND", '"grpo"', "operator"),
    ("OR OR grpo", '"grpo"', "operator"),
    ("NOT grpo", '"grpo"', "operator"),
    ("grpo AND OR training", '"grpo" AND "training"', "operator"),
    ("grpo OR NOT NOT training", '"grpo" OR "training"', "operator"),
    ("grpo NOT", '"grpo"', "operator"),
    ("(grpo training", '"grpo" OR "training"', "parentheses"),
    ("title:grpo abstract:x", '"title" OR "grpo" OR "abstract" OR "x"', None),
    ("NEAR(a b) ^c", '"NEAR" OR "a" OR "b" OR "c"', "parentheses"),
])
def test_repairs_what_fts5_would_reject(raw: str, expression: str, note: str | None) -> None:
    parsed = parse_query(raw)
    assert fts_expression(KeywordQuery(parsed.items, "OR")) == expression
    if note:
        assert any(note in n for n in parsed.notes), parsed.notes
    else:
        assert not parsed.notes


def test_filters_are_parsed_out_of_the_query() -> None:
    parsed = parse_query('au:"Alan Turing" cat:cs.CL year:2025..2026 critiques topic:agents')
    assert parsed.filters.authors == ["Alan Turing"]
    assert parsed.filters.categories == ["cs.CL"]
    assert (parsed.filters.since, parsed.filters.until) == ("2025", "2026")
    assert parsed.filters.topic == "agents"
    assert parsed.text == "critiques"
    assert "ignored year:20x" in " ".join(parse_query("year:20x grpo").notes)


def test_field_weights_rank_title_matches_first(corpus: Store, settings: Settings) -> None:
    # "rewards" is in two abstracts; "advantage" is in 00001's title and abstract.
    assert ids(keyword(corpus, settings, "advantage rewards"))[0] == "2501.00001"
    assert ids(keyword(corpus, settings, "transformer"))[0] == "2501.00002"


def test_phrases_prefixes_and_operators(corpus: Store, settings: Settings) -> None:
    assert ids(keyword(corpus, settings, '"advantage collapse"')) == ["2501.00001"]
    assert ids(keyword(corpus, settings, '"collapse advantage"')) == []
    assert ids(keyword(corpus, settings, "critiq*")) == ["2501.00003"]
    assert ids(keyword(corpus, settings, "rewards NOT sparse")) == ["2501.00003"]
    assert set(ids(keyword(corpus, settings, "protein OR critiques"))) == {"2501.00002", "2501.00003"}


def test_author_category_and_date_filters(corpus: Store, settings: Settings) -> None:
    assert set(ids(keyword(corpus, settings, "au:turing rewards"))) == {"2501.00001", "2501.00003"}
    assert ids(keyword(corpus, settings, 'au:"Grace Hopper"')) == ["2501.00001"]
    assert ids(keyword(corpus, settings, "rewards cat:cs.CL")) == ["2501.00003"]
    assert ids(keyword(corpus, settings, "rewards", category="cs.AI")) == ["2501.00001"]
    assert set(ids(keyword(corpus, settings, "cat:cs"))) == {"2501.00001", "2501.00002",
                                                             "2501.00003", "2501.00004"}
    assert ids(keyword(corpus, settings, "rewards year:2026")) == ["2501.00003"]
    assert ids(keyword(corpus, settings, "rewards date:2025-03")) == ["2501.00001"]
    assert ids(keyword(corpus, settings, "rewards", since="2025-04-01", until="2026-01")) == [
        "2501.00003"]
    only_filters = keyword(corpus, settings, "au:turing")
    assert ids(only_filters) == ["2501.00003", "2501.00001"]  # newest first


def test_topic_filter(corpus: Store, settings: Settings) -> None:
    run_sql(corpus, "INSERT INTO topics(id, slug, label) VALUES (1, 'rl-agents', 'agents')")
    run_sql(corpus, "INSERT INTO paper_topics(paper_id, topic_id, assigned_by)"
                    " VALUES ('2501.00003', 1, 'build')")
    assert ids(keyword(corpus, settings, "rewards", topic="rl-agents")) == ["2501.00003"]
    assert ids(keyword(corpus, settings, "rewards topic:rl-agents")) == ["2501.00003"]
    assert ids(keyword(corpus, settings, "rewards", topic="no-such-topic")) == []


def test_snippets_escape_the_papers_text_and_mark_matches(corpus: Store, settings: Settings) -> None:
    hit = keyword(corpus, settings, "critiques script").hits[0]
    assert hit.paper_id == "2501.00003"
    assert "<mark>critiques</mark>" in hit.title_html
    assert "<script>" not in hit.snippet_html and "&lt;" in hit.snippet_html
    assert "<mark>script</mark>" in hit.snippet_html
    assert hit.snippet_html.replace("<mark>", "").replace("</mark>", "").count("<") == 0
    assert "<script>" in hit.snippet  # the plain variant is the text itself


def test_paging(corpus: Store, settings: Settings) -> None:
    first = keyword(corpus, settings, "rewards OR protein OR critiques", limit=2)
    second = keyword(corpus, settings, "rewards OR protein OR critiques", limit=2, offset=2)
    assert first.total == 3 and first.has_more and not second.has_more
    assert len(set(ids(first)) | set(ids(second))) == 3
    with pytest.raises(QueryError):
        keyword(corpus, settings, "rewards", limit=0)
    with pytest.raises(QueryError):
        keyword(corpus, settings, "rewards", offset=-1)
    with pytest.raises(QueryError, match="mode"):
        search(corpus, settings, "rewards", mode="fuzzy")


# --- bad input: each gets results or a clear message, never an exception from sqlite

def test_empty_query(corpus: Store, settings: Settings) -> None:
    for raw in ("", "   ", "\n\t"):
        results = keyword(corpus, settings, raw)
        assert results.hits == [] and results.message == "type some words to search for"


def test_very_long_query(corpus: Store, settings: Settings) -> None:
    results = keyword(corpus, settings, ("advantage collapse " * 600)[:10_000])
    assert ids(results)[:1] == ["2501.00001"]
    assert any("first" in note for note in results.notes)


def test_control_characters(corpus: Store, settings: Settings) -> None:
    results = keyword(corpus, settings, "advan\x00tage\x07 \x1bcollapse\u200b")
    assert "2501.00001" in ids(results)


@pytest.mark.parametrize("raw", [
    "'; DROP TABLE papers; --", "1 OR 1=1", 'a" OR "b', "title:", "*", "NEAR(", "^", ":",
    "collapse)", "{title abstract}: x", '""', "AND OR NOT", "-grpo", "grpo*", "x*y",
])
def test_sql_and_fts_syntax(corpus: Store, settings: Settings, raw: str) -> None:
    results = keyword(corpus, settings, raw)
    assert results.message in READER_MESSAGES, results.message
    assert corpus.papers.count_papers() == 4


# What a reader may be told instead of results; an index's error ("could not be run") is not one.
READER_MESSAGES = {None, "no papers match", "no papers match these filters",
                   "type some words to search for"}


@pytest.mark.parametrize("raw", ["advantage AND OR collapse", "advantage OR AND collapse",
                                 "advantage AND AND collapse", "advantage OR OR collapse"])
def test_doubled_operators_still_find_the_paper(corpus: Store, settings: Settings,
                                                raw: str) -> None:
    results = keyword(corpus, settings, raw)
    assert results.message is None
    assert ids(results) == ["2501.00001"]
    assert any("operator" in note for note in results.notes), results.notes


def test_non_latin_scripts(corpus: Store, settings: Settings) -> None:
    results = keyword(corpus, settings, "推理能力")
    # unicode61 keeps a run of CJK characters as one token: whole runs match, parts do not.
    assert results.message == "no papers match"
    assert ids(keyword(corpus, settings, "我们研究大规模语言模型的推理能力")) == ["2501.00004"]
    assert ids(keyword(corpus, settings, "Привет мир")) == []
    assert ids(keyword(corpus, settings, "cat:cs.CL 🙂")) == ["2501.00004", "2501.00003"]


def test_highlighter_marks_stems_and_escapes() -> None:
    from papersift.search.highlight import Highlighter

    marker = Highlighter(["entropi", "optim", "ai"])
    assert marker.mark("Entropy & <optimal> AI, not air") == (
        "<mark>Entropy</mark> &amp; &lt;<mark>optimal</mark>&gt; <mark>AI</mark>, not air")
    assert marker.mark("Ünïcode öptimization") == "Ünïcode <mark>öptimization</mark>"
    plain, marked = marker.snippet("filler " * 100 + "entropy rises " + "filler " * 100, 10)
    assert plain.startswith("…") and plain.endswith("…") and "<mark>entropy</mark>" in marked
    plain, marked = Highlighter([]).snippet("word " * 100, 5)
    assert plain == "word word word word word…" and marked == plain


def test_ascii_texts_are_marked_without_the_regex_exactly_where_it_marks() -> None:
    """ASCII texts are searched stem by stem with str.find; the marks are the pattern's own,
    on real titles and abstracts and on the awkward cases: stems of one or two letters, a
    final i that stands for y, stems with non-word characters, words that run into each
    other, and a stem outside ASCII (then the regex does it)."""
    import gzip
    import itertools
    import json
    import random

    from papersift.search.highlight import Highlighter

    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt") as handle:
        records = [json.loads(line) for line in itertools.islice(handle, 300)]
    texts = [t for r in records for t in (r["title"], r["abstract"]) if t.isascii()]
    texts += ["e-mail c++ e-mails AI ai. Ai_b a_b __init__ i I", "entropy Entropies entropi",
              "", "graphgraph graph-graph Graph_graph 3graph graph3"]
    words = [w.strip(".,;:()") for t in texts[:200] for w in t.lower().split()]
    rng = random.Random(5)
    checked = 0
    for _ in range(300):
        stems = [rng.choice([w, w[:3], w[:3] + "i", w[:2], w[:1], "e-mail", "c++", "a_b"])
                 for w in rng.sample(words, rng.randint(1, 6))]
        marker = Highlighter(stems)
        assert marker._rules is not None
        for text in rng.sample(texts, 5):
            assert marker._spans(text) == [m.span() for m in marker.pattern.finditer(text)]
            checked += 1
    assert checked == 1500
    assert Highlighter(["graph", "ıd"])._rules is None  # "ı" matches "i" under IGNORECASE
    assert Highlighter(["ıd"]).mark("an ID") == "an <mark>ID</mark>"


def test_a_pages_texts_are_marked_together_as_each_alone() -> None:
    """spans_each searches a page's titles and abstracts in one pass (joined): each text's
    marks are the ones the whole pattern finds in that text's window alone, ASCII or not."""
    import gzip
    import itertools
    import json
    import random

    from papersift.latex import readable
    from papersift.search.highlight import WINDOW_CHARS, Highlighter, window

    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt") as handle:
        records = [json.loads(line) for line in itertools.islice(handle, 400)]
    # As hits show them: LaTeX rendered ("$\\alpha$" is "α"), so some are not ASCII.
    texts = [readable(t) for r in records for t in (r["title"], r["abstract"])]
    texts += ["", "graph", "naïve graph-graph", "graph " * (WINDOW_CHARS // 5), "é " * 50]
    assert sum(not t.isascii() for t in texts) > 20
    words = [w.strip(".,;:()") for t in texts[:300] for w in t.lower().split() if w.isascii()]
    rng = random.Random(6)
    for _ in range(200):
        marker = Highlighter([rng.choice([w, w[:3], w[:3] + "i", w[:2]])
                              for w in rng.sample(words, rng.randint(1, 8))])
        page = rng.sample(texts, 20)
        assert marker.spans_each(page) == [marker._pattern_spans(window(t)[0]) for t in page]
    assert Highlighter([]).spans_each(["graph", ""]) == [[], []]
    assert Highlighter(["ıd"]).spans_each(["an ID", "id"]) == [[(3, 5)], [(0, 2)]]


def test_highlighter_marks_accented_and_plain_words_of_one_text_in_order() -> None:
    """A text with accents: its accented words are folded, its ASCII words matched as they
    are, and the marks come out in reading order, in the snippet's window too."""
    from papersift.search.highlight import Highlighter

    marker = Highlighter(["optim", "naiv"])
    assert marker.mark("Naïve optimization beats optimal naive baselines — optimé") == (
        "<mark>Naïve</mark> <mark>optimization</mark> beats <mark>optimal</mark>"
        " <mark>naive</mark> baselines — <mark>optimé</mark>")
    assert marker.snippet("α " * 50 + "naïve  optimum\n" + "β " * 50, 4) == (
        "…naïve optimum β β…", "…<mark>naïve</mark> <mark>optimum</mark> β β…")
    assert marker.snippet("Résumé: an optimal one", 40) == (
        "Résumé: an optimal one", "Résumé: an <mark>optimal</mark> one")


# --- what mutation testing found untested in query repair (issue 20, docs/testing.md)

def _parsed(raw: str) -> tuple[list[object], str, list[str]]:
    parsed = parse_query(raw)
    return ([(i.text, i.phrase, i.prefix) if not isinstance(i, str) else i
             for i in parsed.items], parsed.text, parsed.notes)


@pytest.mark.parametrize("raw, items, text, notes", [
    ("grpo\x00training\u200b", [("grpo", False, False), ("training", False, False)],
     "grpo training", []),
    ('"advantage collapse" AND grpo', [("advantage collapse", True, False), "AND",
                                       ("grpo", False, False)], "advantage collapse grpo", []),
    ('"grpo"', [("grpo", False, False)], "grpo", []),
    ('"" grpo -- x', [("grpo", False, False), ("x", False, False)], "grpo -- x", []),
    ("ab* a*", [("ab", False, True), ("a", False, False)], "ab* a*", []),
    ("grpo)", [("grpo", False, False)], "grpo)",
     ["parentheses are not supported and were ignored"]),
    ('"grpo', [("grpo", False, False)], "grpo", ["an unbalanced quote was ignored"]),
    ("grpo AND", [("grpo", False, False)], "grpo",
     ["an operator without a word on each side was ignored"]),
    ("grpo au:x training", [("grpo", False, False), ("training", False, False)],
     "grpo training", []),
    ('au:"" grpo', [("grpo", False, False)], "grpo", ["ignored the empty filter au:"]),
    ("year:20x grpo", [("grpo", False, False)], "grpo",
     ["ignored year:20x (use year:2025 or year:2024..2025)"]),
    ("date:2025-1 grpo", [("grpo", False, False)], "grpo",
     ["ignored date:2025-1 (use date:2025-03 or date:2025-01-01..2025-03-31)"]),
    ("date:2025-01..bad grpo", [("grpo", False, False)], "grpo",
     ["ignored date:2025-01..bad (use date:2025-03 or date:2025-01-01..2025-03-31)"]),
    ("since:yesterday grpo", [("grpo", False, False)], "grpo",
     ["ignored since:yesterday (use a date like 2025-03-01)"]),
])
def test_repair_keeps_the_words_and_says_what_it_dropped(raw: str, items: list[object],
                                                         text: str, notes: list[str]) -> None:
    assert _parsed(raw) == (items, text, notes)
    assert parse_query(raw).raw == raw


def test_every_filter_spelling_is_read() -> None:
    parsed = parse_query('author:"Grace Hopper" category:cs.LG since:2025-03-01 until:2025-04 x')
    assert parsed.filters.authors == ["Grace Hopper"] and parsed.filters.categories == ["cs.LG"]
    assert (parsed.filters.since, parsed.filters.until) == ("2025-03-01", "2025-04")
    ranged = parse_query("date:2025-01-01..2025-03-31 x").filters
    assert (ranged.since, ranged.until) == ("2025-01-01", "2025-03-31")
    day = parse_query("date:2025-02 x").filters
    assert (day.since, day.until) == ("2025-02", "2025-02")
    assert parse_query("date:bad x").filters.since is None
    with pytest.raises(QueryError, match="^the query must be text$"):
        parse_query(None)  # type: ignore[arg-type]


def test_a_long_query_is_cut_at_a_word_boundary() -> None:
    words = " ".join(["abcd"] * 200)  # 999 characters
    assert parse_query(words + "e").notes == [] and parse_query(words + "e").text.endswith("e")
    for tail in (" zz", "efgh ij"):
        cut = parse_query(words + tail)
        assert cut.text == " ".join(["abcd"] * (200 if tail == " zz" else 199))
        assert cut.notes == ["the query was cut to its first 1000 characters"]
    spaced = parse_query("a" + " " * 2000 + "b")
    assert spaced.text == "a b" and spaced.notes == []


def test_only_queries_written_with_operators_phrases_or_prefixes_are_capped() -> None:
    words = [f"w{n}" for n in range(40)]
    assert len(parse_query(" ".join(words)).terms) == 40
    for joined in (" OR ".join(words), " ".join(w + "*" for w in words),
                   " ".join(f'"{w} x"' for w in words)):
        parsed = parse_query(joined)
        assert len(parsed.terms) == 32 and not isinstance(parsed.items[-1], str)
        assert [t.text.split()[0] for t in parsed.terms] == words[:32]
        assert parsed.notes[-1] == "only the first 32 words of the query were used for keywords"
    exactly = parse_query(" OR ".join(words[:32]))
    assert len(exactly.terms) == 32 and exactly.notes == []


def test_the_fts5_expression_quotes_and_weights_terms() -> None:
    assert fts_expression(KeywordQuery([Term('a"b')], "OR")) == '"a""b"'
    assert fts_expression(KeywordQuery([Term("a", weight=2), Term("b", prefix=True)], "AND")) == (
        '("a" OR "a") AND "b"*')
    assert fts_expression(KeywordQuery([Term("a"), "NOT", Term("b")], "AND")) == '"a" NOT "b"'


def test_highlighting_marks_prefixes_escapes_and_says_where_it_cut() -> None:
    from papersift.search.highlight import WINDOW_CHARS, Highlighter

    assert Highlighter(["net"]).mark("Networks & nets") == (
        "<mark>Networks</mark> &amp; <mark>nets</mark>")
    assert Highlighter(["ne"]).mark("ne net") == "<mark>ne</mark> net"
    long = Highlighter(["x"]).mark("<b> " * (WINDOW_CHARS // 4 + 10))
    assert long.endswith("…") and "<b>" not in long
    assert Highlighter(["x"]).mark("<b>") == "&lt;b&gt;"
    lead = Highlighter([]).snippet
    assert lead("one two <three>", 3) == ("one two <three>", "one two &lt;three&gt;")
    assert lead("one two three four", 3) == ("one two three…", "one two three…")
    assert lead("a" * 60, 2) == ("a" * 50 + "…", "a" * 50 + "…")
