"""Papers a reader brings to start a profile: pasted arXiv ids or links, or a BibTeX file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from papersift.errors import UsageError
from papersift.records import split_arxiv_id

MAX_IMPORT = 2_000_000  # bytes: a reference manager's export of a few thousand entries
_ARXIV_LIKE = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf)/|arxiv:\s*)?"
    r"\b(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)\b", re.I)
_ENTRY = re.compile(r"@\s*([A-Za-z]+)\s*[{(]", re.S)
_FIELD = re.compile(r"(\w[\w-]*)\s*=\s*(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}|\"[^\"]*\"|\d+)",
                    re.S)


class NothingToImport(UsageError):
    """What a reader pasted or uploaded holds nothing that can be read."""


@dataclass
class Found:
    """arXiv ids found, in order, and the entries that name no arXiv paper (with why)."""

    ids: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def _add(found: Found, raw: str) -> bool:
    try:
        paper_id, _ = split_arxiv_id(raw)
    except ValueError:
        return False
    if paper_id not in found.ids:
        found.ids.append(paper_id)
    return True


def read_ids(text: str) -> Found:
    """arXiv ids and links anywhere in pasted text."""
    found = Found()
    for match in _ARXIV_LIKE.finditer(text):
        _add(found, match.group(1))
    return found


def read_bibtex(text: str) -> Found:
    """The arXiv paper of each BibTeX entry (eprint, arXiv journal or URL field)."""
    if len(text.encode("utf-8", "replace")) > MAX_IMPORT:
        raise NothingToImport(f"that file is over {MAX_IMPORT // 1_000_000} MB; export fewer entries")
    starts = [m for m in _ENTRY.finditer(text)
              if m.group(1).lower() not in ("comment", "preamble", "string")]
    if not starts:
        raise NothingToImport("no BibTeX entries found (they start like @article{key, ...)")
    found = Found()
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        body = text[start.end():end]
        key = body.split(",", 1)[0].strip() or f"entry {i + 1}"
        fields = {name.lower(): value.strip("{}\"") for name, value in _FIELD.findall(body)}
        candidates = [fields.get("eprint", ""), fields.get("journal", ""),
                      fields.get("url", ""), fields.get("arxivid", ""), fields.get("note", "")]
        if not any(_add(found, m.group(1)) for c in candidates for m in _ARXIV_LIKE.finditer(c)):
            found.unreadable.append(f"{key}: no arXiv id in it")
    return found


def read_import(text: str) -> Found:
    """BibTeX if it looks like BibTeX, else ids and links; UsageError if neither."""
    if _ENTRY.search(text):
        return read_bibtex(text)
    found = read_ids(text)
    if not found.ids:
        raise NothingToImport("no arXiv ids found: paste ids like 2401.01234 or arXiv links, "
                           "or a BibTeX file")
    return found
