"""Text for display: readable abstracts, first sentences, BibTeX."""

from __future__ import annotations

import re
from typing import Any

from papersift.latex import readable

__all__ = ["bibtex", "first_sentences", "plain", "readable"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_SPACES = re.compile(r"\s+")


def plain(text: str | None) -> str:
    """Text that is already clean (summaries: their writers and gate keep LaTeX out), one-spaced."""
    return _SPACES.sub(" ", text or "").strip()


def first_sentences(text: str, max_chars: int = 320, sentences: int = 2) -> str:
    """The opening sentences of an abstract, cut at a sentence end (or a word) near max_chars."""
    parts = _SENTENCE_END.split(text)
    out = ""
    for part in parts[:sentences]:
        if out and len(out) + len(part) + 1 > max_chars:
            break
        out = f"{out} {part}".strip()
    if len(out) > max_chars:
        out = out[:max_chars].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return out


def _bib_escape(text: str) -> str:
    return text.replace("{", "\\{").replace("}", "\\}")


def bibtex(paper: dict[str, Any]) -> str:
    """A @misc entry for an arXiv paper (or whatever id the store has)."""
    authors = [a["name"] for a in paper.get("authors", [])]
    year = (paper.get("sort_date") or paper.get("submitted") or "")[:4]
    surname = re.sub(r"[^a-z]", "", (authors[0].split()[-1] if authors else "anon").lower()) or "anon"
    first_word = next((w for w in re.findall(r"[a-z]+", (paper.get("title") or "").lower())
                       if len(w) > 3), "paper")
    lines = [
        f"@misc{{{surname}{year}{first_word},",
        f"  title = {{{_bib_escape(_SPACES.sub(' ', paper.get('title') or ''))}}},",
        f"  author = {{{_bib_escape(' and '.join(authors))}}},",
        f"  year = {{{year}}},",
    ]
    pid = paper["id"]
    if ":" not in pid:
        lines += [f"  eprint = {{{pid}}},", "  archivePrefix = {arXiv},"]
        if paper.get("primary_category"):
            lines.append(f"  primaryClass = {{{paper['primary_category']}}},")
        lines.append(f"  url = {{https://arxiv.org/abs/{pid}}},")
    if paper.get("doi"):
        lines.append(f"  doi = {{{paper['doi']}}},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}"
