"""Papers a reader brings to start a profile: pasted arXiv ids or links, or a reference manager's export (BibTeX, CSL JSON or RIS, as Zotero and Mendeley write them)."""

from __future__ import annotations

import json
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
        _from_fields(found, [fields.get(k, "") for k in ("eprint", "journal", "url", "arxivid",
                                                          "note", "doi")], key)
    return found


_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  - ?(.*)$")


def _from_fields(found: Found, values: list[str], name: str) -> None:
    """The first arXiv id among an entry's fields, or the entry noted as unreadable."""
    for value in values:
        for match in _ARXIV_LIKE.finditer(value):
            if _add(found, match.group(1)):
                return
    found.unreadable.append(f"{name}: no arXiv id in it")


def read_csl_json(text: str) -> Found:
    """CSL JSON (Zotero's and Mendeley's export): a list of items."""
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise NothingToImport(f"that is not JSON ({exc})") from None
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise NothingToImport("CSL JSON is a list of items; this is not")
    found = Found()
    for number, entry in enumerate(items, 1):
        values = [str(entry.get(k, "")) for k in ("URL", "DOI", "number", "archive_location",
                                                    "note", "id", "arXiv")]
        _from_fields(found, values, str(entry.get("title") or f"item {number}")[:80])
    return found


def read_ris(text: str) -> Found:
    """RIS: records of 'TY  - ...' to 'ER  -' lines."""
    found = Found()
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        tag = _RIS_TAG.match(line.strip())
        if not tag:
            continue
        key, value = tag.groups()
        if key == "ER":
            title = (fields.get("TI") or fields.get("T1") or ["a record"])[0]
            _from_fields(found, [v for k in ("UR", "DO", "N1", "M1", "L1", "AN", "JO")
                                 for v in fields.get(k, [])], title[:80])
            fields = {}
        else:
            fields.setdefault(key, []).append(value)
    return found


def read_import(text: str) -> Found:
    """BibTeX, CSL JSON or RIS by their look, else ids and links; UsageError if none."""
    if len(text.encode("utf-8", "replace")) > MAX_IMPORT:
        raise NothingToImport(f"that file is over {MAX_IMPORT // 1_000_000} MB; export fewer "
                              "entries")
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        return read_csl_json(stripped)
    if re.search(r"^TY  -", text, re.M):
        return read_ris(text)
    if _ENTRY.search(text):
        return read_bibtex(text)
    found = read_ids(text)
    if not found.ids:
        raise NothingToImport("no arXiv ids found: paste ids like 2401.01234 or arXiv links, "
                           "or a BibTeX file")
    return found
