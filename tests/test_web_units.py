"""Small pieces of the site: author lines, opening sentences, static file names, snippets, BibTeX."""

from __future__ import annotations

from papersift.web.authorline import author_line
from papersift.web.render import Linker, sparkline, static_file
from papersift.web.search_view import segments
from papersift.web.text import bibtex, first_sentences


def test_author_line_names_three_then_et_al() -> None:
    assert author_line(["Yuda Song", "Lili Chen", "Fahim Tajwar", "Rémi Munos"]) == \
        "Yuda Song, Lili Chen, Fahim Tajwar et al."
    assert author_line(["Yuda Song", "Lili Chen", "Fahim Tajwar"]) == \
        "Yuda Song, Lili Chen, Fahim Tajwar"
    assert author_line(["Yuda Song", "Lili Chen", "Fahim Tajwar"], total=9) == \
        "Yuda Song, Lili Chen, Fahim Tajwar et al."
    assert author_line(["Ada Lovelace"]) == "Ada Lovelace"
    assert author_line([]) == ""


def test_first_sentences_stop_at_a_sentence_end() -> None:
    text = ("We propose X. It beats Y by 3.5 points on Z, e.g. on long inputs. "
            "A third sentence is not needed.")
    assert first_sentences(text) == "We propose X. It beats Y by 3.5 points on Z, e.g. on long inputs."
    long = "word " * 200
    cut = first_sentences(long, max_chars=50)
    assert len(cut) <= 51 and cut.endswith("…")


def test_static_files_and_relative_links() -> None:
    assert static_file("/") == "index.html"
    assert static_file("/topics/llm-agents") == "topics/llm-agents.html"
    assert static_file("/topics/llm-agents?page=3") == "topics/llm-agents/3.html"
    assert static_file("/papers/2501.01234") == "papers/2501.01234.html"
    assert static_file("/feed.atom") == "feed.atom"
    link = Linker(static_from="/topics/llm-agents?page=3")
    assert link("/papers/2501.01234") == "../../papers/2501.01234.html"
    assert link("/") == "../../index.html"
    assert link("https://arxiv.org/abs/1") == "https://arxiv.org/abs/1"
    assert Linker()("/topics/x?page=2") == "/topics/x?page=2"


def test_snippet_segments_keep_only_the_marks() -> None:
    parts = segments("a <mark>graph</mark> &lt;script&gt; b")
    assert parts == [{"text": "a ", "hit": False}, {"text": "graph", "hit": True},
                     {"text": " <script> b", "hit": False}]
    assert segments("x \x02y\x03 z") == [{"text": "x ", "hit": False}, {"text": "y", "hit": True},
                                         {"text": " z", "hit": False}]


def test_sparkline_spans_the_box() -> None:
    points = sparkline([0, 5, 10])
    assert points.split()[0] == "0.0,22.0" and points.split()[-1] == "96.0,2.0"
    assert sparkline([]) == ""


def test_bibtex_entry() -> None:
    entry = bibtex({"id": "2501.01234", "title": "Graph {Neural} Nets", "sort_date": "2025-01-03",
                    "authors": [{"name": "Ada Lovelace"}, {"name": "Alan Turing"}],
                    "primary_category": "cs.LG", "doi": None})
    assert entry.startswith("@misc{lovelace2025graph,")
    assert "author = {Ada Lovelace and Alan Turing}" in entry
    assert "title = {Graph \\{Neural\\} Nets}" in entry
    assert "eprint = {2501.01234}" in entry and entry.endswith("}")
