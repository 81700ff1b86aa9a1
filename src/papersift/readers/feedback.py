"""A reader's own words turned into profile entries they can see and edit: "more: theory", "less: benchmarks", "exclude: autonomous driving"."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_FEEDBACK = 2_000  # characters: a paragraph of wishes, not a document
MAX_PHRASE = 80

# Each pattern reads one clause; the phrase is what follows the cue.
_CUES = (
    ("exclude", r"(?:exclude|hide|block|nothing (?:more )?(?:on|about|from|with)|no more|"
                r"no|never(?: show(?: me)?)?|stop showing(?: me)?|don'?t show(?: me)?"
                r"(?: any(?:thing)?)?(?: (?:on|about))?|not interested in|skip)"),
    ("less", r"(?:less|fewer|not so much|not as much|lower|down ?weight|"
             r"reduce|fewer papers)(?: (?:on|about|of|with))?"),
    ("more", r"(?:more|show me more|give me more|i want more|i'?d like more|i (?:really )?"
             r"(?:like|love|enjoy)|interested in|boost|up ?weight|more papers)"
             r"(?: (?:on|about|of|with))?"),
)
_CLAUSE = re.compile(r"^\s*(" + "|".join(f"(?P<{k}>{p})" for k, p in _CUES) + r")\s*:?\s+(.+)$",
                     re.I)
_EXPLICIT = re.compile(r"^\s*(more|less|exclude)\s*:\s*(.+)$", re.I)
_SPLIT = re.compile(r"[.;\n!?]+|,\s*(?:but|and)?\s*|\s+(?:but|and then|and)\s+(?=(?:"
                    + "|".join(p for _, p in _CUES) + r")\b)", re.I)
_TRAILING = re.compile(r"\s*(?:,|please|thanks|thank you|papers|stuff|things|anymore|"
                       r"any more|in general|too)\s*$", re.I)


@dataclass(frozen=True)
class Entry:
    kind: str  # more, less or exclude
    phrase: str


@dataclass
class Reading:
    """What a piece of feedback says: the entries understood, the clauses not understood."""

    entries: list[Entry]
    not_understood: list[str]


class FeedbackTooLong(ValueError):
    """Feedback over MAX_FEEDBACK characters."""


def _clean(phrase: str) -> str:
    phrase = " ".join(phrase.split()).strip(" '\"“”‘’")
    while True:
        shorter = _TRAILING.sub("", phrase)
        if shorter == phrase:
            break
        phrase = shorter
    if phrase.lower().startswith(("the ", "a ", "an ")):
        phrase = phrase.split(" ", 1)[1]
    return phrase[:MAX_PHRASE].strip()


def read_feedback(text: str) -> Reading:
    """Entries from free text, e.g. "less about benchmarks, more about theory" gives
    less: benchmarks and more: theory; "nothing on autonomous driving" gives an exclusion."""
    if len(text) > MAX_FEEDBACK:
        raise FeedbackTooLong(f"feedback is at most {MAX_FEEDBACK:,} characters "
                              f"(this is {len(text):,}); say it in a few sentences")
    entries: list[Entry] = []
    missed: list[str] = []
    for clause in (c.strip() for c in _SPLIT.split(text) if c and c.strip()):
        entry = _entry(clause)
        if entry is None:
            missed.append(clause)
        elif entry not in entries:
            entries.append(entry)
    return Reading(entries, missed)


def _entry(clause: str) -> Entry | None:
    explicit = _EXPLICIT.match(clause)
    if explicit:
        kind, phrase = explicit.group(1).lower(), _clean(explicit.group(2))
        return Entry(kind, phrase) if phrase else None
    found = _CLAUSE.match(clause)
    if not found:
        return None
    kind = next(k for k, _ in _CUES if found.group(k))
    phrase = _clean(found.group(len(_CUES) + 2))
    return Entry(kind, phrase) if len(phrase) >= 2 else None
