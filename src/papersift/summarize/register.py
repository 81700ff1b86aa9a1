"""The news register's checks: abstract-boilerplate wording, promises of releases, and fragments (sentences without a main verb or ending in a dangling clause).

These read only the text a reader sees. docs/style.md lists what each counts and what it
spares; style.py gathers them with the other house-style rules.
"""

from __future__ import annotations

import re
from functools import lru_cache

from papersift.summarize.text import Caseless, fold, holds

# ------------------------------------------------------------------ register
# Abstract-register words and phrases: what an abstract says of itself that a news desk
# would not print ("extensive experiments", "significantly", "state-of-the-art").
_REGISTER = (
    r"state[- ]of[- ]the[- ]art|SOTA|SoTA|"
    r"extensive(?:ly)?|comprehensive(?:ly)?|"
    r"(?<!statistically )(?<!not )significantly(?! (?:associated|correlated|different)\b)|"
    r"(?<!statistically )(?<!not )(?<!no )significant(?= [a-z])"
    r"(?! (?:differences?|correlations?|associations?|effects? (?:of|on)|predictors?|"
    r"interactions?|at|for)\b)|"
    r"substantial(?:ly)?|considerabl[ey]|notabl[ey]|remarkabl[ey]|"
    r"simple (?:yet|but|and) (?:effective|efficient|powerful)|"
    r"(?:a |an )?(?:wide|broad|diverse) (?:range|variety|array|spectrum) of|"
    r"leverag(?:e|es|ed|ing)|utiliz(?:e|es|ed|ing|ation)|utilis(?:e|es|ed|ing|ation)|"
    r"seamless(?:ly)?|pivotal|crucial(?:ly)?|paramount|plethora|myriad|delv(?:e|es|ing)|"
    r"promising|paves? the way|paving the way|sheds? light|shedding light|"
    r"(?:demonstrat|validat|verif|confirm|prov|show|highlight|illustrat|underscor)\w* "
    r"(?:the |its |their )?(?:effectiveness|efficacy|superiority|advantages?|merits?|"
    r"feasibility|efficiency and effectiveness|effectiveness and efficiency)"
)
RE_REGISTER = re.compile(rf"\b(?:{_REGISTER})\b")
RE_REGISTER_ANY_CASE = Caseless(rf"\b(?:{_REGISTER})\b")
# Pieces of every register word: a text with none of them needs no regular expression.
REGISTER_PIECES = ("state-of", "state of", "sota", "extensive", "comprehensive", "significant",
                   "substantial", "considerab", "notab", "remarkab", "simple yet",
                   "simple but", "simple and", "range of", "variety of", "array of",
                   "spectrum of", "leverag", "utili", "seamless", "pivotal", "crucial",
                   "paramount", "plethora", "myriad", "delv", "promising", "the way",
                   "light", "effectiveness", "efficacy", "superiority", "advantage", "merit",
                   "feasibility")


def register_words(text: str) -> list[str]:
    """The abstract-register words and phrases of a text, as written."""
    lowered = text.lower()
    if not holds(lowered, REGISTER_PIECES):
        return []
    spans = [m.span() for m in RE_REGISTER_ANY_CASE.finditer(text, fold(text))]
    return [text[a:b] for a, b in spans if text[a:b] != "Sota"]


# ------------------------------------------------------------------ releases
_ARTEFACT = (r"(?:source )?code(?:base)?s?|data(?:sets?)?|models?|weights|checkpoints?|"
             r"implementations?|benchmarks?|resources|materials|artifacts|artefacts|toolkit|"
             r"tools?|demos?|project page|software|library|packages?|prompts|scripts|corpus|"
             r"annotations|pipeline|framework|suite|leaderboard|website")
# The release pattern's alternatives, each with the lower-case pieces one of which every match
# of it holds: a text is searched only with the alternatives it holds the pieces of, each on
# its own (the whole pattern opens with no letter the engine can skip to), which finds what
# the whole finds in a third of the time for most texts.
_RELEASE_BRANCHES = (
    # "Code is available at ...", "our models will be made publicly available"
    (rf"\b(?:{_ARTEFACT})\b[^.;]{{0,80}}?\b(?:will be|would be|is|are|has been|have been|"
     r"shall be|to be|will|be)\s+(?:made\s+|released\s+)?(?:publicly\s+|freely\s+|openly\s+|"
     r"fully\s+)?(?:available|released|accessible|open[- ]sourced|public|hosted)"
     r"(?=\s*(?:[.,;)]|$|at\b|on\b|from\b|via\b|online\b|upon\b|here\b|to (?:the )?(?:public|"
     r"community|research)|for (?:download|research|public|non-commercial|academic|"
     r"reproducibility|the community|further)|under\b|in (?:the )?(?:supplementary|repository)))",
     ("availab", "releas", "accessible", "open-sourc", "open sourc", "public", "hosted")),
    # "will release", "plan to open-source", "to be released"
    (r"\b(?:will|shall|plan to|intend to|to be|would|aim to)\s+(?:be\s+)?(?:publicly\s+|"
     r"openly\s+|freely\s+)?(?:release[ds]?|open[- ]sourced?|made (?:publicly |freely )?available|"
     r"make (?:\w+ ){0,4}(?:publicly |freely |openly )?available|publish(?:ed)?)\b",
     ("releas", "open-sourc", "open sourc", "availab", "publish")),
    # "They release the code", "and open-source their implementation"
    (r"\b(?:release[sd]?|releasing|make[s]? (?:publicly |freely )?available|"
     r"making (?:publicly |freely )?available)\s+(?:the |our |their |its |all |his |"
     r"her )?(?:\w+ ){0,2}?(?:code|source code|weights|checkpoints?|implementation)\b",
     ("releas", "availab")),
    (rf"\b(?:release[sd]?|releasing|open[- ]sourc(?:e|es|ed|ing)|make[s]? (?:publicly |freely )?"
     r"available|making (?:publicly |freely )?available)\s+(?:the |our |their |its |all |his |"
     rf"her )(?:\w+ ){{0,2}}?(?:{_ARTEFACT})\b",
     ("releas", "open-sourc", "open sourc", "availab")),
    (r"\b(?:upon|after) (?:acceptance|publication)\b",
     ("upon acceptance", "after acceptance", "upon publication", "after publication")),
    # A link, or a host named as where something is put ("92 GitHub repositories" and
    # "models available on HuggingFace" are what was studied; "code ... available on GitHub"
    # is caught above).
    (r"https?://", ("http",)),
    (r"www\.", ("www.",)),
    (r"\b(?:github|gitlab|huggingface)\.(?:com|io|co)\b", ("github", "gitlab", "huggingface")),
    (r"(?<!available )\b(?:on|at|via|in) (?:GitHub|GitLab|Hugging ?Face|Zenodo)\b(?! repositor)",
     ("github", "gitlab", "hugging", "zenodo")),
)
_RE_RELEASE = Caseless("|".join(source for source, _needs in _RELEASE_BRANCHES))
_RELEASE_ALTERNATIVES = tuple((re.compile(source.lower()), needs)
                              for source, needs in _RELEASE_BRANCHES)


def _release_spans(folded: str) -> list[tuple[int, int]]:
    """The spans _RE_RELEASE.lower.finditer(folded) gives, from the searches of the
    alternatives whose pieces the folded text holds. At each place the whole pattern takes the
    first alternative that matches there, and goes on from its end: so the match is the one of
    the alternatives' next matches that starts first, the earliest alternative on a tie (none
    matches the empty string, and one that cannot match anywhere changes nothing)."""
    held = [pattern for pattern, needs in _RELEASE_ALTERNATIVES if holds(folded, needs)]
    following = [pattern.search(folded) for pattern in held]
    spans: list[tuple[int, int]] = []
    position = 0
    while True:
        first = None
        for number, match in enumerate(following):
            if match is not None and match.start() < position:
                match = following[number] = held[number].search(folded, position)
            if match is not None and (first is None or match.start() < first.start()):
                first = match
        if first is None:
            return spans
        spans.append(first.span())
        position = first.end()


RELEASE_PIECES = ("availab", "releas", "open-sourc", "open sourc", "accessible", "public",
                  "upon ac", "after ac", "upon pub", "after pub", "http", "www.", "github",
                  "gitlab", "huggingface", "zenodo", "shared", "hosted", "publish")


def release_promises(text: str) -> list[str]:
    """Where a text promises or points at a release of code, data or models."""
    return list(_release_promises(text))


# The writer asks of each sentence in every draft that holds it: the answer is kept.
@lru_cache(maxsize=8192)
def _release_promises(text: str) -> tuple[str, ...]:
    lowered = text.lower()
    if not holds(lowered, RELEASE_PIECES):
        return ()
    folded = fold(text)
    if folded is None:
        return tuple(text[m.start():m.end()] for m in _RE_RELEASE.finditer(text, folded))
    return tuple(text[start:end] for start, end in _release_spans(folded))


# ----------------------------------------------------------------- fragments
# Finite verbs that need no context: auxiliaries, copulas and modals.
_AUXILIARIES = frozenset(
    ["is", "are", "was", "were", "am", "has", "have", "had", "do", "does", "did", "can",
     "could", "will", "would", "may", "might", "must", "shall", "should", "cannot", "isn't",
     "aren't", "doesn't", "don't", "didn't", "won't", "can't", "remains", "remain", "becomes",
     "become", "seems", "seem", "appears", "appear"])
# Verbs of reporting and doing that blurbs and abstracts use, in the base form: with "-s",
# "-es" or "-ed" after them, or right after a subject, they are a sentence's main verb.
_VERB_WORDS = """propose present introduce describe develop design build train learn show find report
    demonstrate evaluate investigate explore examine analyze analyse study compare measure
    test achieve improve outperform surpass exceed beat match reach attain obtain reduce cut
    lower increase raise boost speed accelerate enable allow provide offer require need yield
    produce generate create construct derive prove establish characterize quantify estimate
    identify detect recover restore retrieve rank select sample optimize scale transfer
    generalize fail struggle suffer lack operate serve act help keep maintain preserve avoid
    prevent mitigate alleviate overcome address tackle solve handle support combine extend
    apply perform rely depend consist contain include involve integrate incorporate adapt
    align encode decode capture predict compute approximate converge collect curate release
    formulate frame cast unify bring turn let mean hold stay grow drop fall rise win lose
    cost save argue suggest indicate reveal confirm highlight outline discuss summarize survey
    review assess benchmark examine uncover trace link tie connect relate explain account
    focus target aim seek try attempt use employ exploit harness leverage model map view treat
    consider define specify describe document record observe note notice see give take make
    get set put run lead bring replace remove add fuse merge split separate distinguish
    classify cluster segment localize track forecast simulate emulate mimic imitate follow
    precede outperforms inform guide steer control regulate govern shape drive power fuel
    mark signal show enhance strengthen weaken degrade harm hurt threaten protect secure
    attack defend expose leak exceed remain become seem appear stand lie sit rest differ vary
    range span cover exist occur arise emerge persist last close open start begin end finish
    complete compose decompose solve verify validate check refine correct fix repair adjust
    tune calibrate normalize weight count store cache compress expand encode embed project
    rotate shift move place locate position route plan schedule allocate assign distribute
    share pool mix blend balance trade pair"""
VERBS = frozenset(_VERB_WORDS.split())
_IRREGULAR_PAST = frozenset(
    ["found", "made", "took", "gave", "got", "led", "ran", "held", "kept", "brought", "built",
     "began", "became", "grew", "fell", "rose", "won", "lost", "cost", "set", "put", "cut",
     "saw", "shown", "sought", "taught", "thought", "told", "wrote", "knew", "met", "left",
     "stood", "meant", "drove", "went", "came", "did", "had", "said", "spent", "sent"])
_SUBJECTS = frozenset(["they", "it", "he", "she", "authors", "al", "which", "that", "who"])
_DETERMINERS = frozenset(["a", "an", "the", "this", "these", "that", "those", "its", "their",
                          "to", "of", "for", "and", "or", "with", "by", "in", "on", "at", "as",
                          "from", "into", "per", "each", "every", "our", "his", "her", "no"])
_RE_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’\-]*\.?")
# Words a complete sentence does not end on: it stops in mid-clause.
_END_WORDS = """a an the of for to and or but nor with by in on at from into onto via than that which
    whose whom who while whereas where when whether if as such including e.g. i.e. like
    between among across through under about against towards toward within without
    upon its their his her our your every any some no is are was were be been being has have had can could will would may might
    must should shall do does did very e.g i.e vs versus"""
_DANGLING_ENDS = frozenset(_END_WORDS.split())
# "and so on." and "later on." end a sentence; "based on." does not.
_RE_FINE_END = re.compile(r"\b(?:so|later|early|from then|and so) on\W*$", re.I)
# "...: for target domains." A colon, semicolon or dash followed by a short phrase that opens
# with a preposition or a conjunction: what came before it is cut off.
_RE_DANGLING_TAIL = re.compile(
    r"[:;–—]\s+(?:(?:for|to|of|in|on|with|by|from|at|as|and|or|but|which|that|while|where|"
    r"when|such as|including|e\.g\.|i\.e\.)\b)(?:\s+\S+){0,3}\s*[.!?]?$", re.I)


_TAIL_MARKS = (":", ";", "–", "—")
_NOT_VERB_S = ("ss", "us", "is", "ics", "ous", "'s")


def _has_finite_verb(sentence: str) -> bool:
    """Whether a sentence has a word that can be its main verb (the check of docs/style.md):
    an auxiliary, modal or irregular past; a word of a known verb, in any form, after a word
    that is not a determiner or preposition; or an '-ed' or '-s' word in that place followed
    by more words ('LEGO bricks enrich local regions': 'bricks' before 'enrich' counts)."""
    # Most sentences show their verb in the first few words: the rest are not tokenised.
    previous = ""
    for position, token in enumerate(_RE_TOKEN.finditer(sentence)):
        raw = token.group(0)
        word = raw.lower().rstrip(".").replace("’", "'")
        if word in _AUXILIARIES or word in _IRREGULAR_PAST:
            return True
        after_subject = bool(previous) and previous not in _DETERMINERS
        if (previous in _SUBJECTS or (position == 1 and previous in ("this", "that", "these")))\
                and raw[:1].islower():
            return True  # "Tang et al. revisit", "They source"
        if after_subject and previous.endswith("s") and not previous.endswith(_NOT_VERB_S) \
                and raw[:1].islower() and word not in _DANGLING_ENDS and len(word) > 3:
            return True  # "These results underscore", "LEGO bricks enrich"
        if after_subject and len(word) > 2:
            if word in VERBS:
                return True  # "They propose", "Experiments show"
            if word.endswith("ed") and len(word) > 4:
                return True  # "They proposed"; "a proposed method" has a determiner before it
            if word.endswith("s") and not word.endswith(_NOT_VERB_S) and raw[:1].islower() \
                    and _RE_TOKEN.search(sentence, token.end()):  # more words after it
                return True  # "LoGRA reduces memory", or a plural before its verb
        previous = word
    return False


@lru_cache(maxsize=8192)
def fragment(sentence: str) -> str | None:
    """Why a sentence is a fragment ('no main verb', 'ends in "of"', 'cut after ":"'), or None.

    A fragment has no word that can be a main verb (an auxiliary, a modal, a past form or a
    third-person form of a known verb, or a known verb right after its subject), or ends in
    mid-clause: on a function word, or on a short phrase after a colon, semicolon or dash that
    opens with a preposition ("...: for target domains.").
    """
    text = sentence.strip().rstrip(".!?…").rstrip("”\"’')]").strip()
    if not text:
        return "empty"
    last = text.rsplit(None, 1)[-1].lower().strip(",;:")
    if last in _DANGLING_ENDS and not _RE_FINE_END.search(text):
        return f"ends in “{last}”"
    if text.endswith((",", ";", ":", "–", "—", "-")):
        return f"ends in “{text[-1]}”"
    # (The tail opens with one of its four marks: a sentence without them is not searched.)
    tail = (_RE_DANGLING_TAIL.search(sentence.strip()) if holds(sentence, _TAIL_MARKS)
            else None)
    if tail and " and " not in tail.group(0) and " or " not in tail.group(0):
        return "cut after “" + tail.group(0)[:1] + "”"  # a list ("with and without X") is whole
    if not _has_finite_verb(text):
        return "no main verb"
    return None


def fragments(sentences: list[str]) -> list[str]:
    """The fragments among a text's sentences, each with why ('no main verb: ...')."""
    found = []
    for sentence in sentences:
        why = fragment(sentence)
        if why:
            found.append(f"{why}: {sentence[:80]}")
    return found
