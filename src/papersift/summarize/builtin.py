"""The built-in writer: offline, deterministic extractive TL;DR and blurb from title and abstract."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from papersift.summarize import gate, roles
from papersift.summarize.authors import author_naming
from papersift.summarize.gate import BLURB_MAX_WORDS, TLDR_MAX_WORDS
from papersift.summarize.person import starts_with_subject, strip_openers, to_third_person
from papersift.summarize.text import clean_latex, split_sentences

# Bump when the output for the same input may change: stored summaries then become stale.
WRITER_VERSION = "builtin-1"

TLDR_BACKGROUND_MARGIN = 1.0  # i.e. always, when the abstract has a contribution sentence


@dataclass(frozen=True, slots=True)
class Summary:
    """What a writer produces for one paper."""

    tldr: str
    blurb: str


# --------------------------------------------------------------- compression

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
_DANGLING = re.compile(
    r"(?:\s+(?:and|or|but|of|for|to|with|by|in|on|at|the|a|an|as|that|which|via|from|"
    r"using|its|their|is|are|was|were|be|this|these|both|such|than|into|while))+$", re.I)


def _finish(text: str) -> str:
    text = text.strip().rstrip(",;:–— ")
    text = _DANGLING.sub("", text).rstrip(",;:–— ")
    if text and text[-1] not in ".!?":
        text += "."
    return text


_RE_SECTION_LABEL = re.compile(
    r"^(?:Background|Methods?|Results?|Conclusions?|Objectives?|Purpose|Aims?|Introduction|"
    r"Motivation|Findings|Significance|Context|Design|Setting|Materials and [Mm]ethods|"
    r"Approach|Problem|Contributions?|Summary|Abstract|Goal|Rationale)\s*[:.]\s+(?=\S)")


def tidy(sentence: str) -> str:
    """Drop section labels of structured abstracts, citation brackets, and parentheticals that
    only give examples or references."""
    sentence = _RE_SECTION_LABEL.sub("", sentence).replace("et al..", "et al.")
    sentence = _RE_BRACKET_REF.sub("", sentence)
    sentence = _RE_USELESS_PAREN.sub("", sentence)
    return re.sub(r"\s+([,.;:])", r"\1", sentence).strip()


def compress(sentence: str, max_words: int, drop_parentheses: bool = True) -> tuple[str, bool]:
    """The sentence cut to at most `max_words` at a clause boundary; (text, cut cleanly)."""
    if drop_parentheses:
        sentence = _RE_PAREN.sub("", sentence)
        sentence = re.sub(r"\s+([,.;:])", r"\1", sentence)
    if len(sentence.split()) <= max_words:
        return _finish(sentence), True
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
            return _finish(best), True
    cut = " ".join(sentence.split()[:max_words])
    return _finish(cut), False


# -------------------------------------------------------------------- writer

_COMMON_STARTS = frozenset(
    ["the", "this", "these", "those", "a", "an", "in", "on", "for", "to", "with", "by", "our", "such", "most", "many", "existing", "recent", "large", "current", "although", "while", "when", "it", "its", "there", "each", "all", "both", "one", "two", "however", "we", "as", "at", "from", "given", "despite", "unlike", "using", "since", "because", "if", "our", "however,", "experiments", "experimental", "results", "extensive", "empirical", "evaluations", "numerical", "theoretical", "finally", "moreover"])


def _decapitalise(sentence: str, abstract: str) -> str:
    """Lower-case the first word when it is an ordinary word, not a name or acronym."""
    first = sentence.split(" ", 1)[0]
    bare = first.strip(",;:")
    if not re.fullmatch(r"[A-Z][a-z]+", bare):
        return sentence
    lowered = bare.lower()
    if lowered in _COMMON_STARTS or re.search(rf"(?<![.!?] )\b{lowered}\b", abstract):
        return sentence[0].lower() + sentence[1:]
    return sentence


def _report_verb(singular: bool) -> str:
    return "reports" if singular else "report"


def _lead_sentence(sentence: str, subject: str, singular: bool, abstract: str) -> str:
    """A sentence that opens with the authors' naming."""
    stripped = strip_openers(sentence)
    if starts_with_subject(stripped):
        return to_third_person(stripped, subject, singular)
    body = to_third_person(stripped, "they", False)
    return f"{subject} {_report_verb(singular)} that {_decapitalise(body, abstract)}"


def _later_sentence(sentence: str, subject: str, singular: bool) -> str:
    pronoun_subject = subject if singular else "They"
    return to_third_person(sentence, pronoun_subject, singular)


@dataclass(slots=True)
class _Prepared:
    title: str
    abstract: str
    sentences: list[roles.Sentence]


def prepare(paper: dict[str, Any]) -> _Prepared:
    title = clean_latex(paper.get("title") or "")
    abstract = clean_latex(paper.get("abstract") or "")
    texts = [tidy(s) for s in split_sentences(abstract)]
    texts = [t for t in texts if t]
    return _Prepared(title, abstract, roles.analyse(texts, title))


def _tldr_candidates(prepared: _Prepared, subject: str, singular: bool) -> Iterator[str]:
    """TL;DRs best first: the top sentences compressed to 30 words, then a title-based fallback."""
    ranked = sorted(prepared.sentences, key=lambda s: (-s.score, s.index))
    if ranked and ranked[0].role == roles.BACKGROUND:
        # A TL;DR says what the paper does: a contribution close behind beats background.
        contribution = next((s for s in ranked if s.role == roles.CONTRIBUTION), None)
        if contribution is not None and contribution.score >= ranked[0].score - TLDR_BACKGROUND_MARGIN:
            ranked.remove(contribution)
            ranked.insert(0, contribution)
    unclean = []
    for sentence in ranked[:4]:
        # Unlike the blurb, the TL;DR need not open with the authors: a finding can stand alone.
        rewritten = to_third_person(strip_openers(sentence.text), subject, singular)
        text, clean = compress(rewritten, TLDR_MAX_WORDS)
        if clean:
            yield text
        else:
            unclean.append(text)
    yield from unclean
    for sentence in ranked[:4]:
        yield compress(_lead_sentence(sentence.text, subject, singular, prepared.abstract),
                       TLDR_MAX_WORDS)[0]
    if prepared.title:
        title = " ".join(prepared.title.rstrip(".").split()[:TLDR_MAX_WORDS - 6])
        yield f"{subject} {'writes' if singular else 'write'} about “{title}”."


def _pick(sentences: list[roles.Sentence], role: str, exclude: set[int]) -> roles.Sentence | None:
    pool = [s for s in sentences if s.role == role and s.index not in exclude and s.words >= 5]
    return max(pool, key=lambda s: (s.score, -s.index)) if pool else None


def _story(sentences: list[roles.Sentence]
           ) -> tuple[roles.Sentence, roles.Sentence | None, roles.Sentence | None, set[int]]:
    """(lead: who did what, result: the headline finding, middle: how, indexes used)."""
    lead = _pick(sentences, roles.CONTRIBUTION, set()) or max(
        sentences, key=lambda s: (s.score, -s.index))
    used = {lead.index}
    results = [s for s in sentences if s.role == roles.RESULT and s.index not in used]
    with_number = [s for s in results if s.has_result_number]
    result = (max(with_number, key=lambda s: (s.score, s.index)) if with_number else
              max(results, key=lambda s: (s.index, s.score)) if results else None)
    if result is None:
        later = [s for s in sentences if s.index > lead.index]
        result = later[-1] if later else None
    if result is not None:
        used.add(result.index)
    # The middle sentence explains how; background before the lead would break the story.
    after_lead = [s for s in sentences if lead.index < s.index and (
        result is None or s.index < result.index)]
    middle = (_pick(after_lead, roles.METHOD, used) or _pick(after_lead, roles.CONTRIBUTION, used)
              or _pick(after_lead, roles.OTHER, used) or _pick(after_lead, roles.RESULT, used))
    return lead, result, middle, used


def _blurb_candidates(prepared: _Prepared, subject: str, singular: bool) -> Iterator[str]:
    """Blurbs best first: lead (who did what), how, and the headline result; then longer variants."""
    sentences = [s for s in prepared.sentences if s.words >= 4]
    if not sentences:
        if prepared.title:
            yield f"{subject} {'writes' if singular else 'write'} about “{prepared.title.rstrip('.')}”."
        return
    lead, result, middle, used = _story(sentences)

    first = _lead_sentence(lead.text, subject, singular, prepared.abstract)
    last = _later_sentence(result.text, subject, singular) if result else None
    mid = _later_sentence(middle.text, subject, singular) if middle else None
    yield _fit(first, mid, last)
    # Too short or otherwise refused: try each other sentence as the middle, longest first.
    others = sorted((s for s in sentences if s.index not in used and s is not middle),
                    key=lambda s: (s.role == roles.BACKGROUND, s.index < lead.index, -s.words))
    for other in others[:4]:
        yield _fit(first, _later_sentence(other.text, subject, singular), last)
    if last is not None:
        yield _fit(first, None, last)
    if result is None and middle is None:
        # A one-sentence abstract: say what it is about via the title, then the finding.
        title = prepared.title.rstrip(".")
        yield _fit(f"{subject} {'writes' if singular else 'write'} about “{title}”.", None, first)
    # Document order from the lead on: always faithful, only the length may fall short.
    following = [s for s in sentences if s.index > lead.index][:2]
    parts = [first] + [_later_sentence(s.text, subject, singular) for s in following]
    yield _fit(*(parts + [None] * (3 - len(parts)))[:3])
    # A terse lead ("X et al. propose Abacus-SQL.") absorbs the sentence that explains it.
    merged = _merge_with_next(first, [s for s in sentences if s.index == lead.index + 1])
    if merged:
        rest_after = [s for s in sentences if s.index > lead.index + 1 and s.index not in used]
        extra = _later_sentence(rest_after[0].text, subject, singular) if rest_after else None
        yield _fit(merged, extra, last)
    yield from _fallback_blurbs(sentences, lead, result, others, first, mid, last, subject,
                                singular, following)


def _fallback_blurbs(sentences: list[roles.Sentence], lead: roles.Sentence,
                     result: roles.Sentence | None, others: list[roles.Sentence], first: str,
                     mid: str | None, last: str | None, subject: str, singular: bool,
                     following: list[roles.Sentence]) -> Iterator[str]:
    """The candidates tried when the story's own sentences do not make a good blurb."""
    # Short sentences everywhere: the pair of other sentences that says the most.
    rest = [s for s in sentences if s.index != lead.index]
    pairs = sorted(combinations(rest, 2), key=lambda pair: -(pair[0].words + pair[1].words))
    for a, b in pairs[:6]:
        yield _fit(first, _later_sentence(a.text, subject, singular),
                   _later_sentence(b.text, subject, singular), cut_mid=True)
    # A long lead in a short abstract: keep more of the lead itself.
    for other in [*others[:2], *([result] if result else [])]:
        yield (compress(first, 55, drop_parentheses=False)[0] + " "
               + compress(_later_sentence(other.text, subject, singular), 30)[0])
    # Last resorts: cut the middle sentence too.
    yield _fit(first, mid, last, cut_mid=True)
    for other in others[:4]:
        yield _fit(first, _later_sentence(other.text, subject, singular), last, cut_mid=True)
    # The lead and what follows it, cut once at a clause boundary near the word limit.
    joined = " ".join([first] + [_later_sentence(s.text, subject, singular) for s in following])
    yield compress(joined, BLURB_MAX_WORDS - 10, drop_parentheses=False)[0]
    yield _finish(" ".join(joined.split()[:BLURB_MAX_WORDS - 25]))  # a plain cut, as a last resort
    # Unpunctuated abstracts are one long "sentence": say more of it.
    yield compress(first, 70, drop_parentheses=False)[0]


def _merge_with_next(first: str, following: list[roles.Sentence]) -> str | None:
    """'… propose X.' + 'X uses Y.' -> '… propose X, which uses Y.'"""
    if not following or len(first.split()) > 15:
        return None
    name = first.rstrip(".").split()[-1]
    text = following[0].text
    for opener in (name + " ", "It ", "This method ", "This approach ", "The framework "):
        if text.startswith(opener) and text[len(opener):][:1].islower():
            return f"{first.rstrip('.')}, which {text[len(opener):]}"
    return None


def _fit(first: str, mid: str | None, last: str | None, cut_mid: bool = False) -> str:
    """Compress the parts until the blurb has at most BLURB_MAX_WORDS words.

    The middle sentence is optional: unless `cut_mid`, it is dropped rather than cut.
    """
    blurb = ""
    for limits in ((40, 30, 40), (35, 25, 35), (30, 22, 30), (30, 0, 35), (25, 0, 28), (22, 0, 22)):
        parts = [compress(first, limits[0], drop_parentheses=limits[0] < 40)[0]]
        if mid and limits[1] and (cut_mid or len(mid.split()) <= limits[1]):
            parts.append(compress(mid, limits[1], drop_parentheses=limits[1] < 30)[0])
        if last:
            parts.append(compress(last, limits[2], drop_parentheses=limits[2] < 40)[0])
        blurb = " ".join(parts)
        if len(blurb.split()) <= BLURB_MAX_WORDS:
            return blurb
    return blurb


def write_builtin_checked(
    paper: dict[str, Any], source: gate.GateSource | None = None
) -> tuple[Summary, list[str]]:
    """The built-in summary that passes the gate if any candidate does, and the gate's reasons."""
    prepared = prepare(paper)
    subject, singular = author_naming(paper.get("authors") or [])
    if source is None:
        source = gate.build_source(paper, subject)
    tldr, tldr_reasons = _first_passing(_tldr_candidates(prepared, subject, singular),
                                        lambda t: gate.check_tldr(t, source))
    blurb, blurb_reasons = _first_passing(_blurb_candidates(prepared, subject, singular),
                                          lambda b: gate.check_blurb(b, source))
    return Summary(tldr=tldr, blurb=blurb), tldr_reasons + blurb_reasons


def _first_passing(candidates: Iterator[str], check: Any) -> tuple[str, list[str]]:
    first: tuple[str, list[str]] | None = None
    seen: set[str] = set()
    for candidate in candidates:
        if not candidate or candidate in seen:
            continue
        seen.add(candidate)
        reasons = check(candidate)
        if not reasons:
            return candidate, []
        first = first or (candidate, reasons)
    return first or ("", ["empty"])


def write_builtin(paper: dict[str, Any]) -> Summary:
    """The built-in writer's TL;DR and blurb for a paper dict (title, abstract, authors)."""
    return write_builtin_checked(paper)[0]
