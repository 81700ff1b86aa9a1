"""How a blurb names a paper's authors: 'Osband', 'Macina and Sachan', 'Zhang et al.' or 'The authors'."""

from __future__ import annotations

import re
from collections.abc import Sequence

from papersift.summarize.text import clean_latex

_COLLECTIVE = re.compile(
    r"\b(?:collaboration|consortium|team|group|project|committee|organization|organisation|"
    r"initiative|society|association|institute|laboratory|lab|foundation|university|inc|ltd|"
    r"corporation|et al|others|anonymous|authors?)\b", re.I)
_PARTICLES = frozenset(["van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "dos", "das", "ten", "ter", "bin", "al", "el"])
_SUFFIXES = frozenset(["jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "phd"])


def surname(name: str) -> str | None:
    """'Ian Osband' -> 'Osband', 'Ludwig van Beethoven' -> 'van Beethoven', unusable -> None."""
    name = clean_latex(name).strip().strip(",;")
    if not name or _COLLECTIVE.search(name) or any(ch.isdigit() for ch in name) or "@" in name:
        return None
    if "," in name:  # "Osband, Ian"
        name = " ".join(reversed([p.strip() for p in name.split(",", 1)]))
    parts = [p for p in name.split() if p.lower().strip(",") not in _SUFFIXES]
    if not parts:
        return None
    last = [parts[-1]]
    for part in reversed(parts[:-1]):
        if part.lower() in _PARTICLES:
            last.insert(0, part)
        else:
            break
    result = " ".join(last)
    if len(result.replace(".", "")) < 2 or not any(ch.isalpha() for ch in result) or result.endswith("."):
        return None
    return result


def author_naming(authors: Sequence[str]) -> tuple[str, bool]:
    """How the blurb names the authors, and whether the verb is singular.

    1 author: 'Osband'; 2: 'Macina and Sachan'; 3+: 'Zhang et al.'; unusable: 'The authors'.
    """
    names = [a for a in (authors or []) if a and a.strip()]
    if len(names) == 1 and (single := surname(names[0])):
        return single, True
    if len(names) == 2:
        first, second = surname(names[0]), surname(names[1])
        if first and second:
            return f"{first} and {second}", False
    if len(names) >= 3 and (lead := surname(names[0])):
        return f"{lead} et al.", False
    return "The authors", False
