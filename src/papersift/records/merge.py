"""How a record merges into the paper already stored: which source's text wins, what accumulates.

Pure rules over a stored row and an incoming record, so that every store backend merges
the same way; the backend only reads the row and writes the changed fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papersift.records import PaperRecord
from papersift.records.prepare import links_json, norm_title_key, sort_date

# When two sources disagree about a paper's text and neither gives a newer version, the
# one that is closer to arXiv's own record wins. Higher wins; unknown sources rank lowest.
SOURCE_RANK = {"arxiv": 50, "oai": 50, "snapshot": 40, "announce": 30, "file": 20, "hf": 10}

# The papers columns a record's text can change, besides those computed below.
_SCALARS = (
    "title", "abstract", "primary_category", "submitted", "updated", "doi", "comment",
    "journal_ref", "license",
)


def source_kind(source: str) -> str:
    """'file:/x/y.jsonl' -> 'file'; 'arxiv' -> 'arxiv'."""
    return source.split(":", 1)[0]


@dataclass(frozen=True)
class Merge:
    """What merging a record into its stored paper changes."""

    changed: dict[str, Any]   # papers columns whose value changes, with the new value
    wins: bool                # the record's text outranks the stored one
    authors_change: bool      # the author list is replaced by the record's

    @property
    def visible(self) -> bool:
        """Whether a reader would see a difference ('text_source' is bookkeeping)."""
        return bool(set(self.changed) - {"text_source"}) or self.authors_change


def merge(row: Mapping[str, Any], record: PaperRecord) -> Merge:
    """Merge a record into the stored paper `row` (a papers row as a mapping).

    The newest version (then the higher-ranked source) wins the text; empty fields never
    erase known ones; the first announcement is kept.
    """
    current_rank = (row["version"] or 0, SOURCE_RANK.get(source_kind(row["text_source"]), 0))
    incoming_rank = (record.version or 0, SOURCE_RANK.get(source_kind(record.source), 0))
    wins = incoming_rank >= current_rank
    merged: dict[str, Any] = {}
    for name in _SCALARS:
        old, new = row[name], getattr(record, name)
        merged[name] = (new if new not in (None, "") else old) if wins else (
            old if old not in (None, "") else new)
    # The first announcement is the news; replacements are re-announced later.
    known = [d for d in (row["announced"], record.announced) if d]
    merged["announced"] = min(known) if known else None
    stored_links = json.loads(row["links"])
    links = {**stored_links, **record.links} if wins else {**record.links, **stored_links}
    # Compared as values: stores written before orjson hold the same JSON spaced out.
    merged["links"] = row["links"] if links == stored_links else links_json(links)
    merged["version"] = max(row["version"] or 0, record.version or 0) or None
    merged["text_source"] = record.source if wins else row["text_source"]
    authors_change = bool(wins and record.authors
                          and ", ".join(record.authors) != row["authors_text"])
    merged["authors_text"] = ", ".join(record.authors) if authors_change else row["authors_text"]
    merged["norm_key"] = norm_title_key(
        merged["title"], record.authors if authors_change else merged["authors_text"].split(", "))
    merged["sort_date"] = sort_date(merged["announced"], merged["submitted"])
    changed = {k: v for k, v in merged.items() if row[k] != v}
    return Merge(changed=changed, wins=wins, authors_change=authors_change)
