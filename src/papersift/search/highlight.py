"""Highlighted titles and snippets: the paper's text escaped, the words that matched wrapped in <mark>."""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from collections.abc import Iterable

# Highlighting looks at this much of a text at most: real abstracts are under 4,000
# characters, and one pasted book must not make every search that finds it slow.
WINDOW_CHARS = 20_000


# How a stem matches at a word start (the pattern's three kinds of alternative).
_PREFIX, _I_OR_Y, _WHOLE = "prefix", "i-or-y", "whole"
_WORD_TAIL = re.compile(r"\w*")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _ascii_spans(text: str, rules: list[tuple[str, str]]) -> list[tuple[int, int]]:
    """What Highlighter's pattern finds in an ASCII text, found with str.find: the regex
    tries its alternation at every character (a third of a snippet's time), while each
    stem's few occurrences are found in C. At each word start the first rule that matches
    wins, as in the pattern's alternation; the matches do not overlap, as finditer's."""
    lowered = text.lower()  # ASCII: the same length, and IGNORECASE's matches exactly
    found: dict[int, int] = {}  # start: end, of the first rule (in order) that matched there
    for needle, kind in rules:
        at = lowered.find(needle)
        while at >= 0:
            if at not in found and (at == 0 or lowered[at - 1] not in _WORD_CHARS):
                after = at + len(needle)
                if kind == _PREFIX:
                    found[at] = _WORD_TAIL.match(lowered, after).end()
                elif kind == _I_OR_Y:
                    if after < len(lowered) and lowered[after] in "iy":
                        found[at] = _WORD_TAIL.match(lowered, after + 1).end()
                elif after >= len(lowered) or lowered[after] not in _WORD_CHARS:
                    found[at] = after
            at = lowered.find(needle, at + 1)
    spans, last = [], 0
    for start in sorted(found):
        if start >= last:  # finditer goes on after the previous match
            spans.append((start, found[start]))
            last = found[start]
    return spans


_OTHER = re.compile(r"[^\x00-\x7f]")
_WORD = re.compile(r"\w")


def _ascii_copy(text: str) -> str:
    """The text with each character outside ASCII replaced by "_" if it is a word character
    (so that it joins its word) or else by a space: the same length and word bounds."""
    return _OTHER.sub(lambda m: "_" if _WORD.match(m.group()) else " ", text)


def _non_ascii_words(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word holding a character outside ASCII."""
    spans: list[tuple[int, int]] = []
    for found in _OTHER.finditer(text):
        at = found.start()
        if (spans and at < spans[-1][1]) or not _WORD.match(text, at):
            continue
        start = at
        while start > 0 and _WORD.match(text, start - 1):
            start -= 1
        spans.append((start, _WORD_TAIL.match(text, at).end()))
    return spans


def window(text: str, limit: int = WINDOW_CHARS) -> tuple[str, bool]:
    """(the text's first `limit` characters, cut at a space when one is near; whether cut)."""
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    space = head.rfind(" ", limit - 200)
    return (head[:space] if space > 0 else head), True


def fold(text: str) -> str:
    """Lower case without diacritics, as FTS5's unicode61 tokenizer (remove_diacritics 2) sees it."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class Highlighter:
    """Marks the words of a text that match the query's index terms.

    The terms are porter stems, which are prefixes of the words they come from except where the
    stemmer turned a final y into i ("entropy" -> "entropi"); matching by prefix covers both, and
    a rare extra mark ("gener" in "generous") costs less than a stemmer that disagrees with SQLite's.
    The pattern of every stem's alternative defines the matches; ASCII text is searched stem
    by stem (see _ascii_spans), words outside ASCII alternative by alternative, and the
    whole pattern (a millisecond to compile for a long query) is compiled only when a stem
    is outside ASCII.
    """

    def __init__(self, stems: Iterable[str]) -> None:
        self._alternatives: list[str] = []
        # The same rules for ASCII text without the regex (see _ascii_spans), in its order.
        self._rules: list[tuple[str, str]] | None = []
        for stem in sorted({fold(s) for s in stems if s}, key=len, reverse=True):
            if len(stem) <= 2:
                self._alternatives.append(re.escape(stem) + r"(?!\w)")
                rule = (stem, _WHOLE)
            elif stem.endswith("i"):
                self._alternatives.append(re.escape(stem[:-1]) + r"[iy]\w*")
                rule = (stem[:-1], _I_OR_Y)
            else:
                self._alternatives.append(re.escape(stem) + r"\w*")
                rule = (stem, _PREFIX)
            if self._rules is not None:
                if stem.isascii():
                    self._rules.append(rule)
                else:  # it may match ASCII text under IGNORECASE ("ı" matches "i"): regex
                    self._rules = None
        self._pattern: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str] | None:
        """The one pattern of every stem's alternative (None without stems), compiled when
        first asked for."""
        if self._pattern is None and self._alternatives:
            self._pattern = re.compile(r"(?<!\w)(?:" + "|".join(self._alternatives) + ")",
                                       re.IGNORECASE)
        return self._pattern

    def _matches_word(self, word: str) -> bool:
        """Whether the pattern matches the whole of this (folded) word: whether one of its
        alternatives does (fullmatch backtracks into the alternation)."""
        return any(_alternative(a).fullmatch(word) for a in self._alternatives)

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each matching word, in order. A match is always a whole word."""
        return self._spans_of([text])[0]

    def spans_each(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """The matches in each text's window (window(text)'s text), for mark and snippet."""
        return self._spans_of([window(text)[0] for text in texts])

    def _spans_of(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        """_spans of each text. The texts are searched together, joined by line breaks (no
        match crosses one): a page of hits' titles and abstracts asks str.find for each stem
        once, not once a text (most of those calls find nothing; a third of a page's
        highlighting, more for long questions)."""
        if not self._alternatives:
            return [[] for _ in texts]
        if self._rules is None:
            return [self._pattern_spans(text) for text in texts]
        # Words with accents or in other scripts are folded one by one (keeping the original
        # offsets); the plain ASCII words keep the matches of the ASCII rules, found in a copy
        # where every other character is a stand-in of its kind (a letter for a letter, a
        # space for the rest), so words keep their bounds and a match that takes one in is
        # dropped. The pattern's alternation tried at every character cost ~1 ms an abstract.
        copies = [text if text.isascii() else _ascii_copy(text) for text in texts]
        found = _ascii_spans("\n".join(copies), self._rules)
        each: list[list[tuple[int, int]]] = []
        k = offset = 0
        for text in texts:
            end = offset + len(text)
            spans: list[tuple[int, int]] = []
            while k < len(found) and found[k][0] < end:
                spans.append((found[k][0] - offset, found[k][1] - offset))
                k += 1
            offset = end + 1
            if not text.isascii():  # (isascii is a flag of the string: no scan)
                spans = [(a, b) for a, b in spans if text[a:b].isascii()]
                spans += [span for span in _non_ascii_words(text)
                          if self._matches_word(fold(text[span[0]:span[1]]))]
                spans.sort()
            each.append(spans)
        return each

    def _pattern_spans(self, text: str) -> list[tuple[int, int]]:
        """_spans by the whole pattern (a stem outside ASCII may match ASCII text)."""
        if text.isascii():
            return [m.span() for m in self.pattern.finditer(text)]
        spans = [m.span() for m in self.pattern.finditer(text)
                 if text[m.start():m.end()].isascii()]
        spans += [span for span in _non_ascii_words(text)
                  if self.pattern.fullmatch(fold(text[span[0]:span[1]]))]
        return sorted(spans)

    def mark(self, text: str, spans: list[tuple[int, int]] | None = None) -> str:
        """The text as safe HTML with matches marked (its first WINDOW_CHARS, then '…');
        `spans`: the matches, when the caller has already found them in this text."""
        text, cut = window(text)
        if spans is None:
            spans = self._spans(text)
        return _marked(text, spans) + ("…" if cut else "")

    def snippet(self, text: str, words: int = 40, spaced: bool = False,
                spans: list[tuple[int, int]] | None = None) -> tuple[str, str]:
        """(plain, html) of the `words`-word window with the most matches, with ellipses;
        only the text's first WINDOW_CHARS are searched for it. `spaced`: the text has one
        space between words and none at either end (readable's), so need not be made so.
        `spans`: the matches in a spaced text's window, when the caller has found them."""
        text, cut = window(text)
        if not self._alternatives:
            return self._lead(text, words, cut)
        # Whitespace collapsed: one space between words.
        collapsed = text if spaced else " ".join(text.split())
        if spans is None or not spaced:
            spans = self._spans(collapsed)  # found once: the window's marks are a slice of them
        if not spans:
            return self._lead(text, words, cut)
        text = collapsed
        total = text.count(" ") + 1  # words
        if total <= words:
            tail = "…" if cut else ""
            return text + tail, _marked(text, spans) + tail
        # Word indices that hold a match (a match starts a word: its index is the number of
        # spaces before it), each with the first match in it; the best window starts at one
        # of them (or at 0).
        marked: list[int] = []
        starts: list[int] = []
        index = previous = 0
        for start, _ in spans:
            index += text.count(" ", previous, start)
            previous = start
            if not marked or marked[-1] != index:
                marked.append(index)
                starts.append(start)
        best = bisect.bisect_left(marked, words)  # matches in the opening window
        best_at = -1  # which marked word opens the best window (-1: the text's first word)
        for i, first in enumerate(marked):
            count = bisect.bisect_left(marked, first + words, i) - i
            if count > best:
                best, best_at = count, i
        if best_at < 0:
            begin = 0
        elif marked[best_at] <= total - words:  # the word of that match
            begin = text.rfind(" ", 0, starts[best_at]) + 1
        else:  # the last `words` words
            begin = len(text.rsplit(" ", words)[0]) + 1
        rest = text[begin:].split(" ", words)
        end = len(text) if len(rest) <= words else len(text) - len(rest[-1])
        piece = text[begin:end].rstrip()
        stop = begin + len(piece)
        first_in = bisect.bisect_left(spans, (begin, -1))
        inside = [(a - begin, b - begin) for a, b in spans[first_in:] if b <= stop]
        prefix = "…" if begin > 0 else ""
        suffix = "…" if end < len(text) or cut else ""
        return (prefix + piece + suffix,
                html.escape(prefix) + _marked(piece, inside) + html.escape(suffix))

    @staticmethod
    def _lead(text: str, words: int, cut: bool = False) -> tuple[str, str]:
        """The opening words, without scanning the whole abstract (nothing to mark in it)."""
        head = text[:words * 25]
        tokens = head.split()
        clipped = len(tokens) > words or len(head) < len(text) or cut
        plain = " ".join(tokens[:words]) + ("…" if clipped else "")
        return plain, html.escape(plain)


# Each alternative's own pattern (for words outside ASCII), shared by every query.
_ALTERNATIVES: dict[str, re.Pattern[str]] = {}
_ALTERNATIVES_MAX = 20_000


def _alternative(source: str) -> re.Pattern[str]:
    found = _ALTERNATIVES.get(source)
    if found is None:
        if len(_ALTERNATIVES) >= _ALTERNATIVES_MAX:
            _ALTERNATIVES.clear()
        found = _ALTERNATIVES[source] = re.compile(source, re.IGNORECASE)
    return found


_OPEN, _CLOSE = "\x01", "\x02"  # stand-ins for <mark> and </mark> while escaping


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """The text as safe HTML with these spans in <mark>: escaped in one go, the marks put in
    as stand-ins first (when the text holds none of them)."""
    if not spans:
        return html.escape(text)
    if not ("&" in text or "<" in text or ">" in text or '"' in text or "'" in text):
        out, last = [], 0
        for start, end in spans:
            out += (text[last:start], "<mark>", text[start:end], "</mark>")
            last = end
        out.append(text[last:])
        return "".join(out)
    if _OPEN not in text and _CLOSE not in text:
        out, last = [], 0
        for start, end in spans:
            out += (text[last:start], _OPEN, text[start:end], _CLOSE)
            last = end
        out.append(text[last:])
        return (html.escape("".join(out)).replace(_OPEN, "<mark>")
                .replace(_CLOSE, "</mark>"))
    out, last = [], 0
    for start, end in spans:
        out.append(html.escape(text[last:start]))
        out.append("<mark>" + html.escape(text[start:end]) + "</mark>")
        last = end
    out.append(html.escape(text[last:]))
    return "".join(out)
