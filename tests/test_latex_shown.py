"""Text shown anywhere (search titles and snippets, feeds, e-mails, reasons, pages) has its LaTeX cleaned by the one cleaner, papersift.latex."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from papersift.delivery.digest import _entry
from papersift.latex import clean_latex, readable
from papersift.search.highlight import Highlighter
from papersift.search.service import _hits
from papersift.summarize.text import clean_latex as summaries_cleaner
from papersift.web.feeds import atom_feed
from papersift.web.text import readable as pages_readable

# The search snippet, and a title with math and an escaped percent.
TITLE = r"On $\textit{proper learning}$ of $k$-juntas with $O(n^2)$ queries: a 45\% gain"
ABSTRACT = (r"We study $\textit{proper learning of decision lists}$ in the $\mathcal{PAC}$ model"
            "\nand show a \\emph{learning} algorithm that needs $n^{1/2}$ samples \\cite{x}.")


def _no_latex(text: str) -> bool:
    return "\\" not in text and "$" not in text and "{" not in text


def test_one_cleaner_everywhere() -> None:
    assert summaries_cleaner is clean_latex and pages_readable is readable
    assert readable(TITLE) == "On proper learning of k-juntas with O(n²) queries: a 45% gain"
    assert readable(r"$\textit{proper learning ...}$") == "proper learning..."
    assert readable(None) == "" and readable("plain  text\n") == "plain text"


def test_search_titles_and_snippets_are_clean() -> None:
    row = {"id": "2601.00001", "title": TITLE, "abstract": ABSTRACT, "authors": "A. Author",
           "primary_category": "cs.LG", "date": "2026-01-05"}
    hit = _hits([(row, 1.0, 1.0, None)], Highlighter(["learn"]))[0]
    assert _no_latex(hit.title) and _no_latex(hit.snippet)
    assert "<mark>learning</mark>" in hit.snippet_html and "\\" not in hit.snippet_html
    assert "decision lists" in hit.snippet and "PAC" in hit.snippet
    bare = _hits([(row, 1.0, 1.0, None)], None)[0]
    assert bare.title == readable(TITLE)


def test_feed_entries_are_clean() -> None:
    page = {"title": "Latest", "papers": [{"title": TITLE, "url": "/paper/2601.00001",
                                            "blurb": "Smith et al. study $k$-juntas.",
                                            "date": "2026-01-05", "authors": []}]}
    root = ET.fromstring(atom_feed(page, "http://example.org", "papersift"))
    texts = [e.text or "" for e in root.iter()]
    assert readable(TITLE) in texts and "Smith et al. study k-juntas." in texts
    assert all(_no_latex(t) for t in texts)


def test_digest_entries_are_clean(settings) -> None:
    reader = {"id": 1, "link_key": "k"}
    row = {"id": "2601.00001", "title": TITLE, "abstract": ABSTRACT, "summary": None,
           "lead_authors": [{"name": "A. Author"}], "n_authors": 1}
    entry = _entry(settings, reader, row, None)
    assert entry["title"] == readable(TITLE)
    assert _no_latex(entry["blurb"]) and entry["blurb"].startswith("We study proper learning")
