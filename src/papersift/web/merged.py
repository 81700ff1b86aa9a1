"""A paper's records across sources as its page lists them: each source and version with links, and why they are one paper."""

from __future__ import annotations

from typing import Any

_SOURCES = {"arxiv": "arXiv", "oai": "arXiv", "announce": "arXiv", "snapshot": "arXiv",
            "hf": "Hugging Face daily papers", "biorxiv": "bioRxiv", "medrxiv": "medRxiv",
            "crossref": "Crossref", "file": "a file"}
_SERVERS = {"biorxiv": "https://www.biorxiv.org", "medrxiv": "https://www.medrxiv.org"}


def source_label(source: str) -> str:
    """'biorxiv' -> 'bioRxiv'; 'file:/x/y.jsonl' -> 'a file'."""
    kind = source.split(":", 1)[0]
    return _SOURCES.get(kind, kind)


def id_label(paper_id: str, version: int | None = None) -> str:
    """'2401.01234', 2 -> 'arXiv:2401.01234v2'; 'doi:10.1101/x' -> 'DOI 10.1101/x'."""
    if paper_id.startswith("doi:"):
        return f"DOI {paper_id[4:]}"
    return f"arXiv:{paper_id}" + (f"v{version}" if version else "")


def why(merge: dict[str, Any]) -> str:
    """The reason two records are one, in the page's words."""
    rule, evidence = merge["rule"], merge.get("evidence") or {}
    if rule == "relation":
        kind, source, target = evidence.get("relation"), evidence.get("from", ""), evidence.get(
            "to", "")
        said = merge["reason"].split(" says ", 1)[0]
        if kind == "is-preprint-of":
            return f"{said} says {_doi(source)} was published as {_doi(target)}"
        if kind == "has-preprint":
            return f"{said} says {_doi(source)} has the preprint {_doi(target)}"
        return f"{said} says {_doi(source)} {kind.replace('-', ' ')} {_doi(target)}"
    if rule in ("id", "doi"):
        identifier = evidence.get("identifier", "")
        if identifier.startswith("doi:"):
            return f"same DOI {identifier[4:]}"
        return f"same identifier {identifier}" if identifier else merge["reason"]
    if rule in ("title-authors", "title-abstract"):
        # 'the same title and 3 of 3 authors in common (P. Nosil, ...)' from sources.matching
        return merge["reason"].removeprefix("the ")
    if rule == "title-key":
        return "same title and first author"
    return merge["reason"]


def _doi(paper_id: str) -> str:
    return paper_id[4:] if paper_id.startswith("doi:") else f"arXiv:{paper_id}"


def record_view(record: dict[str, Any]) -> dict[str, Any]:
    """One record of a paper: its sources, versions with links, main links, and why it is
    part of the paper (None for the record the paper is kept under)."""
    pid, kinds = record["id"], [s.split(":", 1)[0] for s in record["sources"]]
    links = dict(record.get("links") or {})
    server = next((k for k in kinds if k in _SERVERS), None)
    versions = []
    for entry in record["versions"] or ([{"version": record["version"], "date": None}]
                                        if record["version"] else []):
        number = entry["version"]
        url = None
        if not pid.startswith("doi:"):
            url = f"https://arxiv.org/abs/{pid}v{number}"
        elif server:
            url = f"{_SERVERS[server]}/content/{pid[4:]}v{number}"
        versions.append({"version": number, "date": entry["date"], "url": url})
    main = links.get("abs") or (f"https://arxiv.org/abs/{pid}" if not pid.startswith("doi:")
                                else None)
    doi_url = f"https://doi.org/{record['doi']}" if record.get("doi") else None
    merge = record.get("merge")
    extras = record.get("extras") or {}
    return {
        "id": pid, "label": id_label(pid), "title": record["title"],
        # An arXiv id read from a file (a snapshot, a dump) is arXiv's record all the same.
        "sources": sorted({"arXiv" if s.startswith("file") and not pid.startswith("doi:")
                           else _via(s, extras.get(s) or {}) for s in record["sources"]}),
        "kind": _kind(kinds, extras),
        "url": main, "pdf": links.get("pdf"), "doi": record.get("doi"), "doi_url": doi_url,
        "versions": versions,
        "relations": record.get("relations") or [],
        "why": why(merge) if merge else None,
        "merge": {"rule": merge["rule"], "reason": merge["reason"]} if merge else None,
    }


def _via(source: str, extras: dict[str, Any]) -> str:
    """'Crossref' for a journal's record, 'bioRxiv via Crossref' for a preprint Crossref
    registered for a server."""
    label = source_label(source)
    institution = extras.get("institution")
    if label == "Crossref" and isinstance(institution, str) and institution.strip():
        return f"{institution.strip()} via Crossref"
    return label


def _kind(kinds: list[str], extras: dict[str, Any]) -> str:
    """What the record is: 'preprint', 'journal article', 'dataset', ... (Crossref's type)."""
    for given in extras.values():
        kind = given.get("type") if isinstance(given, dict) else None
        if isinstance(kind, str) and kind:
            return {"posted-content": "preprint"}.get(kind, kind.replace("-", " "))
    return "preprint" if set(kinds) & {"biorxiv", "medrxiv", "arxiv", "oai", "announce",
                                        "snapshot", "hf", "file"} else "record"
