"""An abstract read for reporting (its sentences with their roles) and its sentences retold in the third person."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from papersift.summarize import roles
from papersift.summarize.compress import tidy
from papersift.summarize.person import starts_with_subject, strip_openers, to_third_person
from papersift.summarize.text import clean_latex, said_mid_sentence, split_sentences

_COMMON_STARTS = frozenset(
    ["the", "this", "these", "those", "a", "an", "in", "on", "for", "to", "with", "by", "our", "such", "most", "many", "existing", "recent", "large", "current", "although", "while", "when", "it", "its", "there", "each", "all", "both", "one", "two", "however", "we", "as", "at", "from", "given", "despite", "unlike", "using", "since", "because", "if", "our", "however,", "experiments", "experimental", "results", "extensive", "empirical", "evaluations", "numerical", "theoretical", "finally", "moreover", "their", "they", "them", "these",
     "those", "that", "what", "which", "how", "why", "where", "whether", "no", "not", "only",
     "some", "several", "various", "different", "other", "another", "more", "less", "few"])


_RE_CAPITALISED = re.compile(r"[A-Z][a-z]+(?:-[a-z]+)*")


def _decapitalise(sentence: str, abstract: str) -> str:
    """Lower-case the first word unless it is a name: an acronym, a word with capitals
    inside, or one the abstract also writes capitalised where no sentence starts."""
    first = sentence.split(" ", 1)[0]
    bare = first.strip(",;:")
    if not _RE_CAPITALISED.fullmatch(bare):
        return sentence  # an acronym, a name with capitals inside ("Text-to-Image")
    if bare.lower() not in _COMMON_STARTS and said_mid_sentence(bare, abstract):
        return sentence  # capitalised where no sentence starts: a name
    return sentence[0].lower() + sentence[1:]


def report_verb(singular: bool) -> str:
    return "reports" if singular else "report"


@lru_cache(maxsize=4096)
def lead_sentence(sentence: str, subject: str, singular: bool, abstract: str) -> str:
    """A sentence that opens with the authors' naming."""
    stripped = strip_openers(sentence)
    if starts_with_subject(stripped):
        return to_third_person(stripped, subject, singular)
    body = to_third_person(stripped, "they", False)
    return f"{subject} {report_verb(singular)} that {_decapitalise(body, abstract)}"


@lru_cache(maxsize=4096)
def later_sentence(sentence: str, subject: str, singular: bool) -> str:
    pronoun_subject = subject if singular else "They"
    return to_third_person(sentence, pronoun_subject, singular)


@dataclass(slots=True)
class Prepared:
    """A paper's cleaned title and abstract, and the abstract's sentences with their roles."""

    title: str
    abstract: str
    sentences: list[roles.Sentence]
    sentence_count: int  # sentences of the abstract as split, before empty ones are dropped


def prepare(paper: dict[str, Any]) -> Prepared:
    title = clean_latex(paper.get("title") or "")
    abstract = clean_latex(paper.get("abstract") or "")
    split = split_sentences(abstract)
    texts = [t for t in (tidy(s) for s in split) if t]
    return Prepared(title, abstract, roles.analyse(texts, title), len(split))
