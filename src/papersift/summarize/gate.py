"""The faithfulness gate every summary passes: numbers and names from the source, third person, lengths."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from papersift.summarize.authors import author_naming
from papersift.summarize.text import clean_latex, fold, split_sentences

TLDR_MAX_WORDS = 30
TLDR_MIN_WORDS = 4
BLURB_MAX_WORDS = 90
BLURB_MIN_WORDS = 40
BLURB_MAX_SENTENCES = 3

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉", "01234567890123456789")
# It opens with its first digit (what comes before that digit checked by a lookbehind after
# it): a pattern that opens with a lookbehind or lookahead is tried at every position, one
# that opens with a digit only where there is one (2x faster). It reads:
# (?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?
_RE_NUMBER = re.compile(r"(\d(?<![\d.,]\d)(?:\d{0,2}(?:,\d{3})+|\d*))(?:\.(\d+))?")
_RE_SCRIPT_DIGITS = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉]+")
_SPELLED = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
    "thousand": "1000", "million": "1000000", "billion": "1000000000", "half": "50",
    "single": "1", "twice": "2", "double": "2", "triple": "3", "dozen": "12", "first": "1",
    "second": "2", "third": "3", "fourth": "4", "fifth": "5", "once": "1", "percent": "100",
}
_RE_PIECE = re.compile(r"[A-Za-z0-9\u00C0-\u024F][A-Za-z0-9\u00C0-\u024F'’.+]*")
# _RE_PIECE's matches with their trailing dots, quotes and pluses dropped, as found: each ends
# on its last letter or digit (what follows it cannot open a piece).
_RE_TRIMMED_PIECE = re.compile(
    r"[A-Za-z0-9\u00C0-\u024F](?:[A-Za-z0-9\u00C0-\u024F'’.+]*[A-Za-z0-9\u00C0-\u024F])?")
_RE_NAME_LIKE = re.compile(r"[A-Z].*[A-Z]|[a-z][A-Z]|[A-Z].*\d|\d.*[A-Z]")
# Generic abbreviations a reporter may use without the abstract spelling them out.
_GENERIC_NAMES = frozenset(
    ["ai", "ml", "nlp", "llm", "llms", "gpu", "gpus", "cpu", "cpus", "api", "apis", "2d", "3d", "4d", "us", "uk", "eu", "phd", "tl;dr", "dr", "tldr"])
# "WE-FPN", "Instruct Me More", "US", "mine information" are names and verbs, not the authors.
# Both open with the letter every match starts with (what comes before it and the letter
# itself checked by lookbehinds after it): a pattern that opens with a word boundary or a
# lookbehind is tried, alternative by alternative, at every position of the text. The first
# reads: \b(?:[Ww]e|[Oo]urs?|[Oo]urselves|[Mm]y|[Mm]yself|us|me)\b(?![-’'][A-Za-z]) or
# (?:^|(?<=[.!?] ))(?:Us|Me)\b, at 2.5x the speed.
_RE_FIRST_PERSON = re.compile(
    r"[WwOoMmuU](?<=\b[WwOoMmuU])(?:(?<=[Ww])e|(?<=[Oo])urs?|(?<=[Oo])urselves|(?<=[Mm])y|"
    r"(?<=[Mm])yself|(?<=u)s|(?<=m)e)\b(?![-’'][A-Za-z])|"
    r"[UM](?:(?<=^[UM])|(?<=[.!?] [UM]))(?:(?<=U)s|(?<=M)e)\b")
_RE_I = re.compile(
    r"(?=I)(?<!Type )(?<!Phase )(?<!Class )(?<!Level )(?<!Stage )(?<!Part )(?<!Section )(?<!Tier )"
    r"(?<!Category )(?<!Case )(?<!Step )(?<!Study )(?<!Table )(?<!Chapter )(?<!Figure )"
    r"(?<!Appendix )(?<!Experiment )(?<!Model )(?<!Task )(?<!Setting )(?<!Problem )"
    r"(?:^|(?<=\s))I(?=\s+(?:[a-z]|am\b|have\b))"
)
_RE_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|‘[^’]*’")
_RE_LATEX = re.compile(r"\\[A-Za-z]+|\$[^$\s][^$]*\$|\\[\[\(]")
_HYPE = frozenset(
    ["groundbreaking", "ground-breaking", "revolutionary", "revolutionize", "revolutionizes", "revolutionise", "breakthrough", "breakthroughs", "unprecedented", "remarkable", "remarkably", "stunning", "astonishing", "game-changing", "game-changer", "paradigm-shifting", "incredible", "incredibly", "amazing", "amazingly", "spectacular", "extraordinary", "dramatic", "dramatically", "transformative", "landmark", "unparalleled", "unmatched", "cutting-edge", "best-ever", "world-class", "historic", "miraculous", "staggering", "mind-blowing", "first-ever", "superb", "outstanding", "phenomenal"])
_RE_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*")


@dataclass(frozen=True, slots=True)
class GateSource:
    """What a summary may draw on: the cleaned title and abstract, and the author naming."""

    text: str
    numbers: frozenset[str]
    names: frozenset[str]
    words: frozenset[str]
    abstract_words: int
    abstract_sentences: int
    naming: str


def _canonical_number(integer: str, decimal: str | None) -> str:
    integer = integer.replace(",", "").lstrip("0") or "0"
    decimal = (decimal or "").rstrip("0")
    return f"{integer}.{decimal}" if decimal else integer


def numbers_in(text: str) -> set[str]:
    """Canonical numbers of a text: '1,000' and '1000' -> '1000'; '45.70' -> '45.7'; '10⁵' -> 10, 5."""
    if not text.isascii():  # superscript and subscript digits are not ASCII
        text = _RE_SCRIPT_DIGITS.sub(lambda m: " " + m.group(0).translate(_SUPERSCRIPTS) + " ",
                                     text)
    # Each number as written once: most repeat, and most are written canonically already.
    return {_canonical_number(integer, decimal) for integer, decimal in set(_RE_NUMBER.findall(text))}


def _pieces(text: str) -> list[str]:
    """Words split at hyphens and slashes, trailing dots dropped: 'GPT-4o-based' -> GPT, 4o, based."""
    # A piece opens with a letter or digit: only its end can lose dots, and it is never empty.
    return _RE_TRIMMED_PIECE.findall(text.replace("-", " ").replace("/", " ").replace("_", " "))


# Characters whose lower case is a piece character when they are not, or the other way round
# (checked over all of Unicode, fold()'s exotic four aside): in a folded text without them the
# pieces are the text's pieces lower-cased, at the same places.
_RE_PIECE_CASE_CHANGE = re.compile(
    "[\u0181\u0186\u0189\u018a\u018f\u0190\u0193\u0194\u0196\u0197\u019c\u019d"
    "\u019f\u01a6\u01a9\u01ae\u01b1\u01b2\u01b7\u023a\u023e\u0244\u0245\u1e9e"
    "\u212b\u2c7e\u2c7f]")


def _lowered_pieces(text: str) -> set[str]:
    """{p.lower() for p in _pieces(text)}, each piece lower-cased and stripped once."""
    folded = fold(text)
    if folded is not None and (folded.isascii() or not _RE_PIECE_CASE_CHANGE.search(text)):
        return set(_pieces(folded))
    return {p.lower() for p in _pieces(text)}


def name_like(piece: str) -> bool:
    """A method, dataset or model name: internal capitals, capitals with digits, acronyms."""
    # Every branch needs an ASCII capital: a word the same in lower case is no name.
    return piece != piece.lower() and bool(_RE_NAME_LIKE.search(piece))


def build_source(paper: dict[str, Any], naming: str = "",
                 abstract_sentences: int | None = None) -> GateSource:
    """The gate's view of a paper; `abstract_sentences` when the caller has counted them."""
    title = clean_latex(paper.get("title") or "")
    abstract = clean_latex(paper.get("abstract") or "")
    text = f"{title}\n{abstract}"
    # Pieces never hold a space: those of the parts joined are those of each part.
    names = _lowered_pieces(" ".join([text, *(clean_latex(author)
                                              for author in paper.get("authors") or []), naming]))
    numbers = numbers_in(text)
    folded = fold(text)  # the same words, lower-cased (text.fold)
    lowered_words = (set(_RE_WORD.findall(folded)) if folded is not None
                     else {w.lower() for w in _RE_WORD.findall(text)})
    numbers.update(value for word, value in _SPELLED.items() if word in lowered_words)
    return GateSource(
        text=text, numbers=frozenset(numbers), names=frozenset(names),
        words=frozenset(lowered_words), abstract_words=len(abstract.split()),
        abstract_sentences=(len(split_sentences(abstract)) if abstract_sentences is None
                            else abstract_sentences), naming=naming,
    )


def _known_name(piece: str, names: frozenset[str]) -> bool:
    lowered = piece.lower()
    if lowered in names or lowered in _GENERIC_NAMES:
        return True
    if lowered.endswith("s") and lowered[:-1] in names:
        return True
    return lowered + "s" in names


def first_person(text: str) -> list[str]:
    """First-person words outside quotations."""
    unquoted = _RE_QUOTED.sub(" ", text)
    found = [m.group(0) for m in _RE_FIRST_PERSON.finditer(unquoted)]
    if "I" in unquoted:
        found += [m.group(0) for m in _RE_I.finditer(unquoted)]
    return found


# What first_person finds, lower-cased. Each match is a whole run of word characters, all
# ASCII letters, with no letter beside it (a quotation taken out leaves a quotation mark
# there): in a text's _RE_WORD words it is a word, or a part of one between hyphens.
_FIRST_PERSON_WORDS = frozenset(
    ["we", "our", "ours", "ourselves", "my", "myself", "us", "me", "i"])


def _may_speak_first(words: set[str]) -> bool:
    """False when first_person finds nothing in the text of these lower-cased _RE_WORD words."""
    if not _FIRST_PERSON_WORDS.isdisjoint(words):
        return True
    for word in words:
        if "-" in word and not _FIRST_PERSON_WORDS.isdisjoint(word.split("-")):
            return True
    return False


def _check_text(label: str, text: str, source: GateSource) -> list[str]:
    reasons = []
    invented = sorted(numbers_in(text) - source.numbers, key=lambda n: (len(n), n))
    if invented:
        reasons.append(f"{label}: number not in the abstract: {', '.join(invented[:5])}")
    # (A piece all in lower case has no ASCII capital, which name_like needs: most pieces.)
    # Most capitalised pieces are the abstract's own: the set is asked before the pattern.
    foreign = [p for p in dict.fromkeys(_pieces(text))
               if not p.islower() and not _known_name(p, source.names) and name_like(p)]
    if foreign:
        reasons.append(f"{label}: name not in the abstract: {', '.join(foreign[:5])}")
    folded = fold(text)  # the same words, lower-cased (text.fold)
    words = (set(_RE_WORD.findall(folded)) if folded is not None
             else {w.lower() for w in _RE_WORD.findall(text)})
    persons = first_person(text) if _may_speak_first(words) else []
    if persons:
        reasons.append(f"{label}: first person: {', '.join(dict.fromkeys(persons))}")
    hype = sorted(words & _HYPE - source.words)
    if hype:
        reasons.append(f"{label}: hype word not in the abstract: {', '.join(hype)}")
    if _RE_LATEX.search(text):
        reasons.append(f"{label}: LaTeX left in the text")
    return reasons


def blurb_min_words(source: GateSource) -> int:
    """40 words, or fewer for an abstract too short to say 40 words about."""
    return min(BLURB_MIN_WORDS, max(10, int(source.abstract_words * 0.6)))


def check_tldr(tldr: str, source: GateSource) -> list[str]:
    """Reasons a TL;DR fails: faithfulness, person, one sentence of 4-30 words."""
    tldr = (tldr or "").strip()
    if not tldr:
        return ["tldr: empty"]
    reasons = _check_text("tldr", tldr, source)
    n_words = len(tldr.split())
    if n_words > TLDR_MAX_WORDS or n_words < TLDR_MIN_WORDS:
        reasons.append(f"tldr: {n_words} words (allowed {TLDR_MIN_WORDS}-{TLDR_MAX_WORDS})")
    n_sentences = len(split_sentences(tldr))
    if n_sentences != 1:
        reasons.append(f"tldr: {n_sentences} sentences (allowed 1)")
    return reasons


def check_blurb(blurb: str, source: GateSource) -> list[str]:
    """Reasons a blurb fails: faithfulness, person, 2-3 sentences of 40-90 words, opens with authors."""
    blurb = (blurb or "").strip()
    if not blurb:
        return ["blurb: empty"]
    reasons = _check_text("blurb", blurb, source)
    n_words = len(blurb.split())
    low = blurb_min_words(source)
    if n_words > BLURB_MAX_WORDS or n_words < low:
        reasons.append(f"blurb: {n_words} words (allowed {low}-{BLURB_MAX_WORDS})")
    n_sentences = len(split_sentences(blurb))
    min_sentences = min(2, max(1, source.abstract_sentences))
    if not min_sentences <= n_sentences <= BLURB_MAX_SENTENCES:
        reasons.append(f"blurb: {n_sentences} sentences (allowed {min_sentences}-"
                       f"{BLURB_MAX_SENTENCES})")
    if source.naming and not (blurb.startswith(source.naming) or blurb.startswith("The authors")):
        reasons.append(f"blurb: does not open with the authors ({source.naming!r})")
    return reasons


def check(
    tldr: str, blurb: str, paper: dict[str, Any] | None = None, *,
    source: GateSource | None = None, naming: str | None = None,
) -> list[str]:
    """Reasons this TL;DR and blurb fail the gate for this paper; empty when they pass.

    Give `paper` (title, abstract, authors) or a prebuilt `source`. `naming` is how the blurb
    must open (default: the authors named as the built-in writer names them).
    """
    if source is None:
        if paper is None:
            raise ValueError("check() needs a paper or a source")
        source = source_for(paper, naming)
    return check_tldr(tldr, source) + check_blurb(blurb, source)


def source_for(paper: dict[str, Any], naming: str | None = None) -> GateSource:
    """The gate's view of a paper; the naming defaults to the built-in writer's."""
    if naming is None:
        naming = author_naming(paper.get("authors") or [])[0]
    return build_source(paper, naming)
