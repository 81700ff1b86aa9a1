"""The normalized paper record every source yields, the report of a record a source skipped,
and the checks every record passes before it is stored (types, limits, clean text)."""

from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from papersift.errors import PapersiftError

if TYPE_CHECKING:
    from papersift.settings import Settings

_NEW_ID = re.compile(r"^(\d{2}(\d{2})\.\d{4,5})(?:v(\d+))?$")
_OLD_ID = re.compile(r"^([a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{2}(\d{2})\d{3})(?:v(\d+))?$")
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
    """'http://arxiv.org/abs/2401.01234v3' -> ('2401.01234', 3). Raises ValueError if not an arXiv id.

    The id's shape is arXiv's own grammar (new style YYMM.NNNNN, old style archive/YYMMNNN) with
    a month that exists; the version is returned as written (check_record bounds it).
    """
    if not isinstance(raw, str):
        raise ValueError(f"id is {json_kind(raw)}, not text")
    text = _ID_PREFIX.sub("", raw.strip())
    new_id = _NEW_ID.match(text)
    # Too few digits for its month: a trailing zero was lost in a float ('1805.0946').
    if not new_id or _short_for_its_month(new_id.group(1)):
        text = repair_float_id(text) or text
    for pattern in (_NEW_ID, _OLD_ID):
        match = pattern.match(text)
        if match:
            paper_id, month, digits = match.groups()
            if not "01" <= month <= "12":
                raise ValueError(f"not an arXiv id: {shown(raw)} (there is no month {month})")
            if digits is None:
                return paper_id, None
            if len(digits) > 9:
                raise ValueError(f"{paper_id}: version v{digits[:12]}… ({len(digits):,} digits)"
                                 " is out of range")
            return paper_id, int(digits)
    raise ValueError(f"not an arXiv id: {shown(raw)}")


# A DOI: "10." then a registrant code, a slash and a suffix of visible characters
# (Crossref's own advice for matching DOIs; old Wiley DOIs hold <, >, ; and the like).
_DOI = re.compile(r"^10\.\d{4,9}(?:\.\d+)*/[^\s\x00-\x1f\x7f]+$")
_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.I)


def normalize_doi(raw: Any) -> str:
    """'https://doi.org/10.1101/2024.01.02.573' -> '10.1101/2024.01.02.573' (lower case: DOIs
    are case-insensitive); ValueError when it is no DOI ('NA', '', a number)."""
    if not isinstance(raw, str):
        raise ValueError(f"DOI is {json_kind(raw)}, not text")
    text = _DOI_PREFIX.sub("", raw.strip()).strip().lower()
    if not _DOI.match(text):
        raise ValueError(f"not a DOI: {shown(raw)}")
    return text


def doi_id(raw: Any) -> str:
    """The paper id of a work known by its DOI only: 'doi:' and the normalized DOI."""
    return "doi:" + normalize_doi(raw)


@dataclass(slots=True)
class PaperRecord:
    """One paper as a source saw it. Text is kept exactly as given; cleaning happens at render time.

    Dates are ISO strings: YYYY-MM-DD, or a full ISO timestamp where the source gives one.
    `versions` is the history the source knows, as (version number, ISO date) pairs.
    `extras` holds what only this source knows (upvotes, announce type, ...).
    `relations` are links to other records of the same work that the source asserts, as
    (kind, id) pairs with namespaced ids: ('is-preprint-of', 'doi:10.1038/...') from bioRxiv's
    `published` or Crossref's `relation`, ('has-preprint', 'doi:10.1101/...'), and so on
    (papersift.sources.matching reads them when it decides that two records are one paper).
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
    relations: list[tuple[str, str]] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)  # stays last: ingest.prepare hashes it apart

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def published_doi(self) -> str | None:
        """The DOI of the published version this record is a preprint of, when the source says."""
        return next((target.removeprefix("doi:") for kind, target in self.relations
                     if kind == "is-preprint-of" and target.startswith("doi:")), None)


@dataclass(slots=True)
class Skipped:
    """A record a source could not use: where it was (line, entry, page) and why."""

    source: str
    where: str
    reason: str


class SourceError(PapersiftError):
    """An upstream service failed for good (after retries) or cannot be reached."""


# ------------------------------------------------------------------ checks before storage
# C0 controls but tab, newline and carriage return; DEL and the C1 controls; lone surrogates
# and the two non-characters XML forbids. None of them is text a reader can see, and NUL or
# a lone surrogate breaks whatever stores, indexes or serializes the record.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
# Dates, one a line: YYYY-MM-DD, then a time or nothing (a month and a day that may exist).
_DAYS = re.compile(r"(?:\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[^\n]*\n)*"
                   r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[^\n]*")
_BARE_NEW_ID = re.compile(r"^\d\d(?:0[1-9]|1[0-2])\.\d{4,5}$")
_LINK = re.compile(r"^https?://", re.I)
_MAX_INT = 2**53  # the largest integer every JSON reader keeps exactly


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: 'a number (7)', 'an object', 'a list', 'text', ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, int | float):
        return f"a number ({shown(value, 24)})"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def shown(value: Any, width: int = 40) -> str:
    """A value as it can be quoted in a message: its repr, cut short (at any size or depth)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxlong = 2, 4, 4, 24
    short.maxstring = short.maxother = width
    try:
        text = short.repr(value)
    except ValueError:  # an integer too long to print
        return "a number of thousands of digits"
    if isinstance(value, str) and len(value) > width:
        text += f" ({len(value):,} characters)"
    return text


# ASCII bytes that are text: deleting them from an ASCII string leaves its control characters
# (six times faster than the regex's scan, and most text is ASCII).
_ASCII_TEXT = bytes(b for b in range(128) if b in (9, 10, 13) or 32 <= b < 127)


def has_control(text: str) -> bool:
    """Whether the text holds a character clean_text removes."""
    if text.isascii():
        return bool(text.encode("ascii").translate(None, _ASCII_TEXT))
    return _CONTROL.search(text) is not None


def clean_text(text: str) -> str:
    """The text without control characters (tab, newline and carriage return are kept)."""
    return _CONTROL.sub("", text) if has_control(text) else text


@dataclass(frozen=True, slots=True)
class RecordLimits:
    """What a record may hold (the max_* settings); `latest_day` is the last date accepted."""

    title_chars: int
    abstract_chars: int
    authors: int
    field_chars: int
    json_depth: int
    version: int
    latest_day: str

    @classmethod
    def from_settings(cls, settings: Settings) -> RecordLimits:
        ahead = max(0, int(settings.max_days_ahead))
        return cls(
            title_chars=int(settings.max_title_chars),
            abstract_chars=int(settings.max_abstract_chars), authors=int(settings.max_authors),
            field_chars=int(settings.max_field_chars), json_depth=int(settings.max_json_depth),
            version=int(settings.max_version),
            latest_day=(datetime.now(UTC).date() + timedelta(days=ahead)).isoformat())

    @classmethod
    def defaults(cls) -> RecordLimits:
        from papersift.settings import default_settings

        return cls.from_settings(default_settings())


def check_record(record: PaperRecord, limits: RecordLimits) -> PaperRecord:
    """The record with its text cleaned, or ValueError naming the first field that is wrong.

    Every source's records pass here before they are prepared for the store: whatever a source
    (or a plugin) builds, only well-typed values within the limits are stored.
    """
    paper_id = record.id
    if isinstance(paper_id, str) and paper_id.startswith("doi:"):
        if doi_id(paper_id) != paper_id:  # ids are keys: one spelling per work
            raise ValueError(f"id {shown(record.id)} is not a normalized doi: id")
    elif not (isinstance(paper_id, str) and _BARE_NEW_ID.match(paper_id)):
        paper_id, version = split_arxiv_id(record.id)
        if version is not None or paper_id != record.id:
            raise ValueError(f"id {shown(record.id)} is not a bare arXiv id like 2501.00001")
    if _looks_clean(record, limits):
        return record
    try:
        return _checked_fields(record, limits)
    except ValueError as exc:
        raise ValueError(f"{paper_id}: {exc}") from None


def _looks_clean(record: PaperRecord, limits: RecordLimits) -> bool:
    """Whether the record needs no cleaning and breaks no limit, as most do: a few C calls
    decide it. When not, _checked_fields goes field by field and says what is wrong."""
    authors, categories, versions, links = (record.authors, record.categories, record.versions,
                                            record.links)
    if (type(authors) is not list or type(categories) is not list or type(versions) is not list
            or type(links) is not dict or type(record.extras) is not dict or record.extras
            or record.relations
            or len(authors) > limits.authors or len(versions) > limits.version):
        return False
    doi, comment, journal_ref, license = (record.doi, record.comment, record.journal_ref,
                                          record.license)
    shorts = (record.source, *authors, *categories, *links.values(),
              "" if doi is None else doi, "" if comment is None else comment,
              "" if journal_ref is None else journal_ref, "" if license is None else license)
    try:
        text = "\n".join((record.title, record.abstract, *shorts))
    except TypeError:
        return False
    if (has_control(text) or len(record.title) > limits.title_chars or not record.title.strip()
            or len(record.abstract) > limits.abstract_chars
            or max(map(len, shorts)) > limits.field_chars):
        return False
    for href in links.values():
        if not href.startswith(("http://", "https://")):
            return False
    return _numbers_and_days_look_clean(record, limits)


def _numbers_and_days_look_clean(record: PaperRecord, limits: RecordLimits) -> bool:
    version = record.version
    if version is not None and (type(version) is not int or not 1 <= version <= limits.version):
        return False
    days = [d for d in (record.submitted, record.updated, record.announced) if d is not None]
    for entry in record.versions:
        if (type(entry) is not tuple or len(entry) != 2 or type(entry[0]) is not int
                or not 1 <= entry[0] <= limits.version):
            return False
        if entry[1] is not None:
            days.append(entry[1])
    if not days:
        return True
    try:
        joined = "\n".join(days)
    except TypeError:
        return False
    # The pattern admits days 01-31 of any month: only the 29th to the 31st need a calendar.
    return (_DAYS.fullmatch(joined) is not None and max(days)[:10] <= limits.latest_day
            and all(_real_day(d) for d in days if d[8:10] > "28"))


def _real_day(day: str) -> bool:
    try:
        date.fromisoformat(day[:10])
        return True
    except ValueError:
        return False


def _checked_fields(record: PaperRecord, limits: RecordLimits) -> PaperRecord:
    record.title = _checked_text(record.title, "title", limits.title_chars, "max_title_chars")
    if not record.title.strip():
        raise ValueError("missing title")
    record.abstract = _checked_text(record.abstract, "abstract", limits.abstract_chars,
                                    "max_abstract_chars")
    if len(_checked_list(record.authors, "authors")) > limits.authors:
        raise ValueError(f"{len(record.authors):,} authors (limit {limits.authors:,}: max_authors)")
    record.authors = _checked_names(record.authors, "author name", limits)
    record.categories = _checked_names(_checked_list(record.categories, "categories"),
                                       "category", limits)
    record.source = _checked_text(record.source, "source", limits.field_chars, "max_field_chars")
    for name in ("doi", "comment", "journal_ref", "license"):
        value = getattr(record, name)
        if value is not None:
            setattr(record, name, _checked_text(value, name, limits.field_chars,
                                                "max_field_chars"))
    record.version = _checked_version(record.version, limits)
    record.versions = _checked_versions(record.versions, limits)
    for name in ("submitted", "updated", "announced"):
        _check_date(getattr(record, name), name, limits)
    record.links = _checked_links(record.links, limits)
    record.relations = _checked_relations(record.relations, limits)
    record.extras = _checked_extras(record.extras, limits)
    return record


def _checked_text(value: Any, name: str, limit: int, setting: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} is {json_kind(value)}, not text")
    text = clean_text(value)
    if len(text) > limit:
        raise ValueError(f"{name} is {len(text):,} characters long "
                         f"(limit {limit:,}: {setting})")
    return text


def _checked_list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{name} is {json_kind(value)}, not a list")
    return value


def _checked_names(names: list[Any], what: str, limits: RecordLimits) -> list[str]:
    """Short texts (author names, categories): checked all at once, one by one only when
    something is wrong (most records hold nothing to clean)."""
    try:
        joined = "\n".join(names)
    except TypeError:
        bad = next(n for n in names if not isinstance(n, str))
        raise ValueError(f"{what} {shown(bad)} is {json_kind(bad)}, not text") from None
    if names and max(map(len, names)) > limits.field_chars or has_control(joined):
        return [_checked_text(n, what, limits.field_chars, "max_field_chars") for n in names]
    return names


def _checked_version(version: Any, limits: RecordLimits) -> int | None:
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"version is {json_kind(version)}, not a whole number")
    if version < 1:
        raise ValueError(f"version v{version}: versions start at v1")
    if version > limits.version:
        raise ValueError(f"version v{shown(version)} is out of range "
                         f"(limit v{limits.version:,}: max_version)")
    return version


def _checked_versions(history: Any, limits: RecordLimits) -> list[tuple[int, str | None]]:
    entries = _checked_list(history, "versions")
    if len(entries) > limits.version:
        raise ValueError(f"{len(entries):,} versions (limit {limits.version:,}: max_version)")
    checked: list[tuple[int, str | None]] = []
    for entry in entries:
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise ValueError(f"version entry {shown(entry)} is not (number, date)")
        number = _checked_version(entry[0], limits)
        _check_date(entry[1], f"v{number} date", limits)
        checked.append((number, entry[1]))  # type: ignore[arg-type]
    return checked


def _check_date(value: Any, name: str, limits: RecordLimits) -> None:
    if value is None:
        return
    if not isinstance(value, str) or not _DAY.match(value):
        raise ValueError(f"{name} {shown(value)} is not a date like 2026-06-30")
    try:
        date.fromisoformat(value[:10])
    except ValueError:
        raise ValueError(f"{name} {shown(value)} is not a date that exists") from None
    if value[:10] > limits.latest_day:
        raise ValueError(f"{name} {value[:10]} is in the future "
                         f"(latest accepted {limits.latest_day}: max_days_ahead)")


def _checked_links(links: Any, limits: RecordLimits) -> dict[str, str]:
    if not isinstance(links, dict):
        raise ValueError(f"links is {json_kind(links)}, not an object")
    for name, href in links.items():
        if not isinstance(name, str) or not isinstance(href, str):
            raise ValueError(f"link {shown(name)} is {json_kind(href)}, not a URL")
        if not _LINK.match(href) or len(href) > limits.field_chars or _CONTROL.search(href):
            # Shown as a link on the paper's page: only plain web addresses.
            raise ValueError(f"link {shown(name)} is not an http(s) address: {shown(href)}")
    return links


def _checked_relations(relations: Any, limits: RecordLimits) -> list[tuple[str, str]]:
    entries = _checked_list(relations, "relations")
    if len(entries) > limits.version:  # a bound of the same order: a handful per paper
        raise ValueError(f"{len(entries):,} relations (limit {limits.version:,}: max_version)")
    checked: list[tuple[str, str]] = []
    for entry in entries:
        if (not isinstance(entry, tuple | list) or len(entry) != 2
                or not all(isinstance(part, str) and part.strip() for part in entry)):
            raise ValueError(f"relation {shown(entry)} is not (kind, id)")
        kind, target = (_checked_text(part, "relation", limits.field_chars, "max_field_chars")
                        for part in entry)
        checked.append((kind, target))
    return checked


def _checked_extras(extras: Any, limits: RecordLimits) -> dict[str, Any]:
    if not isinstance(extras, dict):
        raise ValueError(f"extras is {json_kind(extras)}, not an object")
    for name, value in extras.items():
        if isinstance(value, str):
            extras[name] = _checked_text(value, str(name), limits.field_chars, "max_field_chars")
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if abs(value) >= _MAX_INT:
                raise ValueError(f"{name} {shown(value, 24)} is out of range")
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{name} is {value}, not a finite number")
        else:
            raise ValueError(f"{name} is {json_kind(value)}: only text, numbers and true/false "
                             "are kept")
    return extras
