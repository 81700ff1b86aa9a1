"""Everything the store derives from a record alone: hashes, duplicate keys, slugs and rows.

Preparing needs no database, so a bulk ingest runs it in a helper process and the store's
writer only runs SQL. Every store backend takes PreparedRecords.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any, NamedTuple

import orjson

from papersift.records import PaperRecord

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_NOT_WORDS = re.compile(r"\\[a-zA-Z]+|[^\w]+")  # LaTeX commands and punctuation
# Lowercase ASCII: letters, digits and '_' (what \w matches) are kept, the rest is a space.
_ASCII_WORDS = {i: chr(i) if chr(i).isalnum() or chr(i) == "_" else " " for i in range(128)}


def slugify(text: str) -> str:
    """'Zoë Lee-Smith' -> 'zoe-lee-smith': the URL form of a name or a title."""
    if not text.isascii():  # most names and titles are: their NFKD form is themselves
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _NOT_SLUG.sub("-", text.lower()).strip("-") or "x"


def norm_title_key(title: str, authors: Sequence[str]) -> str | None:
    """Normalized title + first author's surname: the fallback identity for duplicates."""
    if title.isascii() and "\\" not in title:  # most titles: the regex's result, 2x faster
        words = title.lower().translate(_ASCII_WORDS).split()
    else:
        if not title.isascii():
            title = unicodedata.normalize("NFKC", title)
        words = _NOT_WORDS.sub(" ", title.lower()).split()
    if len(words) < 3 or not authors:
        return None
    surname = slugify(authors[0].split()[-1]) if authors[0].split() else ""
    return " ".join(words) + "|" + surname


def sort_date(announced: str | None, submitted: str | None) -> str | None:
    """The day a paper is listed under: its first announcement, else its submission."""
    date = announced or submitted
    return date[:10] if date else None


def version_rows(record: PaperRecord) -> list[tuple[str, int, str | None]]:
    """(paper id, version, date) for every version the record knows of."""
    history = dict(record.versions)
    if record.version and record.version not in history:
        history[record.version] = record.submitted if record.version == 1 else None
    return [(record.id, v, d) for v, d in sorted(history.items())]


def links_json(links: dict[str, str]) -> str:
    return orjson.dumps(links, option=orjson.OPT_SORT_KEYS).decode()


_RECORD_FIELDS = tuple(f.name for f in fields(PaperRecord))
_record_values = attrgetter(*_RECORD_FIELDS)
assert _RECORD_FIELDS[-1] == "extras"  # _record_hash puts their JSON text in their place
assert _RECORD_FIELDS[-2] == "relations"  # left out of the hash while empty (below)
# Built once: json.dumps with options builds a new encoder per call.
_EXTRAS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode


def _record_hash(values: tuple[Any, ...], extras_json: str) -> str:
    """A hash of all a source said of a paper: equal hashes mean nothing to update."""
    # orjson encodes every field in one C call; the extras are hashed as their canonical JSON
    # text, which may hold what orjson refuses (integers over 64 bits, say). SHA-256 runs in
    # hardware on most CPUs: here it is faster than BLAKE2b.
    # A record without relations hashes as records did before they had that field, so the
    # hashes a store holds stay valid (no paper of an old store counts as changed).
    payload = orjson.dumps((*(values[:-1] if values[-2] else values[:-2]), extras_json))
    return hashlib.sha256(payload).hexdigest()[:32]


class PreparedRecord(NamedTuple):
    """A record with everything the store derives from it alone (hashes, keys, rows).

    `line_key` is set when the record was read from a raw line whose key
    (sources.files.line_key) lets a later run skip parsing it while it is unchanged.
    """

    values: tuple[Any, ...]  # the PaperRecord's fields in declaration order
    id: str
    source: str
    record_hash: str
    extras_json: str
    paper_row: tuple[Any, ...]  # papers columns id .. norm_key, as a store inserts them
    sort_date: str | None
    doi_key: str | None
    norm_key: str | None
    authors: tuple[str, ...]  # non-empty names in order
    slugs: tuple[str, ...]
    category_rows: list[tuple[str, str, int]]
    version_rows: list[tuple[str, int, str | None]]
    line_key: int | None = None

    def record(self) -> PaperRecord:
        return PaperRecord(*self.values)


def prepare_record(record: PaperRecord, line_key: int | None = None) -> PreparedRecord:
    """Everything about a record that does not depend on the store's content."""
    extras_json = _EXTRAS_JSON(record.extras) if record.extras else "{}"
    key = norm_title_key(record.title, record.authors)
    authors = tuple(n for n in record.authors if n)
    values = _record_values(record)
    return PreparedRecord(
        values=values, id=record.id, source=record.source,
        record_hash=_record_hash(values, extras_json), extras_json=extras_json,
        paper_row=(
            record.id, record.version, record.source, record.title, record.abstract,
            ", ".join(record.authors), record.primary_category, record.submitted,
            record.updated, record.announced, record.doi, record.comment, record.journal_ref,
            record.license, links_json(record.links), key,
        ),
        sort_date=sort_date(record.announced, record.submitted),
        doi_key=record.doi.lower() if record.doi else None, norm_key=key,
        authors=authors, slugs=tuple(map(slugify, authors)),
        category_rows=[(record.id, c, i) for i, c in enumerate(dict.fromkeys(record.categories))],
        version_rows=version_rows(record), line_key=line_key,
    )
