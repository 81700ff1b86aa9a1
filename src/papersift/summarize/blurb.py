"""The built-in writer's blurb: drafts built from the abstract's sentences (who did what, how, the headline result), each through the sub-editor's pass, and the first that passes both the faithfulness gate and the house style."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from papersift.summarize import roles, style
from papersift.summarize.compress import compress, finish
from papersift.summarize.gate import BLURB_MAX_WORDS, BLURB_MIN_WORDS
from papersift.summarize.naming import title_lead, with_title_name
from papersift.summarize.person import strip_openers
from papersift.summarize.plainwords import edit, without_release
from papersift.summarize.register import release_promises
from papersift.summarize.reporting import Prepared, later_sentence, lead_sentence
from papersift.summarize.style import PAPER_NOUN
from papersift.summarize.text import split_sentences

TITLE = -1  # the index a draft records for a sentence made from the title

# A sentence that opens by pointing back at the one before it ("These fields", "It", "They").
_RE_LEANS_BACK = re.compile(
    r"^(?:(?:This|These|Those|That|Such|Both)\b(?! (?:" + PAPER_NOUN + r")\b)|"
    r"(?:It|Its|They|Their|Them|Here|Another|Others|Thus|Hence)\b|"
    r"The (?:other|former|latter|remaining|rest|above|aforementioned|same)\b)")
_RE_EXPLETIVE_IT = re.compile(
    r"^It (?:is|was|has been|remains|becomes|seems|appears)\b[^.]*?\b(?:that|to|whether|how)\b")


@dataclass(frozen=True, slots=True)
class Draft:
    """A blurb before the sub-editor's pass, with the abstract sentences it retells in order."""

    text: str
    used: tuple[int, ...] = ()


@lru_cache(maxsize=4096)
def leans_back(sentence: str) -> bool:
    """Whether a sentence of the abstract needs the one before it to be understood."""
    opened = strip_openers(sentence)
    return bool(_RE_LEANS_BACK.match(opened)) and not _RE_EXPLETIVE_IT.match(opened)


# -------------------------------------------------------------------- drafts
_LIMITS = ((40, 30, 40), (35, 25, 35), (30, 22, 30), (30, 0, 35), (25, 0, 28), (22, 0, 22))
# Three sentences that only make sense together ("... two strategies. One is X. The other is
# Y."): cut each as little as the word limit allows.
_LOOSE_LIMITS = ((45, 45, 45), (40, 40, 40), *_LIMITS)


def fit(first: str, mid: str | None, last: str | None, cut_mid: bool = False,
        loose: bool = False) -> tuple[str, bool]:
    """The parts compressed until the blurb has at most BLURB_MAX_WORDS words; and whether
    the middle part is still in it (unless `cut_mid`, it is dropped rather than cut)."""
    blurb, kept = "", False
    for limits in _LOOSE_LIMITS if loose else _LIMITS:
        parts = [compress(first, limits[0], drop_parentheses=limits[0] < 40)[0]]
        kept = bool(mid and limits[1] and (cut_mid or len(mid.split()) <= limits[1]))
        if kept and mid:
            parts.append(compress(mid, limits[1], drop_parentheses=limits[1] < 30)[0])
        if last:
            parts.append(compress(last, limits[2], drop_parentheses=limits[2] < 40)[0])
        blurb = " ".join(parts)
        if len(blurb.split()) <= BLURB_MAX_WORDS:
            break
    return blurb, kept


class _Teller:
    """One paper's sentences retold: the lead opens with the authors, later ones follow."""

    def __init__(self, prepared: Prepared, subject: str, singular: bool) -> None:
        self.prepared, self.subject, self.singular = prepared, subject, singular

    def lead(self, sentence: roles.Sentence) -> str:
        return lead_sentence(sentence.text, self.subject, self.singular, self.prepared.abstract)

    def later(self, sentence: roles.Sentence) -> str:
        return later_sentence(sentence.text, self.subject, self.singular)

    def about_title(self) -> str:
        verb = "writes" if self.singular else "write"
        return f"{self.subject} {verb} about “{self.prepared.title.rstrip('.')}”."

    def draft(self, first: tuple[int, str], mid: tuple[int, str] | None,
              last: tuple[int, str] | None, cut_mid: bool = False, loose: bool = False) -> Draft:
        text, kept = fit(first[1], mid[1] if mid else None, last[1] if last else None, cut_mid,
                         loose)
        used = [first[0]] + ([mid[0]] if mid and kept else []) + ([last[0]] if last else [])
        return Draft(text, tuple(used))


def _pick(sentences: list[roles.Sentence], role: str, exclude: set[int]) -> roles.Sentence | None:
    pool = [s for s in sentences if s.role == role and s.index not in exclude and s.words >= 5]
    return max(pool, key=lambda s: (s.score, -s.index)) if pool else None


def story(sentences: list[roles.Sentence]
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


def drafts(prepared: Prepared, subject: str, singular: bool, name: str | None = None
           ) -> Iterator[Draft]:
    """Blurbs best first: lead (who did what), how, and the headline result; then variants.

    With the title's `name`, drafts that open with the title ('X et al. present SILK, ...')
    come after the abstract's own: they are what a blurb falls back on to say the name.
    A sentence that only promises code or data is no news: drafts without it come first,
    and drafts with it only after them (for an abstract too short to do without it)."""
    every = [s for s in prepared.sentences if s.words >= 4]
    news = [s for s in every if not (release_promises(s.text) and not without_release(s.text))]
    if news:
        yield from _drafts(prepared, subject, singular, name, news)
    if len(news) < len(every) or not every:
        yield from _drafts(prepared, subject, singular, name, every)


def _drafts(prepared: Prepared, subject: str, singular: bool, name: str | None,
            sentences: list[roles.Sentence]) -> Iterator[Draft]:
    teller = _Teller(prepared, subject, singular)
    if not sentences:
        if prepared.title:
            yield Draft(teller.about_title(), (TITLE,))
        return
    lead, result, middle, used = story(sentences)
    first = (lead.index, teller.lead(lead))
    last = (result.index, teller.later(result)) if result else None
    mid = (middle.index, teller.later(middle)) if middle else None
    yield teller.draft(first, mid, last)
    yield from _with_context(sentences, lead, last, teller)
    yield from _other_leads(sentences, lead, result, teller)
    # Too short or otherwise refused: try each other sentence as the middle, longest first.
    others = sorted((s for s in sentences if s.index not in used and s is not middle),
                    key=lambda s: (s.role == roles.BACKGROUND, s.index < lead.index, -s.words))
    for other in others[:4]:
        yield teller.draft(first, (other.index, teller.later(other)), last)
    if last is not None:
        yield teller.draft(first, None, last)
    titled = title_lead(prepared.title, name, subject, singular, prepared.abstract) if name else None
    if titled:
        closings = [last, mid, *((s.index, teller.later(s)) for s in others[:3])]
        for closing in dict.fromkeys(c for c in closings if c is not None):
            yield teller.draft((TITLE, titled), (lead.index, teller.later(lead)), closing,
                               cut_mid=True)
    if result is None and middle is None:
        # A one-sentence abstract: say what it is about via the title, then the finding.
        yield teller.draft((TITLE, teller.about_title()), None, first)
    # Document order from the lead on: always faithful, only the length may fall short.
    following = [s for s in sentences if s.index > lead.index][:2]
    parts = [first] + [(s.index, teller.later(s)) for s in following]
    yield teller.draft(*(parts + [None] * (3 - len(parts)))[:3])  # type: ignore[arg-type]
    # A terse lead ("X et al. propose Abacus-SQL.") absorbs the sentence that explains it.
    merged = _merge_with_next(first[1], [s for s in sentences if s.index == lead.index + 1])
    if merged:
        rest_after = [s for s in sentences if s.index > lead.index + 1 and s.index not in used]
        extra = (rest_after[0].index, teller.later(rest_after[0])) if rest_after else None
        draft = teller.draft((lead.index, merged), extra, last)
        yield Draft(draft.text, (lead.index, lead.index + 1, *draft.used[1:]))
    yield from _fallbacks(sentences, lead, result, others, first, mid, last, teller, following)


def _with_context(sentences: list[roles.Sentence], lead: roles.Sentence,
                  last: tuple[int, str] | None, teller: _Teller) -> Iterator[Draft]:
    """A lead that points back ('... addresses these issues', 'The other is ...') told after
    the one or two sentences it needs."""
    if not (leans_back(lead.text) or style.dangling_references(teller.lead(lead))):
        return
    by_index = {s.index: s for s in sentences}
    one, two = by_index.get(lead.index - 1), by_index.get(lead.index - 2)
    told = (lead.index, teller.later(lead))
    if one is not None and not leans_back(one.text):
        opening = (one.index, teller.lead(one))
        yield teller.draft(opening, told, last, cut_mid=True)
        yield teller.draft(opening, told, None, cut_mid=True)
    if one is not None and two is not None and not leans_back(two.text):
        yield teller.draft((two.index, teller.lead(two)), (one.index, teller.later(one)), told,
                           cut_mid=True, loose=True)


def _other_leads(sentences: list[roles.Sentence], lead: roles.Sentence,
                 result: roles.Sentence | None, teller: _Teller) -> Iterator[Draft]:
    """When the lead points at what the blurb lacks ('... tackle these issues'), the next
    best sentences that can open a blurb on their own, with the story after them."""
    if not (leans_back(lead.text) or style.dangling_references(teller.lead(lead))):
        return
    ranked = sorted((s for s in sentences if s is not lead and s is not result and s.words >= 6
                     and s.role != roles.BACKGROUND and not leans_back(s.text)),
                    key=lambda s: (s.role != roles.CONTRIBUTION, -s.score))
    tried = 0
    for other in ranked:
        opening = teller.lead(other)
        if style.dangling_references(opening):
            continue
        after = [s for s in sentences if s.index > other.index and s is not result
                 and s.role != roles.BACKGROUND]
        middle = (after[0].index, teller.later(after[0])) if after else None
        closing = (result.index, teller.later(result)) if result and result.index != other.index \
            else None
        yield teller.draft((other.index, opening), middle, closing)
        yield teller.draft((other.index, opening), None, closing)
        tried += 1
        if tried == 2:
            return


def _fallbacks(sentences: list[roles.Sentence], lead: roles.Sentence,
               result: roles.Sentence | None, others: list[roles.Sentence],
               first: tuple[int, str], mid: tuple[int, str] | None,
               last: tuple[int, str] | None, teller: _Teller,
               following: list[roles.Sentence]) -> Iterator[Draft]:
    """The drafts tried when the story's own sentences do not make a good blurb."""
    # Short sentences everywhere: the pair of other sentences that says the most.
    rest = [s for s in sentences if s.index != lead.index]
    pairs = sorted(combinations(rest, 2), key=lambda pair: -(pair[0].words + pair[1].words))
    for a, b in pairs[:6]:
        yield teller.draft(first, (a.index, teller.later(a)), (b.index, teller.later(b)),
                           cut_mid=True)
    # A long lead in a short abstract: keep more of the lead itself.
    for other in [*others[:2], *([result] if result else [])]:
        yield Draft(compress(first[1], 55, drop_parentheses=False)[0] + " "
                    + compress(teller.later(other), 30)[0], (lead.index, other.index))
    # Last resorts: cut the middle sentence too.
    yield teller.draft(first, mid, last, cut_mid=True)
    for other in others[:4]:
        yield teller.draft(first, (other.index, teller.later(other)), last, cut_mid=True)
    # The lead and what follows it, cut once at a clause boundary near the word limit.
    joined = " ".join([first[1]] + [teller.later(s) for s in following])
    used = (lead.index, *(s.index for s in following))
    yield Draft(compress(joined, BLURB_MAX_WORDS - 10, drop_parentheses=False)[0], used)
    yield Draft(finish(" ".join(joined.split()[:BLURB_MAX_WORDS - 25])), used)  # a plain cut
    # Unpunctuated abstracts are one long "sentence": say more of it.
    yield Draft(compress(first[1], 70, drop_parentheses=False)[0], (lead.index,))


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


# --------------------------------------------------------- the editor's choice
@dataclass(frozen=True, slots=True)
class Desk:
    """What the sub-editor knows of one paper: how to name the authors, the title's name."""

    subject: str
    singular: bool
    title: str
    abstract: str
    name: str | None
    sentences: dict[int, str]  # the abstract's sentences by index


def polish(text: str, desk: Desk) -> tuple[str, list[str]]:
    """A draft through the sub-editor's pass (hype made plain, the paper's talk of itself
    turned into what the authors do, the title's name given), and its sentences."""
    sentences = split_sentences(text)
    edited = []
    for number, sentence in enumerate(sentences):
        if number == 0:
            subject, singular = desk.subject, desk.singular
        else:
            subject, singular = (desk.subject, True) if desk.singular else ("They", False)
        sentence = edit(sentence, subject, singular)
        if release_promises(sentence):
            # The promise goes, not the blurb: a lead keeps its news, and no sentence goes
            # when the rest would be too short for the gate.
            cut = without_release(sentence)
            rest = sum(len(s.split()) for s in edited) + sum(
                len(s.split()) for s in sentences[number + 1:])
            if cut or (number and rest + len(cut.split()) >= BLURB_MIN_WORDS):
                sentence = cut
        if sentence:
            edited.append(sentence)
    text = " ".join(edited)
    if desk.name and not style.names_title(text, desk.name):
        named = with_title_name(text, desk.name, desk.title)
        if named != text:
            return named, split_sentences(named)
    return text, edited


# Rules a draft is held to, heaviest first: a draft is chosen by the weight of what it breaks.
_WEIGHTS = {style.SELF_REFERENCE: 8, style.RELEASE: 8, style.DANGLING: 4, style.FRAGMENT: 4,
            style.TITLE_NAME: 2, style.HYPE: 1, style.REGISTER: 1}
# A draft that only keeps some abstract-register word is looked past for this many more
# passing drafts, no further: the search for a plainer one is what the writer's speed pays.
_LIGHT_LOOKAHEAD = 3


def style_weight(text: str, sentences: list[str], draft: Draft, desk: Desk) -> int:
    """How badly a polished draft breaks the house style (0: not at all)."""
    rules = {f.rule for f in style.style_findings(text, sentences)}
    if desk.name and not style.names_title(text, desk.name):
        rules.add(style.TITLE_NAME)
    # A later sentence that points back must follow the sentence it points at.
    for position, index in enumerate(draft.used[1:], 1):
        source = desk.sentences.get(index)
        if source is not None and leans_back(source) and draft.used[position - 1] != index - 1:
            rules.add(style.DANGLING)
    return sum(_WEIGHTS[rule] for rule in rules)


def choose(candidates: Iterator[Draft], desk: Desk, gate_check: Callable[[str], list[str]]
           ) -> tuple[str, list[str]]:
    """The first polished draft that passes the gate and the house style; else the passing
    draft that breaks the least; else the first draft with the gate's reasons."""
    failure: tuple[str, list[str]] | None = None
    best: tuple[int, str] | None = None
    light = 0  # passing drafts seen since the best broke only light rules
    polished: dict[str, tuple[str, list[str]]] = {}  # draft text -> polished text, sentences
    gated: dict[str, list[str]] = {}  # polished text -> the gate's reasons
    for draft in candidates:
        if not draft.text:
            continue
        if draft.text not in polished:
            polished[draft.text] = polish(draft.text, desk)
        text, sentences = polished[draft.text]
        if text not in gated:
            gated[text] = gate_check(text)
            if gated[text]:
                failure = failure or (text, gated[text])
        if gated[text]:
            continue
        weight = style_weight(text, sentences, draft, desk)
        if weight == 0:
            return text, []
        if best is None or weight < best[0]:
            best = (weight, text)
        if best[0] <= 1:
            light += 1
            if light > _LIGHT_LOOKAHEAD:
                break
    if best is not None:
        return best[1], []
    return failure or ("", ["empty"])
