"""The title's name put into a blurb that describes the thing but never names it: 'propose a watermarking method' -> 'propose SEAL, a watermarking method'."""

from __future__ import annotations

import re

from papersift.summarize.style import names_title
from papersift.summarize.text import said_mid_sentence

# Verbs of making something, then the article of what was made.
_RE_SLOT = re.compile(
    r"\b(propos(?:e|es|ed|ing)|present(?:s|ed|ing)?|introduc(?:e|es|ed|ing)|"
    r"develop(?:s|ed|ing)?|design(?:s|ed|ing)?|build(?:s|ing)?|built|releas(?:e|es|ed|ing)|"
    r"construct(?:s|ed|ing)?|creat(?:e|es|ed|ing)|devis(?:e|es|ed|ing)|offer(?:s|ed|ing)?|"
    r"describ(?:e|es|ed|ing)|curat(?:e|es|ed|ing)|formulat(?:e|es|ed|ing)|"
    r"implement(?:s|ed|ing)?|train(?:s|ed|ing)?)\s+(an?|the)\s+")
# The head of what was made ends at the first clause or preposition: "a watermarking method
# that ...", "a taxonomy of LLM responses" (only "taxonomy" says what it is).
_RE_PHRASE_END = re.compile(
    r"[,;:.()]|\s(?:that|which|to|where|whereby|who|of|for|in|on|with|based|using|from|by|via|"
    r"and|as|under|across|at|through)\s")
_RE_CONTENT = re.compile(r"[A-Za-z][A-Za-z\-]{3,}")
_WEAK = frozenset(
    ["based", "using", "with", "from", "into", "towards", "toward", "through", "via", "approach",
     "method", "model", "models", "framework", "learning", "large", "language", "task", "tasks",
     "data", "new", "novel", "study", "analysis", "system", "systems", "network", "networks"])


def _stems(text: str) -> set[str]:
    found = set()
    for word in _RE_CONTENT.findall(text):
        for part in word.lower().split("-"):
            if len(part) >= 4 and part not in _WEAK:
                found.add(part[:6])
    return found


def with_title_name(blurb: str, name: str, title: str) -> str:
    """The blurb with the title's name set before the first thing it says was made, when that
    thing is described in the title's own words; else the blurb as it was."""
    if names_title(blurb, name):
        return blurb
    described = _stems(title.split(":", 1)[1] if ":" in title else title)
    for match in _RE_SLOT.finditer(blurb):
        phrase = _RE_PHRASE_END.split(blurb[match.end():], maxsplit=1)[0]
        if len(phrase.split()) > 8 or not (_stems(phrase) & described):
            continue
        verb, article = match.group(1), match.group(2)
        return f"{blurb[:match.start()]}{verb} {name}, {article} {blurb[match.end():]}"
    return blurb


_RE_TITLE_WORD = re.compile(r"[A-Z][a-z]+(?:-[A-Za-z][a-z]*)*")


def _lower_title(text: str, abstract: str) -> str:
    """Title-case words in sentence case, unless the abstract writes them capitalised mid-sentence."""
    def lower(match: re.Match[str]) -> str:
        word = match.group(0)
        if said_mid_sentence(word, abstract):
            return word
        return word.lower()

    return re.sub(r"(?<![\w-])" + _RE_TITLE_WORD.pattern + r"(?![\w-])", lower, text)


def title_lead(title: str, name: str, subject: str, singular: bool, abstract: str) -> str | None:
    """A lead made from a 'NAME: description' title: 'Liu et al. present StyleRec, a benchmark
    dataset for prompt recovery ...', or the description quoted when it is not a noun phrase."""
    if ":" not in title:
        return None
    description = title.split(":", 1)[1].strip().rstrip(".?!")
    if len(description.split()) < 2:
        return None
    verb = "presents" if singular else "present"
    article = re.match(r"(A|An|The)\s+(\S.*)", description)
    if article:
        return (f"{subject} {verb} {name}, {article.group(1).lower()} "
                f"{_lower_title(article.group(2), abstract)}.")
    return f"{subject} {verb} {name} (“{description}”)."
