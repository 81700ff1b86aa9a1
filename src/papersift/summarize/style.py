"""The house style a blurb is held to (the news register, no hype, no self-reference, no loose ends or fragments, no release promises, the title's name), as checks.

Each rule reads only what a reader sees: the blurb, and the paper's title for the name
rule (the abstract, when known, only helps tell a name from an ordinary title opening).
`papersift eval style` counts the rules over a store or a JSONL file; the built-in writer
uses the same checks to choose among its candidates. docs/style.md describes the rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from papersift.summarize.register import fragments, register_words, release_promises
from papersift.summarize.text import Caseless, clean_latex, fold, holds, split_sentences

HYPE, SELF_REFERENCE, DANGLING, TITLE_NAME = "hype", "self_reference", "dangling", "title_name"
REGISTER, RELEASE, FRAGMENT, SENTENCES = "register", "release", "fragment", "sentences"
RULES = (REGISTER, HYPE, SELF_REFERENCE, DANGLING, FRAGMENT, RELEASE, SENTENCES, TITLE_NAME)
MIN_SENTENCES, MAX_SENTENCES = 2, 3

# ------------------------------------------------------------------------ hype
# Words that praise rather than inform. "novel" is a term of art only in "novel view(s)".
_HYPE_WORDS = (
    r"novel(?![- ]views?\b)|groundbreaking|ground-breaking|revolutionary|revolutioni[sz](?:e|es|ed|ing)|"
    r"unprecedented|remarkabl[ey]|superior(?:ity)?|breakthroughs?|cutting-edge|innovative|"
    r"game-chang(?:ing|er)|unparalleled|unmatched|impressive(?:ly)?|exceptional(?:ly)?|"
    r"extraordinar(?:y|ily)|astonishing(?:ly)?|stunning(?:ly)?|spectacular(?:ly)?|"
    r"phenomenal(?:ly)?|pioneering|first-of-its-kind|paradigm-shifting|unrivall?ed|"
    r"outstanding(?! (?:questions?|problems?|issues?|challenges?|debts?|balances?|claims?)\b)"
)
_RE_HYPE_WORD = Caseless(rf"\b(?:{_HYPE_WORDS})\b")
# "superior" that names a place in anatomy or geography is not praise.
RE_NOT_PRAISE = re.compile(
    r"\b[Ss]uperior (?:temporal|frontal|parietal|colliculus|vena|mesenteric|sagittal|longitudinal|"
    r"olivary|cerebellar|oblique|rectus|[Cc]ourt|limbus|sulcus|gyrus|lobe)|(?<=[a-z,] )Superior\b")
SOTA = r"(?:state[- ]of[- ]the[- ]art|SOTA|SoTA)"
# "state-of-the-art" as a boast about one's own results; "state-of-the-art baselines" is a
# description of what was compared against and stays.
_RE_SOTA_BOAST = Caseless(
    rf"\b(?:achiev\w*|set(?:s|ting)?|establish\w*|reach\w*|attain\w*|deliver\w*|obtain\w*|"
    rf"yield\w*|new|advanc\w*|push\w*|redefin\w*|is|are|becomes?|remains?)\s+(?:(?:a|the)\s+)?"
    rf"(?:new\s+)?{SOTA}(?![- ](?:methods?|models?|baselines?|approaches|systems?|techniques|"
    rf"algorithms?|LLMs?|detectors?|architectures?|networks?|solutions?|tools?|frameworks?|open|"
    rf"proprietary|commercial|closed|large|deep)\b)|"
    rf"\b(?:outperform\w*|surpass\w*|beat\w*|exceed\w*|improv\w*)\s+(?:the\s+)?"
    rf"(?:current\s+|previous\s+|existing\s+)?{SOTA}"
    r"(?=\s*(?:[,.;:)]|$|by\b|in\b|on\b|across\b|for\b|and\b|while\b|with\b))|"
    rf"\b{SOTA}[- ](?:performance|results?|accuracy|scores?|levels?|quality|precision|recall|"
    rf"F1|efficiency|robustness|generalization|capabilit(?:y|ies))\b")

# -------------------------------------------------------------- self-reference
PAPER_NOUN = (
    r"paper|work|study|article|letter|manuscript|thesis|dissertation|note|survey|"
    r"position paper|short paper|chapter|report|contribution|review|tutorial|research|effort"
)
_RE_SELF = Caseless(
    rf"\b(?:this|the present|the current|our)\s+(?:[a-z]+\s+)?(?:{PAPER_NOUN})\b(?! (?:of|on)\b)|"
    r"\bherein\b|\bhereby\b")
# "this line of work", "this body of research": other people's work.
_RE_NOT_SELF = re.compile(r"\bthis (?:line|body|kind|type|area|strand) of\b", re.I)

# -------------------------------------------------------------------- dangling
_DEMONSTRATIVE = r"(?:this|these|those|such)"
_PRONOUN_OPENERS = re.compile(
    r"^(?:(?:it|its|this|these|those|that|such|both|either|neither|he|she|his|her)\b"
    r"(?!\s+(?:is|was|has been|had been)\s+(?:\w+\s+){0,3}?(?:that|to|whether|how)\b)|"
    r"the (?:other|former|latter|rest|remaining|aforementioned|above|same)\b|"
    r"one (?:is|was|of them|of these|of those)\b|"
    r"(?:another|others|here|there)\b(?! (?:is|are|was|were|has|have|exists?)\b))", re.I)
# A sentence that opens a pair ("One is X."), after which "The other is Y." has its referent.
_RE_PAIR_OPENER = re.compile(r"^(?:One|The first|First)\b")
_RE_EXPLETIVE_IT = re.compile(
    r"^it (?:is|was|has been|remains|becomes|turns out|seems|appears|can be|could be|may be|"
    r"must be|should be|would be)\b[^.]*?\b(?:that|to|whether|how|why|when|if)\b", re.I)
_RE_ANAPHORIC_ANYWHERE = Caseless(
    rf"\b(?:{_DEMONSTRATIVE}|the aforementioned|the above(?:-mentioned)?|the said)\s+"
    r"((?:[a-z][\w\-]*\s+){0,2}[a-z][\w\-]*)")
# What every match of _RE_ANAPHORIC_ANYWHERE holds, lower-cased.
_ANAPHORIC_NEEDS = ("this", "these", "those", "such", "the aforementioned", "the above",
                    "the said")
# After a demonstrative: not a noun phrase (the demonstrative is a pronoun, or an idiom).
_NOT_NOUN = frozenset(
    ["is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "may",
     "might", "must", "should", "shall", "as", "that", "which", "who", "of", "in", "on", "for",
     "to", "by", "with", "and", "or", "but", "from", "at", "also", "not", "does", "do", "did",
     "allows", "enables", "makes", "leads", "yields", "results", "means", "suggests", "shows",
     "indicates", "includes", "provides", "requires", "gives", "helps", "improves", "reduces",
     "a", "an", "the"])
# A lowered word a reference may repeat in another form: "method" given, "methods" referred.
_RE_REFERENCE_WORD = re.compile(r"[a-z][a-z\-]{2,}")
_GENERIC_REFERENTS = frozenset(
    ["way", "end", "regard", "respect", "sense", "point", "context", "setting", "case", "paper",
     "work", "study", "article", "direction", "time", "step", "stage", "process", "area", "field",
     "domain", "topic", "line", "space", "purpose", "aim", "goal", "objective", "idea",
     "observation", "insight", "motivation", "intuition", "reason"])
# What a blurb's lead says before its reported content: "Zhang et al. report that ...".
_RE_LEAD_REPORT = re.compile(
    r"^.{1,80}?\b(?:reports?|shows?|finds?|notes?|argues?|observes?|states?|claims?|"
    r"demonstrates?|suggests?|writes?|explains?) that\s+")
_AUTHOR_WORDS = frozenset(["they", "their", "them", "themselves"])


@dataclass(frozen=True, slots=True)
class Finding:
    """One rule a blurb breaks, with the words that break it."""

    rule: str
    evidence: str


def _same_word(a: str, b: str) -> bool:
    """Whether two lowered words are forms of one word ('failure' and 'fails', 'cases' and
    'case'): they share a stem of at least four letters, nearly all of the shorter word."""
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= max(4, min(len(a), len(b)) - 3)


# Pieces of every hype word and boast: a text with none of them needs no regular expression.
HYPE_PIECES = ("novel", "ground", "revolution", "unprecedent", "remarkab", "superior",
                "breakthrough", "cutting", "innovat", "game-chang", "unparallel", "unmatch",
                "impressive", "exceptional", "extraordinar", "astonish", "stunning", "spectacul",
                "phenomenal", "pioneer", "first-of", "paradigm", "unrival", "outstanding",
                "state-of", "state of", "sota")


def hype_words(text: str) -> list[str]:
    """The hype in a text: praise words and 'state-of-the-art' as a boast."""
    lowered = text.lower()
    if not holds(lowered, HYPE_PIECES):
        return []
    spared = {m.start() for m in RE_NOT_PRAISE.finditer(text)}
    folded = fold(text)
    found = [text[m.start():m.end()] for m in _RE_HYPE_WORD.finditer(text, folded)
             if m.start() not in spared and not any(s <= m.start() < s + 20 for s in spared)]
    found += [text[m.start():m.end()] for m in _RE_SOTA_BOAST.finditer(text, folded)]
    return found


def self_references(text: str) -> list[str]:
    """Where a text speaks of itself or its paper ('this paper', 'in this study', 'herein')."""
    folded = fold(text)
    lowered = folded if folded is not None else text.lower()
    if not holds(lowered, ("this ", "present ", "current ", "our ", "here")):
        return []
    return [text[m.start():m.end()] for m in _RE_SELF.finditer(text, folded)
            if not _RE_NOT_SELF.match(text, m.start())]


def _content_start(sentence: str, first: bool) -> str:
    """The words a reader meets first: after 'Zhang et al. report that' in a lead."""
    if first:
        # (The pattern ends in " that": a lead without it is not searched.)
        match = _RE_LEAD_REPORT.match(sentence) if " that" in sentence else None
        if match and len(match.group(0).split()) <= 10:
            return sentence[match.end():]
        return ""  # the lead opens with the authors themselves
    return sentence


def dangling_opener(sentence: str, first: bool, before: str = "") -> str | None:
    """The opening pronoun or demonstrative of a sentence when it points at nothing given.

    In the lead (`first`) every such opener dangles: nothing comes before it. Later, a bare
    'It', 'This' or 'These' takes the sentence before as its referent, and stays; 'the other',
    'the latter' and the like still need two things said before them (`before`, the
    sentence before, opening with 'One ...' gives the first).
    """
    start = _content_start(sentence, first).lstrip("“\"'(")
    if not start:
        return None
    match = _PRONOUN_OPENERS.match(start)
    if not match:
        return None
    word = match.group(0).lower()
    if first:
        if word in ("it", "its") and _RE_EXPLETIVE_IT.match(start):
            return None
        if word in ("there", "here") or word.startswith("another") or word.startswith("others"):
            return None
        return start[: max(len(match.group(0)), start.find(" ", len(match.group(0)) + 1))].strip()
    if word.startswith("the ") and word.split()[1] in ("other", "former", "latter", "rest",
                                                       "remaining", "aforementioned", "same"):
        if word == "the other" and _RE_PAIR_OPENER.match(before):
            return None
        return match.group(0)
    return None


def dangling_references(blurb: str, sentences: list[str] | None = None) -> list[str]:
    """Openers that point at nothing, and 'these fields'-style references whose noun the blurb
    has not given before them. `sentences`: the blurb already split, if it is at hand."""
    found = []
    if sentences is None:
        sentences = split_sentences(blurb)
    given = ""
    for number, sentence in enumerate(sentences):
        opener = dangling_opener(sentence, number == 0, sentences[number - 1] if number else "")
        if opener:
            found.append(opener)
        folded = fold(sentence)
        # Without a demonstrative there is no reference to look for.
        matches = (_RE_ANAPHORIC_ANYWHERE.finditer(sentence, folded)
                   if folded is None or holds(folded, _ANAPHORIC_NEEDS) else ())
        for match in matches:
            phrase = sentence[match.start(1):match.end(1)]
            said = sentence[match.start():match.end()]
            head = phrase.split()[0].lower()
            if head in _NOT_NOUN or head in _AUTHOR_WORDS:
                continue
            if said.lower().startswith("such ") and head in ("as", "a", "an"):
                continue
            words = [w for w in _RE_REFERENCE_WORD.findall(phrase.lower()) if w not in _NOT_NOUN]
            if not words:
                continue
            before = set(_RE_REFERENCE_WORD.findall((given + " " + sentence[:match.start()]).lower()))
            # (A word said before as it is needs no search for its other forms; other forms
            # share their first four letters, so only words that do are compared.)
            if any(w in before for w in words):
                continue
            heads = {w[:4] for w in words if len(w) >= 4}
            if any(_same_word(w, b) for b in before if b[:4] in heads for w in words):
                continue
            if number > 0 and words[0] in _GENERIC_REFERENTS:
                continue  # "in this way", "at this stage": the sentence before is the referent
            if self_references(said):
                continue  # counted as self-reference
            found.append(said)
        given += " " + sentence
    return found


# ------------------------------------------------------------------ title name
_GENERIC_ACRONYMS = frozenset(
    ["ai", "ml", "nlp", "llm", "llms", "vlm", "vlms", "mllm", "mllms", "lvlm", "lvlms", "rl",
     "gnn", "gnns", "cnn", "cnns", "rnn", "rnns", "gan", "gans", "3d", "2d", "4d", "llm-based",
     "qa", "vqa", "rag", "cot", "iot", "api", "apis", "gpu", "gpus", "xai", "ar", "vr", "nerf",
     "ood", "sota", "asr", "tts", "mt", "ir", "cv", "hci", "ui", "gui", "sql", "us", "uk", "eu",
     "covid-19", "ii", "iii", "iv", "i", "rlhf", "dpo", "moe", "vit", "vits", "ai-generated",
     "ai-driven", "ai-based", "ml-based", "dnn", "dnns", "lora", "kv", "ssm", "ssms", "ehr"])
_GENERIC_OPENINGS = frozenset(
    ["position", "survey", "review", "editorial", "tutorial", "perspective", "commentary",
     "overview", "erratum", "corrigendum", "note", "report", "vision", "viewpoint", "opinion",
     "letter", "abstract", "introduction", "background", "keynote", "poster", "demo", "preprint",
     "benchmark", "dataset", "technical report", "case study", "short paper", "extended abstract",
     "problem", "theorem", "lecture notes", "a survey", "a review", "systematization"])
_RE_NAMEISH = re.compile(r"[A-Z].*[A-Z]|[a-z][A-Z]|[A-Za-z].*\d|\d.*[A-Za-z]")


def _name_like(word: str) -> bool:
    """'SILK', 'LoGRA', 'GPT-4o', 'DeepSeek-R1' are names; 'Self-Reports' or 'Multi-Agent' is
    a hyphenated title-case word, not a name."""
    return any(_RE_NAMEISH.search(part) and part.lower() not in _GENERIC_ACRONYMS
               for part in word.strip("()[],.!?").split("-"))


def title_name(title: str, abstract: str = "") -> str | None:
    """The name a title gives its method, model or data ('SILK' of 'SILK: ...'), or None.

    The opening before the title's first colon is a name when it is at most four words and
    has a name-like word (capitals inside, or letters with digits) that is not a common
    acronym, or when the abstract uses the opening itself, capitalised, as a name.
    """
    title = clean_latex(title or "")
    if ":" not in title:
        return None
    opening = title.split(":", 1)[0].strip().strip("“”\"'")
    words = opening.split()
    if not words or len(words) > 4 or len(opening) > 40 or opening.lower() in _GENERIC_OPENINGS:
        return None
    if not opening[0].isupper() and not _name_like(words[0]):
        return None
    namelike = [w for w in words if _name_like(w)
                and w.lower().strip("()[],.") not in _GENERIC_ACRONYMS]
    if namelike and (len(words) <= 2 or _name_like(words[0])):
        return opening
    if abstract and len(words) <= 2 and re.search(
            rf"(?<![.!?]\s)(?<!^)\b{re.escape(opening)}\b", clean_latex(abstract)):
        return opening
    return None


def names_title(blurb: str, name: str) -> bool:
    """Whether the blurb says the name (letter case aside: 'DEFORMER' is 'Deformer'), as a
    word of its own ('SILK' is not in 'SILKWORM')."""
    text, wanted = blurb.lower(), name.lower()
    start = text.find(wanted)
    while start >= 0:
        end = start + len(wanted)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "_-") and not (after.isalnum() or after in "_-"):
            return True
        start = text.find(wanted, start + 1)
    return False


# ------------------------------------------------------------------- the check
def style_findings(text: str, sentences: list[str] | None = None) -> list[Finding]:
    """The rules that need no title (register, hype, self-reference, dangling, fragments,
    releases) on a text read on its own: a blurb, or a TL;DR (its one sentence is its lead)."""
    if sentences is None:
        sentences = split_sentences(text)
    findings = [Finding(REGISTER, w) for w in register_words(text)]
    findings += [Finding(HYPE, w) for w in hype_words(text)]
    findings += [Finding(SELF_REFERENCE, w) for w in self_references(text)]
    findings += [Finding(DANGLING, w) for w in dangling_references(text, sentences)]
    findings += [Finding(FRAGMENT, w) for w in fragments(sentences)]
    findings += [Finding(RELEASE, w) for w in release_promises(text)]
    return findings


def check_style(blurb: str, title: str = "", abstract: str = "") -> list[Finding]:
    """Every rule this blurb breaks (empty: none): a blurb also has 2-3 sentences."""
    sentences = split_sentences(blurb)
    findings = style_findings(blurb, sentences)
    if not MIN_SENTENCES <= len(sentences) <= MAX_SENTENCES:
        findings.append(Finding(SENTENCES, f"{len(sentences)} sentences"))
    name = title_name(title, abstract)
    if name and not names_title(blurb, name):
        findings.append(Finding(TITLE_NAME, name))
    return findings


_RULE_WORDS = {REGISTER: "abstract-register wording", HYPE: "hype", SELF_REFERENCE:
               "talk of the paper itself", DANGLING: "points at what it never said",
               FRAGMENT: "fragment", RELEASE: "release promise", SENTENCES: "not 2-3 sentences",
               TITLE_NAME: "the title's name missing"}


def style_reasons(tldr: str, blurb: str, title: str = "", abstract: str = "") -> list[str]:
    """The house style as a gate for a writer's answer (the LLM's): every rule the blurb
    breaks, and every rule but the sentence count and the name that the TL;DR breaks, as
    reasons worded like the faithfulness gate's ('blurb: release promise: code is available')."""
    reasons = []
    for label, findings in (
            ("tldr", style_findings(tldr) if tldr else []),
            ("blurb", check_style(blurb, title, abstract) if blurb else [])):
        by_rule: dict[str, list[str]] = {}
        for finding in findings:
            by_rule.setdefault(finding.rule, []).append(finding.evidence)
        for rule, evidence in by_rule.items():
            shown = ", ".join(dict.fromkeys(evidence))
            reasons.append(f"{label}: {_RULE_WORDS[rule]}: {shown}")
    return reasons
