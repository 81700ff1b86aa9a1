"""Text of arXiv abstracts split for the writers: sentences and words (the LaTeX cleaner is papersift.latex)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from papersift.latex import clean_latex

__all__ = ["Caseless", "clean_latex", "fold", "holds", "split_sentences", "tokens", "words"]


# ------------------------------------------------------------------ caseless search
# The only characters that match an ASCII letter under re.IGNORECASE and are not that letter
# lower-cased ('İ', 'ı', 'ſ' and the Kelvin sign); every other character keeps its length,
# and whether it is a word, space or digit character, when lower-cased (checked over all of
# Unicode when this was written).
_CASE_EXOTIC = ("\u0130", "\u0131", "\u017f", "\u212a")


def holds(text: str, pieces: tuple[str, ...]) -> bool:
    """any(piece in text for piece in pieces), without a generator: the writer asks this of
    every sentence, for a dozen tuples of pieces."""
    for piece in pieces:  # noqa: SIM110 (a loop: no generator a call)
        if piece in text:
            return True
    return False


def said_mid_sentence(word: str, text: str) -> bool:
    """Whether `word` (a word opening and ending with a letter) is in the text as a word of its
    own where no sentence starts: what re.search(rf"(?<![.!?:] )(?<!^)\\b{word}\\b", text)
    finds, without a pattern compiled for each word (re's word characters are str.isalnum's
    and "_")."""
    end = len(word)
    at = text.find(word, 1)
    while at > 0:
        before, after = text[at - 1], text[at + end:at + end + 1]
        if not (before.isalnum() or before == "_") and not (
                before == " " and at >= 2 and text[at - 2] in ".!?:") and not (
                after.isalnum() or after == "_"):
            return True
        at = text.find(word, at + 1)
    return False


def fold(text: str) -> str | None:
    """The text lower-cased, in which a Caseless pattern finds what its re.IGNORECASE form
    finds in the text, at the same places; None for a text where it might not."""
    if not text.isascii() and any(ch in text for ch in _CASE_EXOTIC):
        return None
    return text.lower()


class Caseless:
    """A case-insensitive pattern searched for, in lower case, in the lower-cased text without
    re.IGNORECASE: with it, the engine tries every alternative at every position (3-5x
    slower on the writer's patterns). Matches are on the folded text: their places and truth
    hold for the text, their letters are lower case (take what was written by its places)."""

    __slots__ = ("exact", "lower", "needs")

    def __init__(self, source: str, flags: int = 0, needs: tuple[str, ...] = ()) -> None:
        """`needs`: lower-case words one of which every match contains (none: not known);
        a folded text with none of them is not searched."""
        # ASCII, and no escape a lower case would change (\S, \W, \D, \B, \A, \Z): under
        # re.IGNORECASE its letters' case says nothing, so it may be written in lower case.
        if not source.isascii() or _RE_UPPER_ESCAPE.search(source):
            raise ValueError("a Caseless pattern is ASCII without upper-case escapes")
        self.exact = re.compile(source, flags | re.IGNORECASE)
        self.lower = re.compile(source.lower(), flags)
        self.needs = needs

    def search(self, text: str, folded: str | None) -> re.Match[str] | None:
        """Search `text`, given `folded` = fold(text)."""
        if folded is None:
            return self.exact.search(text)
        if self.needs:
            # A loop, not any() over a generator: this runs a dozen times a sentence.
            for word in self.needs:
                if word in folded:
                    break
            else:
                return None
        return self.lower.search(folded)

    def finditer(self, text: str, folded: str | None) -> Iterator[re.Match[str]]:
        """The matches in `text`, given `folded` = fold(text)."""
        return self.lower.finditer(folded) if folded is not None else self.exact.finditer(text)


_RE_UPPER_ESCAPE = re.compile(r"\\[A-Z]|\(\?P<\w*[A-Z]")


# ------------------------------------------------------------------ sentences

_ABBREVIATIONS = {
    "e.g", "i.e", "et al", "al", "fig", "figs", "eq", "eqs", "eqn", "sec", "secs", "tab",
    "vs", "cf", "approx", "resp", "dr", "mr", "mrs", "ms", "prof", "no", "nos", "vol", "pp",
    "ref", "refs", "ch", "chap", "inc", "ltd", "co", "corp", "jr", "sr", "st", "univ", "ca",
    "thm", "lem", "def", "prop", "cor", "alg", "app", "appx", "est", "incl", "avg", "w.r.t",
    "a.k.a", "u.s", "u.k", "e.u", "viz", "ph.d", "b.sc", "m.sc", "dept", "sect", "max", "min", "nat", "proc", "conf", "mt", "op", "ed", "eds", "ver", "cit", "para",
    "vert", "ex", "rev", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
}
# A boundary candidate: sentence-final punctuation, optional closers, whitespace, then a start.
_RE_BOUNDARY = re.compile(
    r"([.!?…])([\"”’')\]]*)\s+(?=[\"“‘(\[]?[A-Z0-9ΑΒΓΔΘΛΞΠΣΦΨΩ]|\((?:[ivx]{1,4}|[a-h])\)\s)")
_RE_STARTER = re.compile(r"(?:The|This|These|We|Our|It|In|Such|Both|Their|However|Moreover)\b")
_RE_LAST_TOKEN = re.compile(r"(?:^|\s)[(\[\"“']*([^\s(\[\"“']+)$")


# A run-on: a new sentence that starts like a contribution without a full stop before it.
# (The space comes first and the lookbehind after it: a pattern that opens with a lookbehind
# is tried at every position of the text.)
_RE_RUN_ON = re.compile(
    r" (?<=[a-z0-9)] )(?=(?:To (?:address|tackle|solve|overcome|bridge|fill) (?:this|these|the)|"
    r"In this (?:paper|work|study|article)|Here,? we|We (?:propose|present|introduce|develop)|"
    r"This (?:paper|work) (?:proposes|presents|introduces))\b)")


def split_sentences(text: str) -> list[str]:
    """Sentences of cleaned text, robust to abbreviations, 'et al.', decimals, initials and 'Fig. 3'."""
    return list(_split_sentences(text))


# The writer splits a text more than once (a TL;DR by the gate and by the house style; a
# blurb named after the title by the sub-editor and by the gate): the split is kept.
@lru_cache(maxsize=4096)
def _split_sentences(text: str) -> tuple[str, ...]:
    text = text.strip()
    if not text:
        return ()
    if " To " in text or " In this " in text or " We " in text or " Here" in text or " This " in text:
        return tuple(piece for part in _RE_RUN_ON.split(text) for piece in _split(part))
    return tuple(_split(text))


def _split(text: str) -> list[str]:
    sentences, start = [], 0
    for match in _RE_BOUNDARY.finditer(text):
        end = match.end(2)
        if match.group(1) == ".":
            before = text[start:match.start(1)]
            et_al = before.endswith(("et al", "et. al"))
            if before.endswith(".") or (
                    et_al and _RE_STARTER.match(text[match.end():match.end() + 12])):
                # "et al.. A new", "by Smith et al. The results": the abbreviation ends a sentence.
                sentence = text[start:end].strip()
                if sentence:
                    sentences.append(sentence)
                start = match.end()
                continue
            token = _last_token(before)
            lowered = token.lower()
            # Acronyms ("CF", "NO") end sentences; only their lower/title-case forms abbreviate.
            abbreviation = not token.isupper() and (
                lowered in _ABBREVIATIONS or lowered.rstrip(".") in _ABBREVIATIONS)
            # "No. 5" abbreviates; "... says no. It" ends a sentence.
            if abbreviation and not (lowered == "no" and not text[match.end()].isdigit()):
                continue
            if et_al:
                continue
            # Initials ("J. Smith", "A. B. Jones") and dotted acronyms ("U.S.").
            if len(token) == 1 and token.isupper():
                continue
            if "." in token and len(token) <= 6 and token.replace(".", "").isalpha():
                continue
            # "Fig. 3", "No. 5": a digit after a short capitalised word is a reference, not a start.
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return _merge_fragments(sentences)


_OPENERS = "([\"“'"


def _last_token(before: str) -> str:
    """The word before a full stop, as _RE_LAST_TOKEN finds it (openers dropped; none when
    the last word has one inside), without a search over the whole text before every stop."""
    if not before or before[-1].isspace():
        # Only the pattern knows its end-of-line rules: "x\n" ends a word, "x " does not.
        match = _RE_LAST_TOKEN.search(before)
        return match.group(1) if match else ""
    # str.split's whitespace is the pattern's \s: its one match starts at the last space.
    word = before.rsplit(None, 1)[-1].lstrip(_OPENERS)
    if word.isalnum():
        return word  # most words: no opener in them (none is a letter or digit)
    return word if word and not any(opener in word for opener in _OPENERS) else ""


def _merge_fragments(sentences: list[str]) -> list[str]:
    """Glue pieces too short to be sentences (e.g. '(ii)' or '1.') to their neighbour."""
    merged: list[str] = []
    for sentence in sentences:
        if merged and (len(sentence) < 8 or len(merged[-1]) < 8):
            merged[-1] = merged[-1] + " " + sentence
        else:
            merged.append(sentence)
    return merged


# ----------------------------------------------------------------------- words

_RE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']*")


def words(text: str) -> list[str]:
    """The words of a text, as a reader counts them (numbers count, punctuation does not)."""
    return text.split()


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens, for overlap scores."""
    return [t.lower() for t in _RE_WORD.findall(text)]
