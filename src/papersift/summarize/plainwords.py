"""The desk's plain words for the abstract register: "significantly" and "extensive" dropped, "state-of-the-art baselines" made "leading baselines", "leverage" made "use".

Like the rest of the sub-editor's pass, each edit drops words or swaps one for a plainer word
that says no more; no number or name is added or lost, so a blurb that passed the
faithfulness gate still does. register.py counts what is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from papersift.summarize.editor import article_for, edit_sentence
from papersift.summarize.register import REGISTER_PIECES, fragment, release_promises
from papersift.summarize.text import holds

_EXPERIMENT_NOUNS = (r"experiments?|experimentation|evaluations?|analys[ie]s|ablations?|"
                     r"studies|tests?|testing|benchmarking|simulations?|results|comparisons?|"
                     r"validation|empirical|numerical|quantitative|qualitative|human|"
                     r"real-world|user|case|computational|theoretical|controlled|"
                     r"benchmarks?|trials?|investigations?|exploration|assessments?")
_SOTA = r"(?:state[- ]of[- ]the[- ]art|SOTA|SoTA)"
# "(SOTA)" after what it abbreviates, and "state-of-the-art" before what was compared.
_RE_SOTA_PAREN = re.compile(rf"\s*\({_SOTA}\)")
# Words after which "state-of-the-art" is a noun ("a new state of the art for X"), not an
# adjective: made "leading", it would leave "a new leading for X".
_FUNCTION_WORD = r"(?:for|on|in|across|among|with|by|at|of|to|and|or|while|when|as|from)\b"
_RE_SOTA_RECORD = re.compile(rf"\bnew\s+{_SOTA}(?![- ](?!{_FUNCTION_WORD})[a-zA-Z])", re.I)
_RE_SOTA_ADJ = re.compile(rf"\b(?:current\s+|existing\s+|recent\s+|previous\s+|strong\s+)?"
                          rf"{_SOTA}(?:[- ]\(SOTA\))?(?=[- ](?!{_FUNCTION_WORD})[a-zA-Z])[- ]",
                          re.I)
_RE_SOTA_NOUN = re.compile(rf"\b(?:the\s+)?(?:current\s+|existing\s+|previous\s+)?{_SOTA}\b",
                           re.I)
_RE_EXTENSIVE_BEFORE = re.compile(
    rf"\b(?:extensive|comprehensive|thorough|systematic)\s+(?=(?:and\s+\w+\s+|[\w\-]+\s+)?"
    rf"(?:{_EXPERIMENT_NOUNS})\b)", re.I)
_RE_EXTENSIVELY_DONE = re.compile(
    r"\bextensively\s+(?=(?:been\s+)?(?:studied|used|explored|investigated|adopted|applied|"
    r"researched|employed|deployed|examined|discussed)\b)", re.I)
_RE_SIMPLE_YET = re.compile(r"\bsimple\s+(?:yet|but|and)\s+(?:effective|efficient|powerful)\b",
                            re.I)
_RE_RANGE_OF = re.compile(r"\b(?:an?\s+)?(?:wide|broad|diverse)\s+(?:range|variety|array|"
                          r"spectrum)\s+of\b", re.I)
_RE_LEVERAGE = re.compile(r"\b(?:leverag|utiliz|utilis)(e|es|ed|ing|ation)\b", re.I)
_USE = {"e": "use", "es": "uses", "ed": "used", "ing": "using", "ation": "use"}
_RE_CRUCIAL = re.compile(r"\b(?:(an?)\s+)?(crucial|pivotal|paramount)\b", re.I)
_RE_CRUCIALLY = re.compile(r"\b[Cc]rucially,?\s+")
_RE_PAVE = re.compile(r"\b(pav)(e|es|ed|ing) the way (?:for|to(?:wards?)?)\b", re.I)
_OPEN = {"e": "open the way to", "es": "opens the way to", "ed": "opened the way to",
         "ing": "opening the way to"}
_RE_SHED = re.compile(r"\b(shed|sheds|shedding) (?:new |some |further )?light on\b", re.I)
_SHED = {"shed": "clarify", "sheds": "clarifies", "shedding": "clarifying"}
_RE_DELVE = re.compile(r"\bdelv(e|es|ing)\s+(?:deep(?:er|ly)?\s+)?into\b", re.I)
_DELVE = {"e": "examine", "es": "examines", "ing": "examining"}
# Adverbs and adjectives that only turn the volume up: dropped with their commas.
_RE_DROPPED = re.compile(
    r"\b(?:(?<!statistically )(?<!not )significantly(?! (?:associated|correlated|different)\b)|"
    r"(?<!statistically )(?<!not )(?<!no )significant(?= [a-z])"
    r"(?! (?:differences?|correlations?|associations?|effects? (?:of|on)|predictors?|"
    r"interactions?|at|for)\b)|"
    r"substantial(?:ly)?(?= [a-z])|considerabl[ey](?= [a-z])|notabl[ey](?= [a-z])|"
    r"comprehensive(?:ly)?(?= [a-z])|extensive(?:ly)?(?= [a-z])|seamless(?:ly)?(?= [a-z])|"
    r"promising(?= [a-z])|myriad(?= [a-z]))\s+", re.I)
_DROPPED_PIECES = ("significant", "substantial", "considerab", "notab", "comprehensive",
                   "extensive", "seamless", "promising", "myriad")
_RE_NOTABLY_OPENER = re.compile(r"(?:^|(?<=[.;] ))(?:Notably|Most notably|Remarkably|"
                                r"Significantly|Importantly|Crucially|Interestingly),\s+")
_RE_DEMONSTRATE_EFFECTIVENESS = re.compile(
    r"\b(demonstrat|validat|verif|confirm|prov|show|highlight|illustrat|underscor)(\w*) "
    r"(?:the |its |their )?(?:effectiveness|efficacy|superiority|advantages?|merits?|"
    r"feasibility|efficiency and effectiveness|effectiveness and efficiency|"
    r"effectiveness and (?:the )?\w+|\w+ and effectiveness) of\b", re.I)
_SHOW = {"s": "show", "es": "show", "": "show", "e": "show", "ed": "showed", "ing": "showing",
         "ies": "show", "ied": "showed", "y": "show", "en": "shown"}


def _keep_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _at(match: re.Match[str], replacement: str) -> str:
    """The replacement with a capital where the match opens a sentence ('SOTA' mid-sentence
    is no reason for one)."""
    before = match.string[:match.start()].rstrip()
    opens = not before or before[-1] in ".!?:;\"“("
    return replacement[:1].upper() + replacement[1:] if opens else replacement


_RE_ARTICLE = re.compile(r"\b([Aa]n?) ([\w\-]+)")
_RE_DOUBLE_JOINT = re.compile(r"\b(and|or) (and|or)\b")
_RE_SPACES = re.compile(r"  +")


def _mend_articles(text: str) -> str:
    """'a extensive' left behind by a drop -> 'an ...' mended to the next word's sound."""
    return _RE_ARTICLE.sub(
                  lambda m: _keep_case(m.group(1), article_for(m.group(2))) + " " + m.group(2)
                  if m.group(2)[:1].isalpha() else m.group(0), text)


_RE_ITS_EFFECTIVENESS = re.compile(
    r"\b(demonstrat|validat|verif|confirm|prov|show|highlight|illustrat|underscor)(\w*) "
    r"(its|their|the) (?:effectiveness|efficacy)\b(?! (?:of|and)\b)", re.I)


def _works(match: re.Match[str]) -> str:
    """'confirming its effectiveness' -> 'confirming that it works'."""
    verb = match.group(1) + match.group(2)
    subject = "they work" if match.group(3).lower() == "their" else "it works"
    return f"{verb} that {subject}"


def _demonstrate(match: re.Match[str]) -> str:
    """'demonstrate the effectiveness of X' -> 'test X' would say less: 'show the value of X'
    keeps the claim in plain words."""
    stem, ending = match.group(1).lower(), match.group(2).lower()
    if stem in ("demonstrat", "validat", "illustrat", "underscor"):
        form = {"e": "show", "es": "shows", "ed": "showed", "ing": "showing"}.get(ending, "show")
    elif stem in ("verif", "prov"):
        form = {"y": "show", "ies": "shows", "ied": "showed", "ying": "showing", "e": "show",
                "es": "shows", "ed": "showed", "ing": "showing", "en": "shown"}.get(ending, "show")
    else:
        form = {"": "show", "s": "shows", "ed": "showed", "ing": "showing", "n": "shown",
                "light": "highlight", "lights": "shows", "lighted": "showed",
                "lighting": "showing"}.get(ending, "show")
    return _keep_case(match.group(0), f"{form} the value of")


_EDITS: tuple[tuple[tuple[str, ...], re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (("sota", "state"), _RE_SOTA_PAREN, ""),
    (("sota", "state"), _RE_SOTA_RECORD, lambda m: _at(m, "new best result")),
    (("sota", "state"), _RE_SOTA_ADJ, lambda m: _at(m, "leading ")),
    (("sota", "state"), _RE_SOTA_NOUN,
     lambda m: _at(m, "the best previous methods")),
    (("extensive", "comprehensive", "thorough", "systematic"), _RE_EXTENSIVE_BEFORE, ""),
    (("extensively",), _RE_EXTENSIVELY_DONE, "widely "),
    (("simple",), _RE_SIMPLE_YET, lambda m: _at(m, "simple")),
    (("range", "variety", "array", "spectrum"), _RE_RANGE_OF,
     lambda m: _at(m, "many")),
    (("leverag", "utili"), _RE_LEVERAGE,
     lambda m: _at(m, _USE[m.group(1).lower()])),
    (("crucially",), _RE_CRUCIALLY, ""),
    (("crucial", "pivotal", "paramount"), _RE_CRUCIAL, lambda m: _at(m, (
        article_for("important") + " " if m.group(1) else "") + "important")),
    (("pav",), _RE_PAVE, lambda m: _at(m, _OPEN[m.group(2).lower()])),
    (("light",), _RE_SHED, lambda m: _at(m, _SHED[m.group(1).lower()])),
    (("delv",), _RE_DELVE, lambda m: _at(m, _DELVE[m.group(1).lower()])),
    (("effectiveness", "efficacy", "superiority", "advantage", "merit", "feasibility"),
     _RE_DEMONSTRATE_EFFECTIVENESS, _demonstrate),
    (("effectiveness", "efficacy"), _RE_ITS_EFFECTIVENESS, _works),
    (("notabl", "remarkabl", "significantly,", "importantly", "crucially", "interestingly"),
     _RE_NOTABLY_OPENER, ""),
)


def plain_register(text: str) -> str:
    """The text with its abstract-register words dropped or made plain; facts stay."""
    lowered = text.lower()
    if not holds(lowered, REGISTER_PIECES):
        return text
    capital, original = text[:1].isupper(), text
    for pieces, pattern, replace in _EDITS:
        if holds(lowered, pieces):
            text = pattern.sub(replace, text)
    if holds(lowered, _DROPPED_PIECES):
        text = _RE_DROPPED.sub("", text)
    if text == original:
        return text
    if "and and" in text or "and or" in text or "or and" in text or "or or" in text:
        text = _RE_DOUBLE_JOINT.sub(r"\1", text)  # "X and and Y" after a drop
    if "  " in text:
        text = _RE_SPACES.sub(" ", text)
    text = text.replace(" ,", ",")
    text = _mend_articles(text)
    if capital and text[:1].islower():
        text = text[:1].upper() + text[1:]
    return text


# ------------------------------------------------------------------ releases
_RE_RELEASE_CLAUSE = re.compile(
    r"(?:,\s*|\s+)(?:and\s+|which\s+|while\s+)?(?:(?:they|the authors|he|she)\s+)?"
    r"(?:will\s+|plan to\s+|also\s+)?(?:release[sd]?|releasing|open[- ]sourc(?:e|es|ed|ing)|"
    r"make[s]?\s+(?:\w+\s+){1,4}(?:publicly\s+)?available|making\s+(?:\w+\s+){1,4}"
    r"(?:publicly\s+)?available)\b.*$", re.I)
_RE_RELEASE_TAIL = re.compile(
    r"(?:,\s*|\s+|;\s*)(?:and\s+|with\s+|while\s+)?(?:(?:the|their|all|its)\s+)?(?:source\s+)?"
    r"(?:code|data(?:sets?)?|models?|weights|checkpoints|implementation|resources)"
    r"(?:\s+and\s+\w+){0,2}\s+(?:is|are|will be|have been|has been)\s+(?:made\s+)?"
    r"(?:publicly\s+|freely\s+|openly\s+)?(?:available|released)\b.*$", re.I)


_RE_URL = re.compile(r"\s*\((?:[^()]*?\s)?(?:https?://|www\.)[^()]*\)|"
                     r",?\s*(?:(?:at|on|from|via|in)\s+)?(?:https?://|www\.)\S+?"
                     r"(?=[.,;]?(?:\s|$))")
# "Tomlin et al. publicly release the corpus, which ..." -> "Tomlin et al. present the corpus,
# which ...": what a paper releases is what it presents.
_RE_RELEASE_VERB = re.compile(
    r"\b(?:publicly |openly |also |freely )?release(s?)(?= (?:the|a|an|their|all of the|all) )")


def without_release(sentence: str) -> str:
    """The sentence without its clause promising a release ('..., and the code is publicly
    available at ...') or its link, and with 'release the X' told as 'present the X'; empty
    when the whole sentence is such a promise."""
    if not release_promises(sentence):
        return sentence
    cut = _RE_URL.sub("", sentence)
    if cut != sentence and not release_promises(cut) and fragment(cut) is None:
        return cut
    for pattern in (_RE_RELEASE_TAIL, _RE_RELEASE_CLAUSE):
        match = pattern.search(sentence)
        if match and match.start() > 20:
            cut = sentence[:match.start()].rstrip(" ,;") + "."
            # "Tomlin et al. publicly." is no sentence: a cut keeps a clause's worth of words.
            if len(cut.split()) >= 6 and not release_promises(cut) and fragment(cut) is None:
                return cut
    told = _RE_RELEASE_VERB.sub(lambda m: "present" + m.group(1), _RE_URL.sub("", sentence))
    if not release_promises(told) and fragment(told) is None:
        return told
    return ""


@lru_cache(maxsize=8192)
def edit(sentence: str, subject: str, singular: bool) -> str:
    """One sentence through the whole sub-editor's pass (editor.edit_sentence), then its
    abstract-register words made plain."""
    return plain_register(edit_sentence(sentence, subject, singular))
