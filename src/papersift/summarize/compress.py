"""Sentences made shorter as an editor would: section labels, references and asides dropped, long sentences cut at a clause boundary."""

from __future__ import annotations

import re
from functools import lru_cache

from papersift.summarize.text import fold, holds

# A parenthetical that stands apart; "(G)I-DLE" is part of a name and stays.
_RE_PAREN = re.compile(r"\s*\((?:[^()]|\([^()]*\))*\)(?=[\s,.;:!?]|$)")
_RE_USELESS_PAREN = re.compile(
    r"\s*\((?:e\.g\.|i\.e\.|see|cf\.|including|such as|resp\.|respectively|\w+ et al|"
    r"[^()]*\b(?:19|20)\d\d\b)(?:[^()]|\([^()]*\))*\)(?=[\s,.;:!?]|$)", re.I)
_RE_BRACKET_REF = re.compile(r"\s*\[[\d,\s\-–]+\]")
# Clause boundaries where a long sentence can end, strongest first.
_STRONG_CUTS = (
    r", which\b", r", where\b", r", while\b", r", whereas\b", r", thereby\b", r", thus\b",
    r"; ", r", leading to\b", r", resulting in\b", r", allowing\b", r", enabling\b",
    r", making\b", r" — ", r" – ", r" - ", r", so that\b", r", as well as\b", r", without\b",
    r", such that\b", r", including\b", r", e\.g\.", r", i\.e\.", r": ", r", in order to\b",
    r", by\b", r", based on\b", r", with\b", r", and\b", r", but\b", r", since\b",
    r", because\b", r", as\b", r", especially\b", r", particularly\b", r", named\b",
    r", called\b", r", namely\b", r", achieving\b", r", outperforming\b", r", yielding\b",
)
_WEAK_CUTS = (
    r" in order to\b", r" by\b", r" through\b", r" via\b", r" using\b", r" based on\b",
    r" with\b", r" that\b", r" because\b", r" while\b", r" without\b", r" and\b", r", ",
)
_RE_STRONG_CUTS = re.compile("|".join(f"(?:{c})" for c in _STRONG_CUTS))
_RE_WEAK_CUTS = re.compile("|".join(f"(?:{c})" for c in _WEAK_CUTS))
_RE_SUBORDINATE_START = re.compile(
    r"(?:Through|By|With|Using|Via|Despite|Although|Though|While|Whereas|Given|Unlike|Compared|"
    r"To|In order|Based|Building|Leveraging|Inspired|Motivated|Thanks|Because|Since|When|If|"
    r"After|Before|Beyond|Besides|As|Apart|Instead|Rather|Following|Combining|Exploiting)\b")
_RE_MAIN_CLAUSE = re.compile(
    r", (?:they|their|the|this|these|it|its|a|an|[A-Z][\w\-]*|[a-z]+ (?:is|are|was|were|has|have)) [\w\-]+")
_DANGLING_ALTERNATIVES = (
    r"and|or|but|of|for|to|with|by|in|on|at|the|a|an|as|that|which|via|from|"
    r"using|its|their|is|are|was|were|be|this|these|both|such|than|into|while|through|over|"
    r"under|about|across|among|between|without|within|during|toward|towards|against|per|"
    r"like|unlike|including|especially|namely|whose|where|when|whether")
_DANGLING = re.compile(r"(?:\s+(?:" + _DANGLING_ALTERNATIVES + r"))+$", re.I)
_DANGLING_WORDS = frozenset(_DANGLING_ALTERNATIVES.split("|"))


def finish(text: str) -> str:
    text = text.strip().rstrip(",;:–— ")
    # The pattern is tried at every space of the text: only a text whose last word is one
    # of its words (or not plain ASCII, where its case rules are wider) can match.
    last = text.rsplit(None, 1)[-1] if text else ""
    if last and (not last.isascii() or last.lower() in _DANGLING_WORDS):
        text = _DANGLING.sub("", text)
    text = text.rstrip(",;:–— ")
    if text and text[-1] not in ".!?":
        text += "."
    return text


_RE_SECTION_LABEL = re.compile(
    r"^(?:Background|Methods?|Results?|Conclusions?|Objectives?|Purpose|Aims?|Introduction|"
    r"Motivation|Findings|Significance|Context|Design|Setting|Materials and [Mm]ethods|"
    r"Approach|Problem|Contributions?|Summary|Abstract|Goal|Rationale)\s*[:.]\s+(?=\S)")


_RE_SPACE_BEFORE_STOP = re.compile(r"\s+([,.;:])")
# Whether _RE_SPACE_BEFORE_STOP has anything to take: it opens with the stop (what comes
# before it checked by a lookbehind), so it is tried at the few stops, not at every space.
_RE_STOP_AFTER_SPACE = re.compile(r"[,.;:](?<=\s[,.;:])")


# What a match of _RE_USELESS_PAREN holds, lower-cased: its opening words, "et al", or a year.
_USELESS_PAREN_NEEDS = ("(e.g.", "(i.e.", "(see", "(cf.", "(including", "(such as", "(resp",
                        " et al", "19", "20")


def _may_be_useless_paren(sentence: str) -> bool:
    """False when _RE_USELESS_PAREN cannot match (re.I: asked of the folded sentence)."""
    folded = fold(sentence)
    return folded is None or holds(folded, _USELESS_PAREN_NEEDS)


def tidy(sentence: str) -> str:
    """Drop section labels of structured abstracts, citation brackets, and parentheticals that
    only give examples or references."""
    sentence = _RE_SECTION_LABEL.sub("", sentence).replace("et al..", "et al.")
    # Each pattern needs its bracket: most sentences have none to look for.
    if "[" in sentence:
        sentence = _RE_BRACKET_REF.sub("", sentence)
    if "(" in sentence and _may_be_useless_paren(sentence):
        sentence = _RE_USELESS_PAREN.sub("", sentence)
    if _RE_STOP_AFTER_SPACE.search(sentence):
        sentence = _RE_SPACE_BEFORE_STOP.sub(r"\1", sentence)
    return sentence.strip()


# Drafts of one blurb cut the same sentences to the same lengths: the cuts are kept.
@lru_cache(maxsize=8192)
def compress(sentence: str, max_words: int, drop_parentheses: bool = True) -> tuple[str, bool]:
    """The sentence cut to at most `max_words` at a clause boundary; (text, cut cleanly)."""
    if drop_parentheses and "(" in sentence:
        sentence = _RE_PAREN.sub("", sentence)
        sentence = _RE_SPACE_BEFORE_STOP.sub(r"\1", sentence)
    if len(sentence.split()) <= max_words:
        return finish(sentence), True
    subordinate = bool(_RE_SUBORDINATE_START.match(sentence))
    for cuts in (_RE_STRONG_CUTS, _RE_WEAK_CUTS):
        best = None
        for match in cuts.finditer(sentence):
            prefix = sentence[:match.start()]
            n = len(prefix.split())
            if n > max_words:
                break
            # "Through X, Y and Z, they show ...": a cut before the main clause is a fragment.
            if subordinate and not _RE_MAIN_CLAUSE.search(prefix):
                continue
            # "A, B, and C are ...": cutting a list before its last item leaves a fragment.
            if sentence.startswith((", and ", ", or "), match.start()) and "," in prefix and len(
                    prefix.rsplit(",", 1)[1].split()) <= 4:
                continue
            if n >= min(8, max_words // 2):
                best = prefix
        if best:
            return finish(best), True
    cut = " ".join(sentence.split()[:max_words])
    return finish(cut), False
