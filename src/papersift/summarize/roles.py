"""Sentence roles in an abstract (background, contribution, method, result) and a salience score."""

from __future__ import annotations

import operator
import re
from collections import Counter
from dataclasses import dataclass

from papersift.summarize.person import strip_openers
from papersift.summarize.text import Caseless, fold, tokens

BACKGROUND, CONTRIBUTION, METHOD, RESULT, OTHER = "background", "contribution", "method", "result", "other"

_CONTRIBUTION_VERBS = (
    r"propose|present|introduce|develop|design|describe|study|studies|investigate|explore|"
    r"address|formulate|provide|offer|establish|derive|build|release|construct|devise|"
    r"put forward|tackle|consider|analy[sz]e|examine|focus|revisit|contribute|create|"
    r"demonstrate|show|report|argue|identify|characteri[sz]e|extend|frame|cast|curate|"
    r"collect|benchmark|evaluate|assess|compare|seek|aim|attempt|leverage|use|apply|prove"
)
_RE_CONTRIBUTION = Caseless(
    r"\b(?:we|this (?:paper|work|study|article|letter|note|thesis|report|survey|position paper)|"
    r"here,? we|in this (?:paper|work|study))\b[^.]{0,40}?\b(?:" + _CONTRIBUTION_VERBS + r")",
    needs=("we", "this"),
)
_RE_STRONG_CUE = Caseless(
    r"\b(?:we|this (?:paper|work))\s+(?:also\s+|further\s+|then\s+|first\s+)?"
    r"(?:propose|present|introduce|develop|design|release|describe|formulate|devise)s?\b|"
    r"\bin this (?:paper|work|study|article)\b|\bhere,? we\b",
    needs=("we", "this"),
)
_RE_RESULT = Caseless(
    r"\b(?:experiment|experimental|results?|outperform|achiev|improv|state[- ]of[- ]the[- ]art|"
    r"accuracy|surpass|gains?|reduc|speed-?up|significantly|empirical|evaluations?|we (?:show|find|"
    r"observe|demonstrate|obtain|report)|show that|demonstrate that|find that|reveal|"
    r"compared (?:to|with)|better than|competitive|benchmark|effective|sota|f1|bleu|auc)"
)
_RE_METHOD = Caseless(
    r"\b(?:we (?:use|employ|train|leverage|adopt|apply|combine|model|formulate|learn|represent|"
    r"encode|compute|first|then)|by (?:using|leveraging|learning|introducing|combining)|"
    r"based on|consists? of|comprises?|specifically|in particular|our (?:method|approach|model|"
    r"framework|algorithm|system)|the (?:proposed )?(?:method|approach|model|framework) "
    r"(?:uses|consists|learns|is based))"
)
_RE_BACKGROUND = Caseless(
    r"\b(?:has been|have been|recent(?:ly)?|however|remains?|challeng|existing|prior|previous|"
    r"despite|although|while|widely|popular|increasingly|often|typically|is a|are a|"
    r"important|crucial|problem|limited|suffer|struggle|lack)"
)
_RE_CONCESSIVE = re.compile(r"(?:However|Despite|Although|Though|While|Whereas|Yet|Unfortunately|Nevertheless|Nonetheless)\b")
_RE_NUMBER = re.compile(r"\d")
_RE_PERCENT = re.compile(r"\d\s?(?:%|percent|x\b|×|times\b|-fold)", re.I)
_STOP = frozenset(
    ["a", "an", "the", "of", "for", "in", "on", "to", "and", "or", "with", "by", "from", "via", "using", "as", "at", "is", "are", "be", "we", "our", "this", "that", "its", "it", "into", "towards", "toward", "based", "new", "learning", "deep", "neural", "network", "networks", "model", "models", "approach", "method", "methods"]
)


_RE_STARTS_WE_PROPOSE = re.compile(r"We (?:\w+ly )?(?:propose|introduce|present|develop)")


def bigrams(text: str) -> set[tuple[str, str]]:
    lowered = text.lower().split()
    return set(zip(lowered, lowered[1:], strict=False))


@dataclass(frozen=True, slots=True)
class DocumentContext:
    """What a sentence's features need to know about the rest of its abstract."""

    first_strong: int | None = None
    first_contribution: int | None = None
    first_we: int | None = None
    title_bigrams: frozenset[tuple[str, str]] = frozenset()


@dataclass(slots=True)
class Sentence:
    """One sentence of an abstract with what the writer needs to know about it."""

    text: str
    index: int
    role: str
    score: float
    words: int
    has_number: bool
    has_result_number: bool


def content_tokens(text: str) -> set[str]:
    return {t for t in tokens(text) if t not in _STOP and len(t) > 2}


def classify(text: str, index: int, count: int, strong: bool | None = None,
             folded: str | None = None) -> str:
    """The role of a sentence from its cue phrases, with position as the tie-breaker.
    `folded`: fold(text), when the caller has it."""
    if folded is None:
        folded = fold(text)
    if strong is None:
        strong = bool(_RE_STRONG_CUE.search(text, folded))
    if strong:
        return CONTRIBUTION
    if _RE_CONCESSIVE.match(text):
        return BACKGROUND
    result = _RE_RESULT.search(text, folded)
    if result and (index > 0 or _RE_NUMBER.search(text)) and index >= count // 3:
        return RESULT
    if _RE_CONTRIBUTION.search(text, folded):
        return CONTRIBUTION
    if _RE_METHOD.search(text, folded):
        return METHOD
    if result and index > 0:
        return RESULT
    if index <= max(1, count // 4) and _RE_BACKGROUND.search(text, folded):
        return BACKGROUND
    if index == 0:
        return BACKGROUND
    return OTHER


# Weights of the TL;DR salience score, fitted by least squares on SciTLDR train.jsonl
# (target: each sentence's ROUGE against the references) and rounded; see
# benchmarks/bench_summarize.py --fit.
WEIGHTS = {
    "bias": 0.0,
    "first": 0.032,
    "second": -0.003,
    "last": -0.0,
    "relpos": -0.003,
    "title": 0.065,
    "strong": 0.007,
    "contribution": 0.015,
    "result": 0.004,
    "method": 0.012,
    "background": -0.027,
    "we": 0.0,
    "long": -0.033,
    "short": -0.063,
    "central": 0.49,
    "novel": 0.017,
    "propose": 0.002,
    "words": 0.117,
    "modal_we": -0.013,
    "title_n": 0.171,
    "first_strong": 0.012,
    "first_contribution": 0.029,
    "starts_we_propose": 0.027,
    "has_colon": -0.019,
    "has_number": -0.007,
    "title_bigram": 0.052,
    "first_we": 0.017,
}


_RE_NOVEL = Caseless(r"\bnovel|\bnew\b", needs=("novel", "new"))
_RE_PROPOSE = Caseless(r"\bwe (?:\w+ly )?(?:propose|introduce|present)", needs=("we ",))
_RE_MODAL_WE = Caseless(r"\bwe (?:can|could|need|must|should|may)\b", needs=("we ",))
_RE_WE = Caseless(r"\b(?:we|our)\b", needs=("we", "our"))
_RE_WE_WORD = Caseless(r"\bwe\b", needs=("we",))


# The features in the order features() names them (WEIGHTS' order, less the bias).
FEATURES = (
    "first", "second", "last", "relpos", "title", "strong", "contribution", "result", "method",
    "background", "we", "long", "short", "central", "novel", "propose", "words", "modal_we",
    "title_n", "first_strong", "first_contribution", "starts_we_propose", "has_colon",
    "has_number", "title_bigram", "first_we",
)


def features(
    text: str, index: int, count: int, title_tokens: set[str], role: str,
    sentence_tokens: set[str] | None = None, centrality: float = 0.0, strong: bool | None = None,
    context: DocumentContext | None = None, folded: str | None = None,
) -> dict[str, float]:
    """The salience features of one sentence (the keys of WEIGHTS, less the bias).

    `centrality`: how many other sentences share this one's content words, on average;
    `context`: where the abstract's first contribution cues are, and the title's bigrams.
    """
    if folded is None:
        folded = fold(text)
    return dict(zip(FEATURES, _feature_values(
        text, index, count, title_tokens, role, sentence_tokens, centrality, strong,
        context or DocumentContext(), folded, len(text.split()), bool(_RE_NUMBER.search(text))),
        strict=True))


def _content_tokens(text: str, folded: str | None) -> set[str]:
    """content_tokens(text), given folded = fold(text): the token pattern is ASCII, and
    lower-casing a text fold() keeps makes no ASCII character (checked over all of Unicode)."""
    if folded is None:
        return content_tokens(text)
    return set(_RE_LONG_TOKEN.findall(folded)) - _STOP


# text.tokens' pattern for its tokens of three characters or more: a shorter run of its
# characters fails at its start and at every later place in it; a longer one is taken whole.
_RE_LONG_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']{2,}")


def _feature_values(
    text: str, index: int, count: int, title_tokens: set[str], role: str,
    sentence_tokens: set[str] | None, centrality: float, strong: bool | None,
    context: DocumentContext, folded: str | None, n_words: int, has_number: bool,
    title_pairs: tuple[str, ...] | None = None,
) -> tuple[float, ...]:
    """features() as values in the order of FEATURES: the writer sums them without a dict."""
    if sentence_tokens is None:
        sentence_tokens = _content_tokens(text, folded)
    shared = len(sentence_tokens & title_tokens)
    if strong is None:
        strong = bool(_RE_STRONG_CUE.search(text, folded))
    title_bigrams = context.title_bigrams
    if title_pairs is None:
        title_pairs = _pairs(title_bigrams)
    return (
        float(index == 0),
        float(index == 1),
        float(index == count - 1 and count > 1),
        index / max(1, count - 1),
        shared / len(title_tokens) if title_tokens else 0.0,
        float(strong),
        float(role == CONTRIBUTION),
        float(role == RESULT),
        float(role == METHOD),
        float(role == BACKGROUND),
        float(bool(_RE_WE.search(text, folded))),
        float(n_words > 40),
        float(n_words < 8),
        centrality,
        float(bool(_RE_NOVEL.search(text, folded))),
        float(bool(_RE_PROPOSE.search(text, folded))),
        min(n_words, 60) / 60,
        float(bool(_RE_MODAL_WE.search(text, folded))),
        shared / max(1, len(sentence_tokens)),
        float(index == context.first_strong),
        float(index == context.first_contribution),
        float(bool(_RE_STARTS_WE_PROPOSE.match(strip_openers(text)))),
        float(":" in text),
        float(has_number),
        (_shared_bigrams(text, folded, title_pairs) / len(title_bigrams)
         if title_bigrams else 0.0),
        float(index == context.first_we),
    )


def _pairs(title_bigrams: frozenset[tuple[str, str]]) -> tuple[str, ...]:
    """Each title bigram as ' first second ', for _shared_bigrams."""
    return tuple(f" {first} {second} " for first, second in title_bigrams)


def _shared_bigrams(text: str, folded: str | None, title_pairs: tuple[str, ...]) -> int:
    """len(bigrams(text) & title_bigrams), given folded = fold(text) (text.lower() when not
    None): words hold no space, so ' a b ' is in the words joined by spaces just where they
    hold a, b in a row; a title has a handful of bigrams, a sentence dozens."""
    joined = " " + " ".join((folded if folded is not None else text.lower()).split()) + " "
    return sum(map(joined.__contains__, title_pairs))


def feature_table(sentences: list[str], title: str) -> list[tuple[str, dict[str, float]]]:
    """(role, features) of every sentence of an abstract, in order."""
    return [(role, dict(zip(FEATURES, values, strict=True)))
            for role, values, _words, _number in _feature_rows(sentences, title)]


def _feature_rows(sentences: list[str], title: str
                  ) -> list[tuple[str, tuple[float, ...], int, bool]]:
    """(role, feature values, words, has a digit) of every sentence of an abstract, in order."""
    title_tokens = _content_tokens(title, fold(title))
    count = len(sentences)
    folds = [fold(text) for text in sentences]
    token_sets = [_content_tokens(text, folds[i]) for i, text in enumerate(sentences)]
    document_frequency: Counter[str] = Counter()
    for token_set in token_sets:
        document_frequency.update(token_set)
    strongs = [bool(_RE_STRONG_CUE.search(text, folds[i])) for i, text in enumerate(sentences)]
    roles_ = [classify(text, index, count, strongs[index], folds[index])
              for index, text in enumerate(sentences)]
    context = DocumentContext(
        first_strong=next((i for i, strong in enumerate(strongs) if strong), None),
        first_contribution=next((i for i, r in enumerate(roles_) if r == CONTRIBUTION), None),
        first_we=next((i for i, t in enumerate(sentences) if _RE_WE_WORD.search(t, folds[i])), None),
        title_bigrams=frozenset(bigrams(title)),
    )
    title_pairs = _pairs(context.title_bigrams)
    rows = []
    for index, text in enumerate(sentences):
        token_set = token_sets[index]
        # (The same integer sum as over document_frequency[t] - 1.)
        centrality = ((sum(map(document_frequency.__getitem__, token_set)) - len(token_set))
                      / max(1, len(token_set)) / max(1, count - 1))
        n_words = len(text.split())
        has_number = bool(_RE_NUMBER.search(text))
        rows.append((roles_[index], _feature_values(
            text, index, count, title_tokens, roles_[index], token_set, centrality, strongs[index],
            context, folds[index], n_words, has_number, title_pairs), n_words, has_number))
    return rows


def analyse(sentences: list[str], title: str) -> list[Sentence]:
    """Role and salience of every sentence of an abstract."""
    analysed = []
    weights = tuple(map(WEIGHTS.__getitem__, FEATURES))
    for index, (text, (role, values, n_words, has_number)) in enumerate(
            zip(sentences, _feature_rows(sentences, title), strict=True)):
        # The same products summed in the same order as over WEIGHTS by name: the same score.
        score = WEIGHTS["bias"] + sum(map(operator.mul, weights, values))
        analysed.append(Sentence(
            text=text, index=index, role=role, score=score, words=n_words,
            has_number=has_number,
            # (Both patterns need a digit.)
            has_result_number=has_number and (bool(_RE_PERCENT.search(text)) or (
                role == RESULT and bool(_RE_RESULT_NUMBER.search(text)))),
        ))
    return analysed


_RE_RESULT_NUMBER = re.compile(r"\d+\.\d+|\d+\s?%")
