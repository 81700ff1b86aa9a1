"""Sentence roles in an abstract (background, contribution, method, result) and a salience score."""

from __future__ import annotations

import operator
import re
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


def features(
    text: str, index: int, count: int, title_tokens: set[str], role: str,
    sentence_tokens: set[str] | None = None, centrality: float = 0.0, strong: bool | None = None,
    context: DocumentContext | None = None, folded: str | None = None,
) -> dict[str, float]:
    """The salience features of one sentence (the keys of WEIGHTS, less the bias).

    `centrality`: how many other sentences share this one's content words, on average;
    `context`: where the abstract's first contribution cues are, and the title's bigrams.
    """
    context = context or DocumentContext()
    if folded is None:
        folded = fold(text)
    if sentence_tokens is None:
        sentence_tokens = content_tokens(text)
    overlap = len(sentence_tokens & title_tokens) / len(title_tokens) if title_tokens else 0.0
    n_words = len(text.split())
    if strong is None:
        strong = bool(_RE_STRONG_CUE.search(text, folded))
    return {
        "first": float(index == 0),
        "second": float(index == 1),
        "last": float(index == count - 1 and count > 1),
        "relpos": index / max(1, count - 1),
        "title": overlap,
        "strong": float(strong),
        "contribution": float(role == CONTRIBUTION),
        "result": float(role == RESULT),
        "method": float(role == METHOD),
        "background": float(role == BACKGROUND),
        "we": float(bool(_RE_WE.search(text, folded))),
        "long": float(n_words > 40),
        "short": float(n_words < 8),
        "central": centrality,
        "novel": float(bool(_RE_NOVEL.search(text, folded))),
        "propose": float(bool(_RE_PROPOSE.search(text, folded))),
        "words": min(n_words, 60) / 60,
        "modal_we": float(bool(_RE_MODAL_WE.search(text, folded))),
        "title_n": len(sentence_tokens & title_tokens) / max(1, len(sentence_tokens)),
        "first_strong": float(index == context.first_strong),
        "first_contribution": float(index == context.first_contribution),
        "starts_we_propose": float(bool(_RE_STARTS_WE_PROPOSE.match(strip_openers(text)))),
        "has_colon": float(":" in text),
        "has_number": float(bool(_RE_NUMBER.search(text))),
        "title_bigram": (len(bigrams(text) & context.title_bigrams) / len(context.title_bigrams)
                         if context.title_bigrams else 0.0),
        "first_we": float(index == context.first_we),
    }


def feature_table(sentences: list[str], title: str) -> list[tuple[str, dict[str, float]]]:
    """(role, features) of every sentence of an abstract, in order."""
    title_tokens = content_tokens(title)
    count = len(sentences)
    token_sets = [content_tokens(text) for text in sentences]
    document_frequency: dict[str, int] = {}
    for token_set in token_sets:
        for token in token_set:
            document_frequency[token] = document_frequency.get(token, 0) + 1
    folds = [fold(text) for text in sentences]
    strongs = [bool(_RE_STRONG_CUE.search(text, folds[i])) for i, text in enumerate(sentences)]
    roles_ = [classify(text, index, count, strongs[index], folds[index])
              for index, text in enumerate(sentences)]
    context = DocumentContext(
        first_strong=next((i for i, strong in enumerate(strongs) if strong), None),
        first_contribution=next((i for i, r in enumerate(roles_) if r == CONTRIBUTION), None),
        first_we=next((i for i, t in enumerate(sentences) if _RE_WE_WORD.search(t, folds[i])), None),
        title_bigrams=frozenset(bigrams(title)),
    )
    table = []
    for index, text in enumerate(sentences):
        token_set = token_sets[index]
        centrality = (sum(document_frequency[t] - 1 for t in token_set) / max(1, len(token_set))
                      / max(1, count - 1))
        table.append((roles_[index], features(
            text, index, count, title_tokens, roles_[index], token_set, centrality, strongs[index],
            context, folds[index])))
    return table


def analyse(sentences: list[str], title: str) -> list[Sentence]:
    """Role and salience of every sentence of an abstract."""
    analysed = []
    for index, (text, (role, feats)) in enumerate(
            zip(sentences, feature_table(sentences, title), strict=True)):
        # The same products summed in the same order as over WEIGHTS by name: the same score.
        score = WEIGHTS["bias"] + sum(map(operator.mul, map(WEIGHTS.__getitem__, feats), feats.values()))
        analysed.append(Sentence(
            text=text, index=index, role=role, score=score, words=len(text.split()),
            has_number=bool(_RE_NUMBER.search(text)),
            has_result_number=bool(_RE_PERCENT.search(text)) or (
                role == RESULT and bool(re.search(r"\d+\.\d+|\d+\s?%", text))),
        ))
    return analysed
