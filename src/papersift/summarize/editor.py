"""The sub-editor's pass over a blurb: praise words dropped or made plain, and the paper's talk of itself turned into what the authors do.

Every edit removes words or swaps one for a plainer word that says no more ("superior" ->
"better", "novel" -> "new" or nothing); no edit adds a number or a name, so a blurb that
passed the faithfulness gate still does.
"""

from __future__ import annotations

import re

from papersift.summarize.person import plural_base, third_singular
from papersift.summarize.style import HYPE_PIECES, PAPER_NOUN, RE_NOT_PRAISE, SOTA
from papersift.summarize.text import Caseless, fold, holds

# ----------------------------------------------------------------- articles
_RE_VOWEL_SOUND = re.compile(r"(?:[aeio]|u(?!ni|se|su|ti|ri|ro|ku|bi)|hour|honest|heir|8|11\b|18\b)", re.I)
_RE_NOT_VOWEL_SOUND = re.compile(r"(?:one\b|once\b|one-|eu|ewe|uni|use|usu|uti|ura|ure|uro)", re.I)


def article_for(word: str) -> str:
    """'a' or 'an' before this word, by its sound as far as its spelling tells."""
    if not word:
        return "a"
    if word[0].isupper() and len(word) > 1 and (word[1].isupper() or word[1] in "-0123456789"):
        # An acronym is read letter by letter: "an LLM", "a GAN", "an F1 score".
        return "an" if word[0] in "AEFHILMNORSX" else "a"
    if _RE_NOT_VOWEL_SOUND.match(word):
        return "a"
    return "an" if _RE_VOWEL_SOUND.match(word) else "a"


_RE_DROPPED_JOINT = re.compile(r"\x00,? and |,? and \x00(?= )")
_RE_ARTICLE_BEFORE_DROP = re.compile(r"\b([Aa]n?) \x00\s*([\w“\"'(\-]+)")
_RE_DROP_MARK = re.compile(r" ?\x00 ?")
_RE_SPACES = re.compile(r"  +")


def _article_before_drop(match: re.Match[str]) -> str:
    first, following = match.group(1), match.group(2)
    chosen = article_for(following)
    if first[0].isupper():
        chosen = chosen.capitalize()
    return f"{chosen} {following}"


def _drop_word(text: str, pattern: re.Pattern[str]) -> str:
    """Remove every match, with its space, mending 'a'/'an' before it and 'and' beside it."""
    marked = pattern.sub("\x00", text)
    # "novel and efficient" / "simple and novel": the pair loses its joint. (Each pattern
    # below is tried only on a text with the words it needs.)
    if " and " in marked:
        marked = _RE_DROPPED_JOINT.sub("\x00", marked)
    marked = marked.replace("\x00, ", "\x00")
    if "a \x00" in marked or "n \x00" in marked or "A \x00" in marked:
        marked = _RE_ARTICLE_BEFORE_DROP.sub(_article_before_drop, marked)
    opens = marked.startswith("\x00")
    marked = _RE_DROP_MARK.sub(" ", marked)
    if "  " in marked:
        marked = _RE_SPACES.sub(" ", marked)
    marked = marked.replace(" ,", ",").strip()
    return marked[:1].upper() + marked[1:] if opens else marked


# --------------------------------------------------------------------- hype
_SOTA_NOUNS = (r"performance|results?|accuracy|scores?|levels?|quality|precision|recall|F1|"
               r"efficiency|robustness|generalization|capabilit(?:y|ies)")
_RE_SOTA_WITH_NOUN = re.compile(
    rf"\b(?:(a|the|its|their|his|her)\s+)?(?:new\s+)?{SOTA}[- ](?:or near[- ]{SOTA}[- ])?"
    rf"({_SOTA_NOUNS})\b", re.I)
_RE_SOTA_CLAIM = re.compile(
    rf"\b(achiev\w*|set(?:s|ting)?|establish\w*|reach\w*|attain\w*|deliver\w*|obtain\w*|yield\w*|"
    rf"demonstrat\w*|show\w*|report\w*)\s+(?:(?:a|the)\s+)?(?:new\s+)?{SOTA}\b"
    r"(?![- ](?:methods?|models?|baselines?|approaches|systems?|techniques))", re.I)
_RE_SOTA_NOUN = re.compile(
    rf"\b(outperform\w*|surpass\w*|beat\w*|exceed\w*|advanc\w*|push\w*|improv\w*|redefin\w*)"
    rf"\s+(?:the\s+)?(?:current\s+|previous\s+|existing\s+)?{SOTA}\b"
    r"(?=\s*(?:[,.;:)]|$|by\b|in\b|on\b|across\b|for\b|and\b|while\b|with\b))", re.I)
_RE_SUPERIOR_TO = re.compile(r"\bsuperior to\b", re.I)
_RE_SUPERIORITY = re.compile(
    r"\b(?:(the|its|their|a|consistent|clear|significant|[\w\-]+['’]s)\s+)?superiority\b", re.I)
_RE_SUPERIOR = re.compile(r"\bsuperior\b", re.I)
_STRONG_NOUNS = (r"performance|results|capabilit(?:y|ies)|abilit(?:y|ies)|generali[sz]ation|"
                 r"robustness|effectiveness|efficiency|accuracy|quality|gains|improvements?|"
                 r"success|advantages|potential|progress")
_RE_PRAISE_BEFORE_NOUN = re.compile(
    rf"\b(achiev\w*|demonstrat\w*|show\w*|exhibit\w*|deliver\w*|attain\w*|yield\w*|obtain\w*|"
    rf"display\w*|offer\w*|present\w*|with|and|maintain\w*|provid\w*)\s+"
    rf"(?:remarkabl[ey]|impressive|exceptional|outstanding|extraordinary|unprecedented|"
    rf"excellent|phenomenal|spectacular|stunning)\s+(?=(?:\w+\s+)?(?:{_STRONG_NOUNS})\b)", re.I)
_RE_DROPPED_PRAISE = re.compile(
    r"\b(?:remarkabl[ey]|impressive(?:ly)?|exceptional(?:ly)?(?! (?:points?|cases?|sets?|values?|"
    r"divisors?|groups?|curves?|isomorphisms?|series)\b)|"
    r"outstanding(?! (?:questions?|problems?|issues?|challenges?|debts?|balances?|claims?)\b)|"
    r"extraordinar(?:y|ily)|unprecedented|groundbreaking|ground-breaking|revolutionary|"
    r"game-changing|unparalleled|unmatched|unrivall?ed|pioneering|first-of-its-kind|"
    r"paradigm-shifting|astonishing(?:ly)?|stunning(?:ly)?|spectacular(?:ly)?|phenomenal(?:ly)?)"
    r"\b", re.I)
_RE_NEW_WORD = re.compile(r"\b(?:novel|innovative)\b(?![- ]views?\b)", re.I)
_RE_A_NEW_WORD = re.compile(
    r"(?:(?<=\b[Aa] )|(?<=\b[Aa]n ))(?:novel|innovative)\b(?![- ]views?\b)", re.I)
_RE_CUTTING_EDGE = re.compile(r"\bcutting-edge\b", re.I)
_RE_BREAKTHROUGH = re.compile(r"\bbreakthrough(s?)\b", re.I)
_RE_REVOLUTIONIZE = re.compile(r"\brevolutioni[sz](e|es|ed|ing)\b", re.I)
_REVOLUTION_TO_CHANGE = {"e": "change", "es": "changes", "ed": "changed", "ing": "changing"}


def _keep_case(original: str, replacement: str) -> str:
    return replacement[0].upper() + replacement[1:] if original[:1].isupper() else replacement


def _sota_with_noun(match: re.Match[str]) -> str:
    determiner, noun = match.group(1), match.group(2)
    if determiner and determiner.lower() in ("its", "their", "his", "her"):
        return f"{determiner} best reported {noun}"
    return _keep_case(match.group(0), f"the best reported {noun}")


def _sota_claim(match: re.Match[str]) -> str:
    return f"{match.group(1)} the best reported results"


def _sota_noun(match: re.Match[str]) -> str:
    verb = match.group(1)
    if verb.lower().startswith(("advanc", "push", "improv", "redefin")):
        return f"{verb} on the best previous results"
    return f"{verb} the best previous results"


def _superiority(match: re.Match[str]) -> str:
    determiner = match.group(1)
    if determiner is None:
        return _keep_case(match.group(0), "an advantage")
    return f"{determiner} advantage"


def _praise_before_noun(match: re.Match[str]) -> str:
    return f"{match.group(1)} strong "


# Pieces of any word the rules below touch: one scan is cheaper than a dozen substitutions.
_HYPE_TRIGGERS = (*HYPE_PIECES, "excellent")


def neutralize_hype(text: str) -> str:
    """The text with its praise words dropped or made plain; facts and numbers stay."""
    lowered = text.lower()
    if not holds(lowered, _HYPE_TRIGGERS):
        return text
    spared = [(m.start(), m.end()) for m in RE_NOT_PRAISE.finditer(text)]
    if spared:  # "superior temporal gyrus" is anatomy: leave such a text's 'superior' alone
        return _neutralize(text, keep_superior=True)
    return _neutralize(text, keep_superior=False)


# "a new state-of-the-art model" is a new model; in "a new state of the art for X" the words
# are a noun, left for the claim pattern ("sets the best reported results for X").
_RE_NEW_SOTA = re.compile(
    rf"\bnew {SOTA}[- ](?=(?!(?:for|on|in|across|among|with|by|at|of|to|and|or|while|when|as|"
    rf"from)\b)[a-z])", re.I)


# Each rule below with the pieces of its words in lower case: a rule whose pieces the text
# lacks cannot match (the patterns are re.IGNORECASE, and a text fold() keeps has no letter
# that matches an ASCII one under it but is not that one lower-cased). Most texts here hold
# one hype word: the other rules are not tried.
_SOTA_PIECES = ("state", "sota")
_PRAISE_PIECES = ("remarkab", "impressive", "exceptional", "outstanding", "extraordinary",
                  "unprecedented", "excellent", "phenomenal", "spectacular", "stunning")
_DROPPED_PRAISE_PIECES = ("remarkab", "impressive", "exceptional", "outstanding",
                          "extraordinar", "unprecedented", "groundbreaking", "ground-breaking",
                          "revolutionary", "game-changing", "unparalleled", "unmatched",
                          "unrival", "pioneering", "first-of-its-kind", "paradigm-shifting",
                          "astonishing", "stunning", "spectacular", "phenomenal")
_NEW_WORD_PIECES = ("novel", "innovative")


def _has(folded: str | None, pieces: tuple[str, ...]) -> bool:
    """Whether the folded text holds one of the pieces (always, for a text fold() gives up on)."""
    return folded is None or holds(folded, pieces)


def _neutralize(text: str, keep_superior: bool) -> str:
    folded = fold(text)
    if _has(folded, _SOTA_PIECES):
        before = text
        text = _RE_SOTA_WITH_NOUN.sub(_sota_with_noun, text)
        text = _RE_NEW_SOTA.sub("new ", text)
        text = _RE_SOTA_CLAIM.sub(_sota_claim, text)
        text = _RE_SOTA_NOUN.sub(_sota_noun, text)
        if text is not before and folded is not None:
            folded = text.lower()  # the replacements are ASCII: the text stays foldable
    if not keep_superior and _has(folded, ("superior",)):
        text = _RE_SUPERIOR_TO.sub(lambda m: _keep_case(m.group(0), "better than"), text)
        text = _RE_SUPERIORITY.sub(_superiority, text)
        text = _RE_SUPERIOR.sub(lambda m: _keep_case(m.group(0), "better"), text)
        if folded is not None:
            folded = text.lower()
    if _has(folded, _PRAISE_PIECES):
        text = _RE_PRAISE_BEFORE_NOUN.sub(_praise_before_noun, text)
    if _has(folded, ("breakthrough",)):
        text = _RE_BREAKTHROUGH.sub(lambda m: _keep_case(m.group(0), "advance" + m.group(1)),
                                    text)
    if _has(folded, ("revolution",)):
        text = _RE_REVOLUTIONIZE.sub(
            lambda m: _keep_case(m.group(0), _REVOLUTION_TO_CHANGE[m.group(1).lower()]), text)
    if _has(folded, ("cutting-edge",)):
        text = _RE_CUTTING_EDGE.sub(lambda m: _keep_case(m.group(0), "recent"), text)
    if folded is not None:
        folded = text.lower()
    if _has(folded, _DROPPED_PRAISE_PIECES) and _RE_DROPPED_PRAISE.search(text):
        text = _drop_word(text, _RE_DROPPED_PRAISE)
        if folded is not None:
            folded = text.lower()
    if not _has(folded, _NEW_WORD_PIECES):
        return text
    if _RE_A_NEW_WORD.search(text):
        # "a novel method" is just "a method": what a paper proposes is new by definition.
        text = _drop_word(text, _RE_A_NEW_WORD)
    return _RE_NEW_WORD.sub(lambda m: _keep_case(m.group(0), "new"), text)


# ----------------------------------------------------------- self-reference
_SELF = rf"(?:this|the present|the current)\s+(?:[a-z]+\s+)?(?:{PAPER_NOUN})"
_RE_AIM = re.compile(
    rf"^(?:the\s+)?(?:(?:primary|main|principal|overall|central|key|major)\s+)?"
    rf"(?:objective|aim|goal|purpose|focus|intention|intent)\s+of\s+{_SELF}\s+(?:is|was)\s+to\s+"
    r"(?:(?P<adverb>\w+ly)\s+)?(?P<verb>[a-z]+)\b", re.I)
_RE_SELF_SUBJECT = re.compile(
    rf"^{_SELF}\s+(?:(?P<adverb>\w+ly|also|further|then|first|additionally)\s+)?"
    r"(?P<verb>[a-z]+)\b", re.I)
_RE_SELF_ADJUNCT = re.compile(
    rf",?\s*\b(?:in|of|from|by|throughout|within|for|through)\s+{_SELF}\b(?:\s*,)?", re.I)
_RE_SELF_OPENER = re.compile(rf"^(?:In|Through|Within|Throughout|With)\s+{_SELF}\s*,?\s*", re.I)
_RE_SELF_ANY = re.compile(rf"\b{_SELF}\b", re.I)
_RE_REPORT_FRAME = re.compile(r"(?:reports?|notes?|states?|writes?) that ")
_RE_HEREIN = re.compile(r",?\s*\bherein\b,?|\bhereby\s+", re.I)
# Whether either is in a sentence, asked without re.I of the folded sentence (text.Caseless).
_SELF_OR_HEREIN = Caseless(rf"\b{_SELF}\b|\bherein\b|\bhereby\s")
_NOT_VERBS = frozenset(["is", "was", "has", "had", "does", "seems", "appears", "remains", "can",
                        "could", "will", "would", "may", "might", "must", "should", "aims"])


def _agree(verb: str, singular: bool) -> str | None:
    """The verb for the authors as subject, or None when it is not a verb of what they do."""
    lowered = verb.lower()
    if lowered in _NOT_VERBS:
        return None
    base = plural_base(lowered)
    if base is None:
        if lowered.endswith(("ed", "ing", "ly", "ion", "al")) or len(lowered) < 3:
            return None
        base = lowered  # "to investigate": already the base form
    return third_singular(base) if singular else base


def _authors_do(body: str, subject: str, singular: bool) -> str | None:
    """'this study evaluates X' / 'the aim of this paper is to study X' -> 'SUBJECT evaluate(s) X'."""
    for pattern in (_RE_AIM, _RE_SELF_SUBJECT):
        match = pattern.match(body)
        if not match:
            continue
        verb = _agree(match.group("verb"), singular)
        if verb is not None:
            adverb = match.group("adverb")
            return f"{subject} {adverb + ' ' if adverb else ''}{verb}{body[match.end():]}"
    return None


def rewrite_self_reference(sentence: str, subject: str, singular: bool) -> str:
    """'SUBJECT reports that this study evaluates X' -> 'SUBJECT evaluates X'; 'The aim of this
    paper is to study X' -> 'SUBJECT studies X'; 'the method proposed in this paper' -> 'the
    method proposed'; what is left -> 'the study'. `subject` names the authors as this
    sentence should ('Zhang et al.' in a lead, 'They' later)."""
    lowered = sentence.lower()
    if not holds(lowered, ("this ", "present ", "current ", "here")) or (
            not _SELF_OR_HEREIN.search(sentence, fold(sentence))):
        return sentence
    original = sentence
    sentence = _RE_HEREIN.sub("", sentence)
    # (The subject said as it is, then the frame: no pattern compiled for each subject.)
    frame = (_RE_REPORT_FRAME.match(sentence, len(subject) + 1)
             if sentence.startswith(subject + " ") else None)
    body = sentence[frame.end():] if frame else sentence
    rewritten = _authors_do(body, subject, singular)
    if rewritten is None and frame is None:
        rewritten = _authors_do(_RE_SELF_OPENER.sub("", body), subject, singular)
    if rewritten is not None:
        sentence = rewritten
    sentence = _RE_SELF_OPENER.sub("", sentence)
    sentence = _RE_SELF_ADJUNCT.sub("", sentence)
    # Whatever is left ("This study is the first ..."): the reporter's "the study".
    sentence = _RE_SELF_ANY.sub(
        lambda m: _keep_case(m.group(0), "the " + m.group(0).split()[-1]), sentence)
    sentence = re.sub(r"\s+([,.;:])", r"\1", sentence)
    return sentence[:1].upper() + sentence[1:] if sentence[:1].islower() and (
        rewritten is not None or not original[:1].islower()) else sentence


# ---------------------------------------------------------------- the pass
def edit_sentence(sentence: str, subject: str, singular: bool) -> str:
    """One sentence through the sub-editor's pass: hype made plain, the paper's talk of itself
    turned into what the authors do, pointers at what is not there taken out where a rule can.
    `subject` names the authors as this sentence does ('Zhang et al.', or 'They' later on)."""
    sentence = rewrite_self_reference(neutralize_hype(sentence), subject, singular)
    return repair_loose_ends(sentence, subject, singular)


# ------------------------------------------------------------- loose ends
# What a gerund after "address this gap by ..." is in the base form.
_GERUND_BASE = {
    "introducing": "introduce", "proposing": "propose", "leveraging": "leverage",
    "providing": "provide", "enabling": "enable", "integrating": "integrate",
    "developing": "develop", "using": "use", "presenting": "present",
    "incorporating": "incorporate", "conducting": "conduct", "learning": "learn",
    "generating": "generate", "employing": "employ", "applying": "apply",
    "analyzing": "analyze", "analysing": "analyse", "training": "train", "exploring": "explore",
    "creating": "create", "identifying": "identify", "evaluating": "evaluate",
    "synthesizing": "synthesize", "combining": "combine", "replacing": "replace",
    "extending": "extend", "aligning": "align", "investigating": "investigate",
    "utilizing": "utilize", "offering": "offer", "refining": "refine", "designing": "design",
    "curating": "curate", "modeling": "model", "building": "build", "constructing": "construct",
    "formulating": "formulate", "exploiting": "exploit", "adopting": "adopt",
    "augmenting": "augment", "adapting": "adapt", "embedding": "embed", "encoding": "encode",
    "deriving": "derive", "unifying": "unify", "establishing": "establish",
    "benchmarking": "benchmark", "releasing": "release", "collecting": "collect",
    "decomposing": "decompose", "distilling": "distill", "casting": "cast", "framing": "frame",
    "reformulating": "reformulate", "studying": "study", "examining": "examine",
    "defining": "define", "devising": "devise", "injecting": "inject", "optimizing": "optimize",
}
_FIX_VERBS = (r"address|tackle|fill|bridge|close|solve|overcome|mitigate|resolve|alleviate|"
              r"handle|remedy|fix|narrow|meet|challenge|counter|circumvent|avoid|sidestep|"
              r"break|improve on|go beyond|move beyond|depart from|follow")
_POINTER = r"(?:this|these|those|such|that|the above|the aforementioned|the above-mentioned)"
_RE_FIX_BY = re.compile(
    rf"^(?P<subject>.+?) (?:aim to |seek to |attempt to |propose to |try to )?"
    rf"(?:{_FIX_VERBS})(?:es|s|ed)? {_POINTER} [\w\- ]{{0,40}}? "
    r"by (?:(?P<adverb>\w+ly) )?(?P<gerund>\w+ing)\b")
_RE_FIX_PURPOSE = re.compile(
    rf",? (?:in order |so as |aiming |designed |which aims |that aims |aimed )?to "
    rf"(?:{_FIX_VERBS}|accomplish|achieve|serve|fulfil|fulfill|realize|realise|pursue|reach) "
    rf"{_POINTER}(?: [\w\-]+){{1,4}}?(?=[,.;]|$)")
# "..., addressing these limitations by incorporating X" -> "..., incorporating X".
_RE_FIX_PARTICIPLE = re.compile(
    rf"(?<=, )(?:{'|'.join(v + 'ing' for v in ('address', 'tackl', 'fill', 'bridg', 'clos', 'solv', 'overcom', 'mitigat', 'resolv', 'alleviat', 'handl', 'remedy', 'fix', 'narrow', 'meet'))}) "
    rf"{_POINTER} [\w\- ]{{0,40}}? by (?=\w+ing\b)")


# "SUBJECT address these limitations with the new X" -> "SUBJECT present the new X".
_RE_FIX_WITH = re.compile(
    rf"^(?P<subject>.+?) (?:{_FIX_VERBS})(?:es|s|ed)? {_POINTER}(?: [\w\-]+){{1,3}}? "
    r"(?:with|through|via|using) (?=(?:a|an|the|their|his|her)\b)")
# "that addresses these limitations by enabling X" -> "that enables X".
_RE_FIX_RELATIVE = re.compile(
    rf"\b(?P<pronoun>that|which) (?:{_FIX_VERBS})(?:es|s)? {_POINTER} [\w\- ]{{0,40}}? "
    r"by (?P<gerund>\w+ing)\b")
# "to address this challenge in X" -> "for X".
_RE_FIX_IN = re.compile(
    rf"\bto (?:{_FIX_VERBS}) {_POINTER} (?:[\w\-]+ )?(?:challenges?|problems?|issues?|gaps?|"
    r"tasks?|limitations?|difficult(?:y|ies)|needs?) (?:in|of|for) ")


def _relative(match: re.Match[str]) -> str:
    base = _GERUND_BASE.get(match.group("gerund"))
    if base is None:
        return match.group(0)
    return f"{match.group('pronoun')} {third_singular(base)}"


# The pointers as every rule of repair_loose_ends has them, after a space.
_POINTERS = (" this ", " these ", " those ", " such ", " that ", " the above", " the aforementioned ")
# What every rule of repair_loose_ends needs: a verb of fixing (a stem of one of the
# patterns' verbs, or of their participles), its ending, a space and a pointer. A sentence
# without it is left as it is, without trying the rules one by one.
_RE_FIX_GATE = re.compile(
    r"(?:address|tackl|fill|bridg|clos|solv|overcom|mitigat|resolv|alleviat|handl|remed|fix|"
    r"narrow|meet|challeng|counter|circumvent|avoid|sidestep|break|improve on|go beyond|"
    r"move beyond|depart from|follow|accomplish|achieve|serve|fulfil|realiz|realis|pursue|"
    r"reach)\w* (?:this|these|those|such|that|the above|the aforementioned)")


def repair_loose_ends(sentence: str, subject: str, singular: bool) -> str:
    """'SUBJECT address this gap by introducing X' -> 'SUBJECT introduce X'; '… to tackle these
    issues.' at a clause's end -> dropped: what the gap or the issues are is not in the blurb."""
    if not holds(sentence, _POINTERS) or not _RE_FIX_GATE.search(sentence):
        return sentence
    match = _RE_FIX_BY.match(sentence)
    if match and match.group("subject") == subject and match.group("gerund") in _GERUND_BASE:
        base = _GERUND_BASE[match.group("gerund")]
        verb = third_singular(base) if singular else base
        adverb = match.group("adverb")
        sentence = f"{subject} {adverb + ' ' if adverb else ''}{verb}{sentence[match.end():]}"
    else:
        match = _RE_FIX_WITH.match(sentence)
        if match and match.group("subject") == subject:
            verb = "presents" if singular else "present"
            sentence = f"{subject} {verb} {sentence[match.end():]}"
    sentence = _RE_FIX_RELATIVE.sub(_relative, sentence)
    sentence = _RE_FIX_PARTICIPLE.sub("", sentence)
    sentence = _RE_FIX_IN.sub("for ", sentence)
    return _RE_FIX_PURPOSE.sub("", sentence)
