"""Rewriting abstract sentences from the authors' first person into a reporter's third person."""

from __future__ import annotations

import re
from functools import lru_cache

_IRREGULAR_3SG = {"have": "has", "are": "is", "were": "was", "do": "does", "go": "goes"}
_IRREGULAR_BASE = {
    "has": "have", "is": "are", "was": "were", "does": "do", "focuses": "focus",
    "discusses": "discuss", "addresses": "address", "analyses": "analyse", "goes": "go",
    "proposes": "propose", "introduces": "introduce", "uses": "use", "causes": "cause",
    "releases": "release", "surveys": "survey", "analyzes": "analyze", "synthesizes": "synthesize",
    "characterizes": "characterize", "characterises": "characterise", "revises": "revise",
    "devises": "devise", "leverages": "leverage", "advances": "advance", "balances": "balance",
    "enhances": "enhance", "reduces": "reduce", "produces": "produce", "describes": "describe",
    "examines": "examine", "explores": "explore", "provides": "provide", "derives": "derive",
    "establishes": "establish", "compares": "compare", "combines": "combine",
    "argues": "argue", "rethinks": "rethink", "formalizes": "formalize", "formalises": "formalise",
    "utilizes": "utilize", "utilises": "utilise", "emphasizes": "emphasize", "realizes": "realize",
    "generalizes": "generalize", "summarizes": "summarize", "summarises": "summarise",
    "organizes": "organize", "closes": "close", "raises": "raise", "poses": "pose",
    "composes": "compose", "unifies": "unify", "identifies": "identify", "studies": "study",
    "applies": "apply", "clarifies": "clarify", "quantifies": "quantify", "verifies": "verify",
    "offers": "offer", "reviews": "review", "presents": "present", "shows": "show",
}
# Words between "we" and its verb that are not the verb ("we also propose").
_ADVERBS = frozenset(
    ["also", "further", "then", "first", "additionally", "finally", "now", "next", "here", "therefore", "thus", "hence", "instead", "subsequently", "theoretically", "empirically", "experimentally", "systematically", "formally", "both", "jointly", "explicitly", "carefully", "newly", "successfully", "still", "often", "only", "again", "specifically", "comprehensively", "rigorously", "not"]
)
_MODALS = frozenset(["can", "could", "will", "would", "may", "might", "must", "shall", "should", "cannot"])
_PAPER_NOUNS = (
    r"paper|work|study|article|letter|note|thesis|report|survey|manuscript|position paper|"
    r"short paper|review|tutorial|chapter|dissertation|research|contribution|project|effort"
)
_RE_OPENER = re.compile(
    r"^(?:In this (?:" + _PAPER_NOUNS + r")|In the present (?:" + _PAPER_NOUNS + r")|"
    r"Here(?:in)?|In this regard|To this end|To (?:address|tackle|overcome|solve|mitigate|fill|"
    r"bridge|resolve|remedy|alleviate|close) (?:this|these|that|those|such)(?: \w+){0,3}|"
    r"To fill (?:this|the) gap|To bridge (?:this|the) gap|Motivated by (?:this|these)(?: \w+){0,2}|"
    r"Against this backdrop|In response|In summary|Overall|In conclusion|Finally|Specifically|"
    r"Concretely|In particular|Furthermore|Moreover|Additionally|In addition|Besides|"
    r"Importantly|Notably|Therefore|As a result|Consequently|Also|Then|First(?:ly)?|"
    r"Second(?:ly)?|Third(?:ly)?|Lastly|Next|Further|Crucially|Inspired by (?:this|these)(?: \w+){0,2}|"
    r"Particularly|More specifically|Subsequently|For this purpose|For this reason|"
    r"Based on (?:this|these)(?: \w+){0,3}|In light of (?:this|these)(?: \w+){0,3}|"
    r"With this in mind|Accordingly|Hence|Thus|Instead|Building on (?:this|these)(?: \w+){0,2})"
    r"\s*,?\s+(?=\S)",
)
_RE_WE_START = re.compile(r"^(?:We|I)\s+")
_RE_PAPER_START = re.compile(
    r"^(?:This|The present|Our|The current) (?:[a-z\-]+ )?(?:" + _PAPER_NOUNS + r")\s+([a-z]+)\b"
)
# Verbs an author may leave in the base form after "This paper" ("This paper propose X").
_BASE_VERBS = frozenset(
    ["propose", "present", "introduce", "study", "investigate", "explore", "develop", "describe",
     "examine", "address", "provide", "offer", "report", "show", "demonstrate", "analyze",
     "analyse", "evaluate", "review", "survey", "discuss", "establish", "focus", "design"])
_RE_PRONOUNS = re.compile(
    r"\b(we|We|our|Our|us|ours|Ours|ourselves|Ourselves|my|My|myself|me)\b(?![-’'][A-Za-z])")
_RE_I = re.compile(
    r"(?<!Type )(?<!Phase )(?<!Class )(?<!Level )(?<!Stage )(?<!Part )(?<!Section )(?<!Tier )"
    r"(?<!Category )(?<!Case )(?<!Step )(?<!Study )(?<!Table )(?<!Chapter )(?<!Figure )"
    r"(?<!Appendix )(?<!Experiment )(?<!Model )(?<!Task )(?<!Setting )(?<!Problem )\bI\b(?= [a-z])"
)
_PRONOUN_MAP = {
    "we": "they", "We": "They", "our": "their", "Our": "Their", "us": "them", "ours": "theirs",
    "Ours": "Theirs", "ourselves": "themselves", "Ourselves": "Themselves", "my": "their",
    "My": "Their", "myself": "themselves", "me": "them",
}
_RE_LET_US = re.compile(r"\b[Ll]et us\b|\blet's\b", re.I)


_RE_ES = re.compile(r"(?:s|sh|ch|x|z|o)$")
_RE_IES = re.compile(r"[^aeiou]y$")
_RE_SES = re.compile(r"(?:sh|ch|x|z|ss)es$")


def third_singular(verb: str) -> str:
    """'propose' -> 'proposes', 'study' -> 'studies', 'have' -> 'has'."""
    if verb in _IRREGULAR_3SG:
        return _IRREGULAR_3SG[verb]
    if _RE_ES.search(verb):
        return verb + "es"
    if _RE_IES.search(verb):
        return verb[:-1] + "ies"
    return verb + "s"


def plural_base(verb: str) -> str | None:
    """'proposes' -> 'propose'; None when the word does not look like a third-person verb."""
    if verb in _IRREGULAR_BASE:
        return _IRREGULAR_BASE[verb]
    if not verb.endswith("s") or verb.endswith("ss") or verb.endswith("us") or len(verb) < 4:
        return None
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if _RE_SES.search(verb):
        return verb[:-2]
    return verb[:-1]


_RE_ENUMERATOR = re.compile(r"^(?:\(?(?:[ivx]{1,4}|\d{1,2}|[a-h])\)|\d{1,2}\.)\s+")
_RE_CLAUSE_BEFORE_WE = re.compile(
    r"^(?!We\b|I\b|This\b)[A-Z][^;:()]{2,220}?,\s+"
    r"(?=(?:we|I)\s+[a-z]|this (?:paper|study|work|article) (?!is\b|was\b|has\b)[a-z]+s\b)")


# What every match of _RE_CLAUSE_BEFORE_WE holds after its clause: it opens with the comma,
# which the engine skips to (the clause pattern tries every comma from the start).
_RE_COMMA_BEFORE_WE = re.compile(r",\s+(?:(?:we|I)\s+[a-z]|this (?:paper|study|work|article) )")


# The writer retells each sentence of an abstract in many drafts (a lead, a later sentence, a
# TL;DR, the salience features): the rewrites below are kept rather than redone.
@lru_cache(maxsize=8192)
def strip_openers(sentence: str) -> str:
    """'In this paper, we propose X' -> 'we propose X' (repeated: 'Finally, in this work, ...').

    A short leading clause before 'we' ("To solve the above problems, we ...") goes too.
    """
    for _ in range(4):
        stripped = _RE_ENUMERATOR.sub("", sentence, count=1)
        stripped = _RE_OPENER.sub("", stripped, count=1)
        if _RE_COMMA_BEFORE_WE.search(stripped):
            stripped = _RE_CLAUSE_BEFORE_WE.sub("", stripped, count=1)
        if stripped == sentence:
            break
        sentence = _capitalise_if_sentence_start(stripped)
    return sentence


def _capitalise_if_sentence_start(sentence: str) -> str:
    if sentence[:1].islower():
        return sentence[0].upper() + sentence[1:]
    return sentence


def _inflect_after_subject(rest: str) -> str:
    """Make the verb that starts `rest` (maybe after adverbs) agree with a singular subject."""
    parts = rest.split(" ")
    for position, word in enumerate(parts[:4]):
        bare = word.strip(",")
        if bare.lower() in _ADVERBS:
            continue
        if bare in _MODALS or not bare.isalpha() or not bare.islower():
            return rest
        parts[position] = word.replace(bare, third_singular(bare), 1)
        # "we propose and evaluate X": the second verb of a pair agrees too.
        if position + 2 < len(parts) and parts[position + 1] == "and":
            second = parts[position + 2]
            if second.isalpha() and second.islower() and second not in _ADVERBS:
                parts[position + 2] = third_singular(second)
        return " ".join(parts)
    return rest


@lru_cache(maxsize=8192)
def to_third_person(sentence: str, subject: str, singular: bool) -> str:
    """Rewrite one sentence: the authors' 'we' at its start becomes `subject`, other 'we' -> 'they'.

    `subject` is the naming ("Zhang et al.", "Osband", "They"); `singular` says the verb takes -s.
    """
    sentence = strip_openers(sentence)
    match = _RE_WE_START.match(sentence)
    if match:
        rest = sentence[match.end():]
        sentence = f"{subject} {_inflect_after_subject(rest) if singular else rest}"
    else:
        paper = _RE_PAPER_START.match(sentence)
        if paper:
            verb = paper.group(1)
            base = _paper_verb_base(verb)
            if base is not None:
                verb = third_singular(verb) if verb == base else verb
                new_verb = verb if singular else base
                sentence = f"{subject} {new_verb}{sentence[paper.end():]}"
    lowered = sentence.lower()
    if "let" in lowered:
        sentence = _RE_LET_US.sub(
            lambda m: "one can" if m.group(0)[0].islower() else "One can", sentence)
    sentence = _RE_PRONOUNS.sub(lambda m: _PRONOUN_MAP[m.group(1)], sentence)
    if "I " in sentence:
        sentence = _RE_I.sub("they", sentence)
    return sentence


def starts_with_subject(sentence: str) -> bool:
    """Does this (stripped) sentence start with the authors as subject ('We ...', 'This paper ...')?"""
    return bool(_RE_WE_START.match(sentence) or (
        (m := _RE_PAPER_START.match(sentence)) and _paper_verb_base(m.group(1)) is not None))


def _paper_verb_base(verb: str) -> str | None:
    """The base form of what a paper does ('proposes'); None for what it is ('is', 'has')."""
    if verb in ("is", "was", "has", "does", "seems", "appears", "remains"):
        return None  # "This paper is organized as follows" is about the paper, not the authors
    return plural_base(verb) or (verb if verb in _BASE_VERBS else None)
