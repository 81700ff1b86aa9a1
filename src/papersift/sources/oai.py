"""arXiv OAI-PMH harvesting (ListRecords with resumption tokens) in the arXiv or arXivRaw metadata format.

The argument is a set, optionally followed by `?prefix=arXivRaw`:

- `oai:cs` (a group), `oai:cs:cs:LG` or `oai:physics:hep-th` (set specs as arXiv names them),
  or a plain category `oai:cs.LG` / `oai:hep-th`, which is turned into its set spec;
- `oai:cs?prefix=arXivRaw` asks for arXivRaw, which carries every version with its date
  (the default `arXiv` format only has the first and the last date).

`--since/--until` become OAI `from/until` (datestamps: the day a record last changed);
`--since` defaults to `since_days` ago, like the arXiv API source.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date, timedelta
from email.utils import parsedate_to_datetime

import httpx

from papersift.plugins import Plugins, SourcePlugin
from papersift.records import PaperRecord, Skipped, SourceError, split_arxiv_id
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.sources.files import split_author_string
from papersift.sources.http import BadResponse, Fetcher

OAI = "{http://www.openarchives.org/OAI/2.0/}"
FORMATS = {"arXiv": "{http://arxiv.org/OAI/arXiv/}", "arXivRaw": "{http://arxiv.org/OAI/arXivRaw/}"}
# Groups whose archives are listed directly, and physics archives that live under `physics:`.
_GROUPS = {"cs", "econ", "eess", "math", "physics", "q-bio", "q-fin", "stat"}
_PHYSICS_ARCHIVES = {
    "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph",
    "nlin", "nucl-ex", "nucl-th", "physics", "quant-ph",
}
_SET_SPEC = re.compile(r"^[a-z][a-z\-]*(?::[a-z][a-z\-]*(?::[A-Za-z][A-Za-z\-]*)?)?$")
_CATEGORY = re.compile(r"^([a-z][a-z\-]*)(?:\.([A-Za-z][A-Za-z\-]*))?$")


def open_source(
    arg: str, options: SourceOptions, settings: Settings, client: httpx.Client | None = None
) -> Iterator[PaperRecord | Skipped]:
    set_spec, prefix = parse_arg(arg)
    since = options.since or date.today() - timedelta(days=settings.since_days)
    if options.until and options.until < since:
        raise SourceError(f"oai: --until {options.until} is before --since {since}")
    params = {"verb": "ListRecords", "metadataPrefix": prefix, "from": since.isoformat()}
    if options.until:
        params["until"] = options.until.isoformat()
    if set_spec:
        params["set"] = set_spec
    return _harvest(params, prefix, settings, client)


def parse_arg(arg: str) -> tuple[str | None, str]:
    """'cs.LG?prefix=arXivRaw' -> ('cs:cs:LG', 'arXivRaw'); 'all' harvests every set."""
    text, _, query = arg.strip().partition("?")
    prefix = "arXiv"
    for part in filter(None, query.split("&")):
        key, _, value = part.partition("=")
        if key != "prefix" or value not in FORMATS:
            raise SourceError(f"oai: unknown option {part!r}; use ?prefix=arXiv or ?prefix=arXivRaw")
        prefix = value
    return to_set_spec(text), prefix


def to_set_spec(text: str) -> str | None:
    """A set spec or an arXiv category/archive name -> the set spec arXiv's OAI server knows."""
    if text in ("", "all", "*"):
        return None
    if ":" in text:
        if not _SET_SPEC.match(text):
            raise SourceError(f"oai: not an OAI set spec: {text!r} (e.g. cs or cs:cs:LG)")
        return text
    match = _CATEGORY.match(text)
    if not match:
        raise SourceError(f"oai: not an arXiv set or category: {text!r} (e.g. cs, cs.LG, hep-th)")
    archive, sub = match.groups()
    if archive in _PHYSICS_ARCHIVES and archive != "physics":
        return f"physics:{archive}:{sub}" if sub else f"physics:{archive}"
    if archive in _GROUPS:
        return f"{archive}:{archive}:{sub}" if sub else archive
    raise SourceError(f"oai: unknown arXiv archive {archive!r} in {text!r}")


def _harvest(
    params: dict[str, str], prefix: str, settings: Settings,
    client: httpx.Client | None,
) -> Iterator[PaperRecord | Skipped]:
    url = settings.oai_url
    page_number = 0
    with Fetcher(settings, client) as fetcher:
        while True:
            page_number += 1
            page = fetcher.get(url, params, parse=lambda r: _parse_page(r.content, prefix))
            for number, item in enumerate(page.items, start=1):
                if isinstance(item, Skipped):
                    item.where = f"{url} page {page_number} record {number}" + (
                        f" ({item.where})" if item.where else "")
                yield item
            if not page.token:
                return
            # Only the token may accompany verb on a resumed request (OAI-PMH 2.0, 3.5).
            params = {"verb": "ListRecords", "resumptionToken": page.token}


class Page:
    def __init__(self, items: list[PaperRecord | Skipped], token: str | None) -> None:
        self.items = items
        self.token = token


def _parse_page(body: bytes, prefix: str) -> Page:
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise BadResponse(f"the OAI-PMH response does not parse ({exc})") from None
    if root.tag != f"{OAI}OAI-PMH":
        raise BadResponse(f"expected an OAI-PMH document, got <{root.tag}>")
    errors = root.findall(f"{OAI}error")
    if errors:
        codes = [e.get("code", "") for e in errors]
        if codes == ["noRecordsMatch"]:
            return Page([], None)
        detail = "; ".join(f"{e.get('code')}: {' '.join((e.text or '').split())}" for e in errors)
        hint = ("; resumption tokens expire daily: run the harvest again (it is idempotent)"
                if "badResumptionToken" in codes else "")
        raise SourceError(f"OAI-PMH error {detail}{hint}")
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise BadResponse("OAI-PMH response without <ListRecords>")
    items: list[PaperRecord | Skipped] = []
    for record in listing.findall(f"{OAI}record"):
        try:
            items.append(parse_record(record, prefix))
        except ValueError as exc:
            identifier = (record.findtext(f"{OAI}header/{OAI}identifier") or "").strip()
            items.append(Skipped("oai", identifier, str(exc)))
    token = (listing.findtext(f"{OAI}resumptionToken") or "").strip()
    return Page(items, token or None)


def parse_record(record: ET.Element, prefix: str = "arXiv") -> PaperRecord:
    """One OAI <record> in arXiv or arXivRaw format -> PaperRecord; ValueError if unusable."""
    header = record.find(f"{OAI}header")
    if header is not None and header.get("status") == "deleted":
        raise ValueError("record deleted upstream")
    ns = FORMATS[prefix]
    meta = record.find(f"{OAI}metadata/{ns}{prefix}")
    if meta is None:
        other = next((n for n in FORMATS if n != prefix
                      and record.find(f"{OAI}metadata/{FORMATS[n]}{n}") is not None), None)
        if other is None:
            raise ValueError(f"no {prefix} metadata")
        prefix, ns, meta = other, FORMATS[other], record.find(f"{OAI}metadata/{FORMATS[other]}{other}")
        assert meta is not None

    def text(name: str) -> str | None:
        value = (meta.findtext(f"{ns}{name}") or "").strip()
        return value or None

    raw_id = text("id")
    if not raw_id:
        raise ValueError("missing <id>")
    paper_id, version = split_arxiv_id(raw_id)
    title = meta.findtext(f"{ns}title") or ""
    if not title.strip():
        raise ValueError(f"{paper_id}: missing title")
    categories = (text("categories") or "").split()
    common = {
        "id": paper_id, "title": title, "abstract": meta.findtext(f"{ns}abstract") or "",
        "categories": categories, "source": "oai", "doi": text("doi"),
        "comment": text("comments"), "journal_ref": text("journal-ref"), "license": text("license"),
        "links": {"abs": f"https://arxiv.org/abs/{paper_id}", "pdf": f"https://arxiv.org/pdf/{paper_id}"},
    }
    if prefix == "arXivRaw":
        history = _raw_versions(meta, ns, paper_id)
        return PaperRecord(
            **common, authors=split_author_string(text("authors") or ""),
            version=history[-1][0] if history else version, versions=history,
            submitted=history[0][1] if history else None,
            updated=history[-1][1] if history else None,
        )
    created = _day(text("created"), paper_id, "created")
    return PaperRecord(
        **common, authors=_structured_authors(meta, ns), version=version,
        submitted=created, updated=_day(text("updated"), paper_id, "updated"),
        versions=[(1, created)] if created else [],
    )


def _structured_authors(meta: ET.Element, ns: str) -> list[str]:
    names = []
    for author in meta.findall(f"{ns}authors/{ns}author"):
        parts = [" ".join((author.findtext(f"{ns}{p}") or "").split())
                 for p in ("forenames", "keyname", "suffix")]
        name = " ".join(p for p in parts if p)
        if name:
            names.append(name)
    return names


def _raw_versions(meta: ET.Element, ns: str, paper_id: str) -> list[tuple[int, str | None]]:
    history: list[tuple[int, str | None]] = []
    for element in meta.findall(f"{ns}version"):
        label = element.get("version", "")
        try:
            number = int(label.lstrip("v"))
            day = parsedate_to_datetime((element.findtext(f"{ns}date") or "").strip()).date()
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"{paper_id}: invalid version entry {label!r}") from None
        history.append((number, day.isoformat()))
    return sorted(history)


def _day(value: str | None, paper_id: str, name: str) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        raise ValueError(f"{paper_id}: invalid <{name}> date {value!r}") from None


def register(plugins: Plugins) -> None:
    plugins.sources.add(SourcePlugin(
        "oai", "an OAI-PMH set or category (?prefix=arXivRaw adds version history;"
                " --since/--until), e.g. oai:cs.LG",
        open_source))
