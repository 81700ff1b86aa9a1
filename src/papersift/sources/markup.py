"""JATS and HTML fragments (Crossref abstracts, titles with <i> or <scp>) to plain text.

The web layer escapes what it shows and renders LaTeX, not markup: a tag left in a title
would show as `<i>`. So sources that receive markup turn it into text once, here: blocks
(paragraphs, section titles, list items) become paragraphs, inline tags vanish, entities
are decoded and the pretty-printer's runs of whitespace collapse.
"""

from __future__ import annotations

import html
import re

# Elements that end a paragraph, in JATS (with or without the jats: prefix) and HTML.
_BLOCK = re.compile(
    r"</?(?:[a-z]+:)?(?:p|title|sec|list|list-item|def-item|boxed-text|disp-quote|"
    r"div|br|li|ul|ol|h[1-6]|table|tr)\b[^>]*>", re.I)
# Only what looks like a tag: "p < 0.05 and q > 2" in a plain abstract is text.
_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_SPACE = re.compile(r"[^\S\n]+")
_BREAKS = re.compile(r"\s*\n\s*")
# A JATS <title> of "Abstract" (or "Summary") opening the text says nothing a reader needs.
_ABSTRACT_HEADING = re.compile(r"^(?:abstract|summary)\s*\n", re.I)


def has_markup(text: str) -> bool:
    """Whether the text holds a tag or an entity worth converting (a fast first check)."""
    return "<" in text or "&" in text


def to_text(fragment: str) -> str:
    """Markup to plain text: paragraphs joined by a blank line, everything else one-spaced."""
    if not has_markup(fragment):
        return " ".join(fragment.split())
    # The pretty-printer's line breaks are spaces; only block elements break paragraphs.
    text = _BLOCK.sub("\n", " ".join(fragment.split()))
    text = html.unescape(_TAG.sub("", text))
    text = _SPACE.sub(" ", text)
    paragraphs = [p.strip() for p in _BREAKS.split(text.strip()) if p.strip()]
    text = "\n".join(paragraphs)
    text = _ABSTRACT_HEADING.sub("", text)
    return "\n\n".join(text.split("\n"))


def inline_text(fragment: str) -> str:
    """Markup to one line of text (titles, names): every tag dropped, whitespace one space."""
    if not has_markup(fragment):
        return " ".join(fragment.split())
    return " ".join(html.unescape(_TAG.sub("", fragment)).split())
