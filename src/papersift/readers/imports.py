"""Papers a reader brings to start a profile: pasted arXiv ids or links, or a reference manager's export (BibTeX, CSL JSON or RIS, as Zotero and Mendeley write them).

Every reader here takes time in proportion to the text (a request may hold at most
MAX_IMPORT bytes): patterns match only at a known position or with no way to backtrack, and
braces are counted rather than matched by a pattern. A pattern that could rescan a long run
from every position froze the whole server on one 64 KB request (issue 30): the regex
engine holds the GIL while it works.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

import numpy as np

from papersift.errors import UsageError
from papersift.records import split_arxiv_id
from papersift.sources.jsontext import TooDeep, loads

MAX_IMPORT = 2_000_000  # bytes: a reference manager's export of several thousand entries
MAX_JSON_DEPTH = 16  # CSL JSON nests a few levels (item, author list, date parts)
# Entries, records, items or pasted ids in one import: a library of several thousand entries
# fits; 2 MB of bare "@article{" heads (211,111 entries) took 4 s to list as unreadable, and
# each id found is a rating written to the store.
MAX_ENTRIES = 10_000
# A braced value is scanned mark by mark up to this many characters; a longer one by depth
# counts over the whole text (numpy): one '{' a character took 1.2 us each, 2.3 s for 2 MB.
SHORT_VALUE = 512
MAX_FIELDS = 100  # fields read of one entry (BibTeX entries have a few dozen at most)
# An id starts where no word, dot or hyphen goes before it (so the pattern never starts
# inside a run of letters it has already read) and ends at a word's end.
_ARXIV_ID = re.compile(
    r"(?<![\w.\-])(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]*+(?:\.[a-z]{2})?/\d{7}(?:v\d+)?)(?!\w)",
    re.I)
_ENTRY = re.compile(r"@[ \t]*+([A-Za-z]++)[ \t\r\n]*+[{(]")
_FIELD_NAME = re.compile(r"[\s,]*+([A-Za-z_][\w:.+/-]*+)\s*+=\s*+")
_WORD = re.compile(r"[\w:.+/-]++")
# Most fields in one step: a name and a value without braces inside (braced, quoted or a
# word), not followed by a '#' concatenation; anything else takes the general path.
_PLAIN_FIELD = re.compile(
    r'[\s,]*+([A-Za-z_][\w:.+/-]*+)\s*+=\s*+(?:\{([^{}]*+)\}|"([^"{}]*+)"|([\w:.+/-]++))'
    r"(?!\s*+#)")
_CONCAT = re.compile(r"\s*+#\s*+")
_BRACE = re.compile(r"[{}]")
_QUOTE_OR_BRACE = re.compile(r'["{}]')
_RIS_TAG = re.compile(r"^([A-Z][A-Z0-9])  - ?(.*)$")
_SKIPPED_ENTRIES = ("comment", "preamble", "string")


class NothingToImport(UsageError):
    """What a reader pasted or uploaded holds nothing that can be read."""


@dataclass
class Found:
    """arXiv ids found, in order, and the entries that name no arXiv paper (with why)."""

    ids: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    entries: int = 0  # entries or records read (0 for pasted ids)
    # The ids as a set: a membership test in the list made 40,000 pasted ids take 53 s.
    seen: set[str] = field(default_factory=set, repr=False, compare=False)


def _too_many(what: str) -> NothingToImport:
    return NothingToImport(f"that holds more than {MAX_ENTRIES:,} {what}; import at most "
                           f"{MAX_ENTRIES:,} at a time")


def _add(found: Found, raw: str) -> bool:
    try:
        paper_id, _ = split_arxiv_id(raw)
    except ValueError:
        return False
    if paper_id not in found.seen:
        if len(found.ids) >= MAX_ENTRIES:
            raise _too_many("papers")
        found.seen.add(paper_id)
        found.ids.append(paper_id)
    return True


def read_ids(text: str) -> Found:
    """arXiv ids and links anywhere in pasted text."""
    found = Found()
    for match in _ARXIV_ID.finditer(text):
        _add(found, match.group(1))
    return found


def _from_fields(found: Found, values: list[str], name: str) -> None:
    """The first arXiv id among an entry's fields, or the entry noted as unreadable."""
    found.entries += 1
    if found.entries > MAX_ENTRIES:
        raise _too_many("entries")
    for value in values:
        for match in _ARXIV_ID.finditer(value):
            if _add(found, match.group(1)):
                return
    found.unreadable.append(f"{name}: no arXiv id in it")


# ------------------------------------------------------------------ BibTeX
class _Depths:
    """Brace depth after each character of a text, and its characters' codes: made once per
    text, the first time a value is too long to scan mark by mark."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._codes: np.ndarray | None = None
        self._depth: np.ndarray | None = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._codes is None or self._depth is None:
            self._codes = np.frombuffer(self.text.encode("utf-32-le"), dtype=np.uint32)
            step = (self._codes == ord("{")).astype(np.int32)
            step -= self._codes == ord("}")
            self._depth = np.cumsum(step, dtype=np.int32)
        return self._codes, self._depth


def _closing(text: str, start: int, end: int, depths: _Depths) -> int | None:
    """The index just past the value that opens at `start` ('{' or '"'), braces counted;
    None if it does not close before `end`."""
    depth, opener = 0, text[start]
    # Most values hold no braces: their end is the next closer, found without a Python loop.
    closer = text.find("}" if opener == "{" else '"', start + 1, end)
    if closer >= 0 and text.find("{", start + 1, closer) < 0 and (
            opener == "{" or text.find("}", start + 1, closer) < 0):
        return closer + 1
    pattern = _BRACE if opener == "{" else _QUOTE_OR_BRACE
    short = min(end, start + 1 + SHORT_VALUE)
    for mark in pattern.finditer(text, start + 1, short):
        char = mark.group()
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth < 0:
                return mark.end() if opener == "{" else None
        elif depth == 0:  # a quote outside braces closes a quoted value
            return mark.end()
    if short >= end:
        return None
    # A long value: the first place the depth falls below the value's own (a '}' closing it)
    # or, in a quoted value, a quote at its own depth, looked for in windows that double so
    # that each value costs time in proportion to its length, not to the rest of the text.
    codes, levels = depths.arrays()
    base = int(levels[start])  # the depth inside the value ('{' counted, '"' not)
    position, window = start + 1, 4 * SHORT_VALUE
    while position < end:
        stop = min(end, position + window)
        hits = levels[position:stop] < base
        if opener == '"':
            hits |= (codes[position:stop] == ord('"')) & (levels[position:stop] == base)
        if hits.any():
            at = position + int(hits.argmax())
            if levels[at] < base:  # its closing brace (a quoted value: unbalanced)
                return at + 1 if opener == "{" else None
            return at + 1
        position, window = stop, window * 2
    return None


def _value(text: str, start: int, end: int, depths: _Depths) -> tuple[str, int] | None:
    """(a field's value, where it ends): braced, quoted, or a number or macro name."""
    if start >= end:
        return None
    if text[start] in '{"':
        stop = _closing(text, start, end, depths)
        return None if stop is None else (text[start + 1:stop - 1], stop)
    word = _WORD.match(text, start, end)
    return None if word is None else (word.group(), word.end())


def _bibtex_fields(text: str, start: int, end: int, depths: _Depths
                   ) -> tuple[str, dict[str, str], str | None]:
    """(key, fields, what could not be read) of the entry whose body is text[start:end]."""
    comma = text.find(",", start, end)
    key = " ".join(text[start:comma if comma >= 0 else end].split())[:80].strip("{}() ")
    fields: dict[str, str] = {}
    position = comma + 1 if comma >= 0 else end
    for count in itertools.count():
        if position >= end:
            break
        if count >= MAX_FIELDS:  # one entry of 300,000 fields took 1.6 s
            return key, fields, f"more than {MAX_FIELDS} fields; the rest were not read"
        plain = _PLAIN_FIELD.match(text, position, end)
        if plain is not None:
            value = plain.group(2) if plain.group(2) is not None else plain.group(3)
            fields[plain.group(1).lower()] = plain.group(4) if value is None else value
            position = plain.end()
            continue
        name = _FIELD_NAME.match(text, position, end)
        if name is None:
            break  # the entry's closing brace, or text that is not a field
        value = _value(text, name.end(), end, depths)
        if value is None:
            return key, fields, f"the field {name.group(1)[:40]!r} has unbalanced braces or quotes"
        fields[name.group(1).lower()], position = value
        while concat := _CONCAT.match(text, position, end):  # "a" # b: keep the first part
            more = _value(text, concat.end(), end, depths)
            if more is None:
                break
            position = more[1]
    return key, fields, None


def read_bibtex(text: str) -> Found:
    """The arXiv paper of each BibTeX entry (eprint, arXiv journal or URL field)."""
    starts = []
    for match in _ENTRY.finditer(text):
        if match.group(1).lower() not in _SKIPPED_ENTRIES:
            if len(starts) >= MAX_ENTRIES:
                raise _too_many("entries")
            starts.append(match)
    if not starts:
        raise NothingToImport("no BibTeX entries found (they start like @article{key, ...)")
    found, depths = Found(), _Depths(text)
    for i, start in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        key, fields, problem = _bibtex_fields(text, start.end(), end, depths)
        key = key or f"entry {i + 1}"
        if problem and not fields:
            found.entries += 1
            found.unreadable.append(f"{key}: {problem}")
            continue
        _from_fields(found, [fields.get(k, "") for k in ("eprint", "journal", "url", "arxivid",
                                                          "note", "doi")], key)
    return found


# -------------------------------------------------------------- CSL, RIS
def read_csl_json(text: str) -> Found:
    """CSL JSON (Zotero's and Mendeley's export): a list of items."""
    try:
        items = loads(text.encode("utf-8", "replace"), MAX_JSON_DEPTH)
    except TooDeep:
        raise NothingToImport(f"that JSON nests more than {MAX_JSON_DEPTH} levels deep; a CSL "
                              "JSON export nests a few") from None
    except ValueError as exc:
        raise NothingToImport(f"that is not JSON ({str(exc)[:200]})") from None
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
    """RIS: records of 'TY  - ...' to 'ER  -' lines (a last record without its 'ER  -' line is
    read too, and said to be)."""
    found = Found()
    fields: dict[str, list[str]] = {}

    def record_done() -> None:
        title = (fields.get("TI") or fields.get("T1") or ["a record"])[0]
        _from_fields(found, [v for k in ("UR", "DO", "N1", "M1", "L1", "AN", "JO")
                             for v in fields.get(k, [])], title[:80])

    for line in text.splitlines():
        tag = _RIS_TAG.match(line.strip())
        if not tag:
            continue
        key, value = tag.groups()
        if key == "ER":
            record_done()
            fields = {}
        else:
            fields.setdefault(key, []).append(value)
    if fields:
        record_done()
        found.unreadable.append("the last record had no 'ER  -' line (read as if it had)")
    return found


def read_import(text: str) -> Found:
    """BibTeX, CSL JSON or RIS by their look, else ids and links; NothingToImport if none."""
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
                              "or a BibTeX, RIS or CSL JSON file")
    return found
