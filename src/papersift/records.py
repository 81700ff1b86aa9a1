"""The normalized paper record every source yields, and the report of a record a source skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from papersift.errors import PapersiftError

_NEW_ID = re.compile(r"^(\d{4}\.\d{4,5})(?:v(\d+))?$")
_OLD_ID = re.compile(r"^([a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v(\d+))?$")
_ID_PREFIX = re.compile(r"^(?:https?://(?:export\.)?arxiv\.org/abs/|arxiv:|oai:arXiv\.org:)", re.I)


_FLOAT_ID = re.compile(r"^\d{3,4}\.\d+$")


def _id_digits(yymm: str) -> int:
    """Digits after the dot of a new-style id: four before 2015-01, five from then on."""
    return 4 if yymm < "1501" else 5


def _short_for_its_month(paper_id: str) -> bool:
    yymm, _, number = paper_id.partition(".")
    return len(number) < _id_digits(yymm)


def repair_float_id(text: str) -> str | None:
    """An id that went through a float ('806.1945', '1809.0495399999998') back to '0806.1945'.

    Some metadata dumps parsed ids as numbers, dropping leading and trailing zeros and adding
    binary noise.
    """
    if not _FLOAT_ID.match(text):
        return None
    whole, _, fraction = text.partition(".")
    yymm = whole.zfill(4)
    digits = _id_digits(yymm)
    number = round(float("0." + fraction) * 10**digits)
    if number >= 10**digits:
        return None
    return f"{yymm}.{number:0{digits}d}"


def split_arxiv_id(raw: str) -> tuple[str, int | None]:
    """'http://arxiv.org/abs/2401.01234v3' -> ('2401.01234', 3). Raises ValueError if not an arXiv id."""
    text = _ID_PREFIX.sub("", raw.strip())
    new_id = _NEW_ID.match(text)
    # Too few digits for its month: a trailing zero was lost in a float ('1805.0946').
    if not new_id or _short_for_its_month(new_id.group(1)):
        text = repair_float_id(text) or text
    for pattern in (_NEW_ID, _OLD_ID):
        match = pattern.match(text)
        if match:
            return match.group(1), int(match.group(2)) if match.group(2) else None
    raise ValueError(f"not an arXiv id: {raw!r}")


@dataclass(slots=True)
class PaperRecord:
    """One paper as a source saw it. Text is kept exactly as given; cleaning happens at render time.

    Dates are ISO strings: YYYY-MM-DD, or a full ISO timestamp where the source gives one.
    `versions` is the history the source knows, as (version number, ISO date) pairs.
    `extras` holds what only this source knows (upvotes, announce type, ...).
    """

    id: str
    title: str
    abstract: str
    authors: list[str]
    categories: list[str]
    source: str
    version: int | None = None
    submitted: str | None = None
    updated: str | None = None
    announced: str | None = None
    doi: str | None = None
    comment: str | None = None
    journal_ref: str | None = None
    license: str | None = None
    links: dict[str, str] = field(default_factory=dict)
    versions: list[tuple[int, str | None]] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None


@dataclass(slots=True)
class Skipped:
    """A record a source could not use: where it was (line, entry, page) and why."""

    source: str
    where: str
    reason: str


class SourceError(PapersiftError):
    """An upstream service failed for good (after retries) or cannot be reached."""
