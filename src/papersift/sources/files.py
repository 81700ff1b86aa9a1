"""Local JSON-lines files: the arXiv bulk metadata snapshot layout and papersift's recent-papers layout."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar

import httpx
from isal import igzip, isal_zlib

from papersift import records
from papersift.plugins import Plugins, SourcePlugin
from papersift.records import (
    PaperRecord,
    RecordLimits,
    Skipped,
    SourceError,
    check_record,
    json_kind,
    shown,
    split_arxiv_id,
)
from papersift.settings import Settings
from papersift.sources import SourceOptions, jsontext

T = TypeVar("T")
# arXiv category codes ('cs.LG', 'hep-th', 'math.AG'); lists also carry ACM/MSC class codes.
_CATEGORY = re.compile(r"^[a-z][a-z\-]*(?:\.[A-Za-z][A-Za-z\-]*)?$")
_PARENS = re.compile(r"\([^()]*\)")
_AUTHOR_SPLIT = re.compile(r",|;|\band\b|&")


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    return read_jsonl(file_path(arg), options, RecordLimits.from_settings(settings))


def file_path(arg: str) -> Path:
    """The file a `file:` spec names; SourceError if there is none."""
    path = Path(arg).expanduser()
    if not path.is_file():
        raise SourceError(f"file not found: {path}")
    return path


def _open(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        # ISA-L inflates ~3x faster than zlib (0.6 s against 1.8 s for the 2019 snapshot).
        return igzip.open(path, "rb")
    return path.open("rb")


# Parsing code and line bytes together decide a record, so a line's key covers both: a change
# to this module or to records.py makes every line new again (see line_key).
def _parser_fingerprint() -> bytes:
    try:
        code = Path(__file__).read_bytes() + Path(records.__file__).read_bytes()
    except OSError:  # no source files (a frozen build): fall back to the package version
        from importlib.metadata import version
        code = version("papersift").encode()
    return hashlib.sha256(code).digest()


# Copied for each line: SHA-256 runs in hardware on most CPUs (0.40 s for the snapshot's
# lines here, against 0.64 s for keyed BLAKE2b).
_KEYED_LINE_HASH = hashlib.sha256(_parser_fingerprint())


def line_key(line: bytes) -> int:
    """A signed 64-bit key of one raw line as this parser reads it (for cheap re-ingests)."""
    digest = _KEYED_LINE_HASH.copy()
    digest.update(line)
    return int.from_bytes(digest.digest()[:8], "big", signed=True)


def iter_lines(path: Path) -> Iterator[tuple[int, bytes] | Skipped]:
    """(line number, raw line) for each non-blank line; a truncated or unreadable file ends
    the stream with a Skipped that says why (what was read is kept)."""
    try:
        with _open(path) as lines:
            for number, line in enumerate(lines, start=1):
                if line.strip():
                    yield number, line
    except (OSError, EOFError, igzip.BadGzipFile, isal_zlib.error) as exc:
        yield Skipped("file", f"{path.name}", f"file ends early or is unreadable ({exc})")


def parse_line(line: bytes, where: str, limits: RecordLimits | None = None
               ) -> PaperRecord | Skipped:
    """One raw JSON line -> a checked PaperRecord, or Skipped saying what is wrong with it.

    Whatever the line holds, the answer is one of the two: a record no rule foresaw is
    skipped with the error's name rather than stopping the file.
    """
    limits = limits or _default_limits()
    try:
        data = jsontext.loads(line, limits.json_depth)
    except jsontext.TooDeep as exc:
        return Skipped("file", where, f"line is {exc}")
    except json.JSONDecodeError as exc:
        return Skipped("file", where, f"not valid JSON ({exc.msg})")
    try:
        return check_record(parse_object(data), limits)
    except ValueError as exc:
        return Skipped("file", where, str(exc))
    except Exception as exc:  # noqa: BLE001 (a bug here must cost one line, not the file)
        return Skipped("file", where, f"cannot be read ({type(exc).__name__}: {shown(str(exc))})")


_DEFAULT_LIMITS: list[RecordLimits] = []


def _default_limits() -> RecordLimits:
    """The limits of the settings' defaults, made once per process (tests, read_jsonl)."""
    if not _DEFAULT_LIMITS:
        _DEFAULT_LIMITS.append(RecordLimits.defaults())
    return _DEFAULT_LIMITS[0]


def read_jsonl(path: Path, options: SourceOptions = SourceOptions(),
               limits: RecordLimits | None = None) -> Iterator[PaperRecord | Skipped]:
    """Yield one record per line in the date range; a line that is not a usable paper is
    yielded as Skipped. (`options.limit` is applied by sources.open_source.)"""
    for _, item in read_lines(path, options, limits):
        yield item  # type: ignore[misc]  # no `unchanged`: no KnownLine


class KnownLine(NamedTuple):
    """A line whose key says it gives the record its source last gave for its paper (so it
    was not parsed); the writer confirms that and parses it only if it changed since."""

    key: int
    where: str
    line: bytes


def read_lines(path: Path, options: SourceOptions = SourceOptions(),
               limits: RecordLimits | None = None,
               unchanged: Callable[[list[int]], set[int]] | None = None,
               ) -> Iterator[tuple[int | None, PaperRecord | Skipped | KnownLine]]:
    """The one JSON-lines reader: (line key, what the line gives) for every line, records
    outside the date range left out. With `unchanged` (which of these keys are stored
    unchanged), such lines are given as KnownLine, not parsed."""
    for lines in batches(iter_lines(path), 1000 if unchanged else 1):
        keys = [None if isinstance(item, Skipped) else line_key(item[1]) for item in lines]
        known = unchanged([k for k in keys if k is not None]) if unchanged else set()
        for item, key in zip(lines, keys, strict=True):
            if isinstance(item, Skipped):
                yield None, item
                continue
            number, line = item
            where = f"{path.name}:{number}"
            if key in known:
                yield key, KnownLine(key, where, line)  # type: ignore[arg-type]
                continue
            record = parse_line(line, where, limits)
            if not isinstance(record, PaperRecord) or in_range(record, options):
                yield key, record


def batches(items: Iterator[T], size: int) -> Iterator[list[T]]:
    """Lists of `size` items in order (the last one shorter)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def in_range(record: PaperRecord, options: SourceOptions) -> bool:
    day = (record.announced or record.submitted or "")[:10]
    if options.since and day and day < options.since.isoformat():
        return False
    return not (options.until and day and day > options.until.isoformat())


def parse_object(data: Any) -> PaperRecord:
    """One JSON object in either layout -> PaperRecord; ValueError says what is wrong.

    Every field is type-checked here; lengths, dates and control characters are the
    business of records.check_record, which every record passes before it is stored.
    """
    if not isinstance(data, dict):
        raise ValueError(f"line is {json_kind(data)}, not a JSON object")
    raw_id = data.get("id")
    if raw_id is None or raw_id == "":
        raise ValueError("missing id")
    if isinstance(raw_id, int | float) and not isinstance(raw_id, bool):
        raise ValueError(f"id is {json_kind(raw_id)}, not text: write it in quotes")
    paper_id, version = split_arxiv_id(raw_id)
    title = data.get("title")
    if title is None or (isinstance(title, str) and not title.strip()):
        raise ValueError(f"{paper_id}: missing title")
    title = _text_field(title, "title", paper_id)
    abstract = _text_field(data.get("abstract") or "", "abstract", paper_id)
    if "versions" in data or "update_date" in data or isinstance(data.get("authors"), str):
        return _snapshot_record(data, paper_id, version, title, abstract)
    return _recent_record(data, paper_id, version, title, abstract)


def _text_field(value: Any, name: str, paper_id: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{paper_id}: {name} is {json_kind(value)}, not text")
    return value


def _optional_text(data: dict[str, Any], name: str, paper_id: str) -> str | None:
    """A field that is text or absent: stripped, None when empty; ValueError otherwise."""
    value = data.get(name)
    if value is None:
        return None
    return _text_field(value, name, paper_id).strip() or None


def _names(value: Any, paper_id: str) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{paper_id}: authors is {json_kind(value)}, not a list of names")
    for number, name in enumerate(value, start=1):
        if not isinstance(name, str):
            raise ValueError(f"{paper_id}: author {number} is {json_kind(name)}, not a name")
    return [n.strip() for n in value if n.strip()]


def _categories(value: Any, paper_id: str) -> list[str]:
    """A space-separated string or a list of names; class codes (ACM, MSC) are left out."""
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list):
        raise ValueError(f"{paper_id}: categories is {json_kind(value)}, not a list of "
                         "categories or a space-separated string")
    for number, name in enumerate(value, start=1):
        if not isinstance(name, str):
            raise ValueError(f"{paper_id}: category {number} is {json_kind(name)}, not a name")
    return [c for c in value if _CATEGORY.match(c)]


def _recent_record(
    data: dict[str, Any], paper_id: str, version: int | None, title: str, abstract: str
) -> PaperRecord:
    announced = _iso_day(data.get("announced"), paper_id, "announced")
    return PaperRecord(
        id=paper_id, version=version, title=title, abstract=abstract,
        authors=_names(data.get("authors") or [], paper_id),
        categories=_categories(data.get("categories"), paper_id),
        source="file", announced=announced, comment=_optional_text(data, "comment", paper_id),
        doi=_optional_text(data, "doi", paper_id),
        journal_ref=_optional_text(data, "journal_ref", paper_id),
        links=_arxiv_links(paper_id),
    )


def _snapshot_record(
    data: dict[str, Any], paper_id: str, version: int | None, title: str, abstract: str
) -> PaperRecord:
    authors_raw = data.get("authors") or ""
    if isinstance(authors_raw, str):
        authors = split_author_string(authors_raw)
    else:
        authors = _names(authors_raw, paper_id)
    history = _history(data.get("versions"), paper_id)
    update_date = _iso_day(data.get("update_date"), paper_id, "update_date")
    return PaperRecord(
        id=paper_id, version=history[-1][0] if history else version, title=title,
        abstract=abstract, authors=authors,
        categories=_categories(data.get("categories"), paper_id), source="snapshot",
        submitted=history[0][1] if history else None,
        updated=history[-1][1] if history else update_date,
        doi=_optional_text(data, "doi", paper_id),
        comment=_optional_text(data, "comments", paper_id),
        journal_ref=_optional_text(data, "journal-ref", paper_id),
        license=_optional_text(data, "license", paper_id),
        links=_arxiv_links(paper_id), versions=history,
    )


_VERSION_LABEL = re.compile(r"^v?(\d{1,9})$")


def _history(entries: Any, paper_id: str) -> list[tuple[int, str | None]]:
    """The snapshot's [{version: 'v1', created: RFC 2822 date}, ...], sorted by version."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ValueError(f"{paper_id}: versions is {json_kind(entries)}, not a list")
    history: list[tuple[int, str | None]] = []
    for entry in entries:
        label = entry.get("version") if isinstance(entry, dict) else None
        if isinstance(label, int) and not isinstance(label, bool):
            label = str(label)
        match = _VERSION_LABEL.match(label) if isinstance(label, str) else None
        if match is None and isinstance(label, str) and re.fullmatch(r"v?\d{10,}", label):
            digits = label.lstrip("v")
            raise ValueError(f"{paper_id}: version v{digits[:12]}… ({len(digits):,} digits) "
                             "is out of range")
        try:
            if match is None:
                raise ValueError
            history.append((int(match.group(1)), _rfc2822_day(entry["created"])))
        except (KeyError, TypeError, ValueError, IndexError):
            raise ValueError(f"{paper_id}: invalid version entry {shown(entry)}") from None
    history.sort()
    return history


_MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}


def _rfc2822_day(text: str) -> str:
    """'Mon, 2 Apr 2007 19:18:42 GMT' -> '2007-04-02': the day as written, in its own zone.

    The snapshot's one layout is read directly (the email parser costs ~10x more); anything
    else goes through the email parser, which gives the same day for this layout.
    """
    if not isinstance(text, str):
        raise TypeError(f"not a date: {text!r}")
    parts = text.split()
    if len(parts) == 6 and parts[0].endswith(",") and parts[2] in _MONTHS:
        try:
            return date(int(parts[3]), _MONTHS[parts[2]], int(parts[1])).isoformat()
        except ValueError:
            pass
    return parsedate_to_datetime(text).date().isoformat()


def split_author_string(text: str) -> list[str]:
    """'A. Smith (MIT), B. Jones and C. Wu' -> ['A. Smith', 'B. Jones', 'C. Wu']."""
    flat = " ".join(text.split())
    while "(" in flat:  # affiliations can nest: 'X (Dept (Univ))'
        stripped = _PARENS.sub("", flat)
        if stripped == flat:
            break
        flat = stripped
    names: list[str] = []
    for part in _AUTHOR_SPLIT.split(flat):
        name = part.strip()
        if name.rstrip(".").lower() in {"jr", "sr", "ii", "iii"} and names:
            names[-1] += f", {name}"
        elif len(name) > 1:
            names.append(name)
    return names


def _iso_day(value: Any, paper_id: str, name: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"{paper_id}: {name} is {json_kind(value)}, not a date like 2026-06-30")
    try:
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        raise ValueError(f"{paper_id}: invalid {name} date {shown(value)}") from None


def _arxiv_links(paper_id: str) -> dict[str, str]:
    return {"abs": f"https://arxiv.org/abs/{paper_id}", "pdf": f"https://arxiv.org/pdf/{paper_id}"}


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "file", "a JSON-lines file (.gz accepted), e.g. file:papers.jsonl.gz",
        open_source, local_file=file_path))
