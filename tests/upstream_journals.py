"""Local stand-ins for bioRxiv/medRxiv and Crossref: the arXiv test server plus their routes, serving the real recorded answers.

Usage::

    from tests.upstream_journals import Journals

    with Journals() as server:            # records from ../shared/formats/{biorxiv,crossref}_api
        settings = load_settings(**server.settings_overrides())
        server.details_page = 30          # page sizes small enough to page through
        server.faults = [Fault(status=429, retry_after=1)]   # the faults of tests.upstream

Routes (the same paths as upstream, under `server.url`):

- `/details/{server}/{from}/{to}/{cursor}/json[?category=a_b]`  bioRxiv and medRxiv: the
  records of `server.records[server]` posted in the interval (and of the category), in the
  recorded order, `details_page` a page. The messages block is the real one's shape, counts
  as text ("total": "60568") and the cursor as a number; nothing to serve is answered with
  `{"messages": [{"status": "no posts found"}], "collection": []}`, as the API does.
- `/works?filter=...&rows=N&cursor=*`  Crossref: `server.works` filtered by type, prefix,
  has-abstract and from-/until-created-date (any other filter name is a 400
  validation-failure answer, as Crossref gives), paged by opaque cursors; every page carries a
  `next-cursor` (past the end: an empty page), and the `rate_limit` headers.

The records are read from ../shared/formats at the start of each server (never copied into
the repository); a test may change `server.records` or `server.works` before asking.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from typing import Any

from tests.conftest import shared_format
from tests.upstream import Upstream

BIORXIV_FILES = {"biorxiv": "biorxiv_api/zhangyee_fastpaper-cli_biorxiv_details_2024_cursor0.json",
                 "medrxiv": "biorxiv_api/zhangyee_fastpaper-cli_medrxiv_details_2024_cursor0.json"}
CROSSREF_FILES = ("crossref_api/sckott_habanero_works_query_ecology_author_boettiger.extracted.json",
                  "crossref_api/sckott_habanero_funders_100000001_works_filter_has-assertion.extracted.json")
CHALLENGE_403 = "openreview_api/O0000-code_paper-search-pro_notes_403_ChallengeRequiredError.json"
_DETAILS = re.compile(r"^/details/(\w+)/(\d{4}-\d{2}-\d{2})/(\d{4}-\d{2}-\d{2})/(\d+)(?:/json)?$")
_CROSSREF_FILTERS = ("type", "prefix", "has-abstract", "from-created-date", "until-created-date",
                     "issn", "from-pub-date", "until-pub-date", "has-assertion")
_JSON = "application/json"


def recorded_details(server: str) -> list[dict[str, Any]]:
    """The recorded collection of one server's details answer."""
    return json.loads(shared_format(BIORXIV_FILES[server]).read_bytes())["collection"]


def recorded_works() -> list[dict[str, Any]]:
    """Every item of the recorded Crossref works lists (40 works)."""
    return [item for name in CROSSREF_FILES
            for item in json.loads(shared_format(name).read_bytes())["message"]["items"]]


def challenge_403() -> bytes:
    """The real body of a 403 challenge answer (OpenReview's, 2026-10-01)."""
    return json.dumps(json.loads(shared_format(CHALLENGE_403).read_bytes())["body"]).encode()


class Journals(Upstream):
    """The arXiv test server with bioRxiv/medRxiv details and Crossref works routes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: dict[str, list[dict[str, Any]]] = {
            server: recorded_details(server) for server in BIORXIV_FILES}
        self.works: list[dict[str, Any]] = recorded_works()
        self.details_page = 100
        self.rate_limit: tuple[str, str] | None = ("50", "1s")
        self._cursors: dict[str, int] = {}
        self._cursor_lock = threading.Lock()

    @property
    def biorxiv_url(self) -> str:
        return self.url

    @property
    def crossref_url(self) -> str:
        return self.url

    def settings_overrides(self, **more: Any) -> dict[str, Any]:
        values = {"biorxiv_url": self.biorxiv_url, "crossref_url": self.crossref_url,
                  "mailto": "papersift-tests@example.org"}
        values.update(more)
        return super().settings_overrides(**values)

    def respond(self, path: str, params: dict[str, str], empty: bool) -> tuple[Any, ...]:
        details = _DETAILS.match(path)
        if details:
            return self._details(*details.groups(), params.get("category"), empty)
        if path == "/works":
            return self._works(params, empty)
        return super().respond(path, params, empty)

    # ----------------------------------------------------------- bioRxiv / medRxiv
    def _details(self, server: str, since: str, until: str, cursor: str, category: str | None,
                 empty: bool) -> tuple[int, str, bytes]:
        wanted = (category or "").replace("_", " ").lower()
        matches = [r for r in self.records.get(server, []) if not isinstance(r, dict) or (
                   since <= str(r.get("date", "")) <= until
                   and (not wanted or str(r.get("category", "")).lower() == wanted))]
        start = int(cursor)
        page = [] if empty else matches[start:start + self.details_page]
        if not page:
            return 200, _JSON, b'{"messages":[{"status":"no posts found"}],"collection":[]}'
        dois = {r.get("doi") for r in matches if isinstance(r, dict)}
        message = {"status": "ok", "category": category or "all", "interval": f"{since}:{until}",
                   "funder": "all", "cursor": start, "count": len(page),
                   "count_new_papers": str(len(dois)), "total": str(len(matches))}
        # As the API writes it: slashes escaped, four-space indent.
        body = json.dumps({"messages": [message], "collection": page}, indent=4)
        return 200, _JSON, body.replace("/", "\\/").encode()

    # ----------------------------------------------------------- Crossref
    def _works(self, params: dict[str, str], empty: bool) -> tuple[Any, ...]:
        filters: list[tuple[str, str]] = []
        for pair in filter(None, params.get("filter", "").split(",")):
            name, _, value = pair.partition(":")
            if name not in _CROSSREF_FILTERS:
                return 400, _JSON, _validation_failure(name)
            filters.append((name, value))
        matches = [w for w in self.works if all(_passes(w, n, v) for n, v in filters)]
        rows = int(params.get("rows", "20"))
        cursor = params.get("cursor")
        with self._cursor_lock:
            if cursor in (None, "*"):
                start = 0
            elif cursor in self._cursors:
                start = self._cursors[cursor]
            else:
                return 400, _JSON, json.dumps({
                    "status": "failed", "message-type": "validation-failure",
                    "message": [{"type": "cursor-invalid", "value": cursor,
                                 "message": "Cursor value is invalid or expired"}]}).encode()
            following = f"DnF1ZXJ5VGhlbkZldGNo{len(self._cursors):06d}"
            self._cursors[following] = start + rows
        page = [] if empty else matches[start:start + rows]
        body = {"status": "ok", "message-type": "work-list", "message-version": "1.0.0",
                "message": {"facets": {}, "next-cursor": following,
                            "total-results": len(matches), "items": copy.deepcopy(page),
                            "items-per-page": rows,
                            "query": {"start-index": 0, "search-terms": None}}}
        headers = ({"X-Rate-Limit-Limit": self.rate_limit[0],
                    "X-Rate-Limit-Interval": self.rate_limit[1]} if self.rate_limit else {})
        return (200, "application/json;charset=utf-8",
                json.dumps(body, separators=(",", ":")).encode(), headers)


def _validation_failure(name: str) -> bytes:
    return json.dumps({
        "status": "failed", "message-type": "validation-failure",
        "message": [{"type": "filter-not-available", "value": name,
                     "message": f"Filter {name} specified but there is no such filter for "
                                "this route. Valid filters for this route are: "
                                + ", ".join(_CROSSREF_FILTERS)}]}).encode()


def _created(work: dict[str, Any]) -> str:
    parts = (work.get("created") or {}).get("date-parts") or [[]]
    return "-".join(f"{p:02d}" for p in parts[0]) if parts[0] else ""


def _passes(work: Any, name: str, value: str) -> bool:
    if not isinstance(work, dict):
        return True  # a malformed work a test put in: served as it is
    if name == "type":
        return work.get("type") == value
    if name == "prefix":
        return str(work.get("DOI", "")).startswith(value + "/")
    if name == "has-abstract":
        return ("abstract" in work) == (value == "true")
    if name == "from-created-date":
        return _created(work) >= value
    if name == "until-created-date":
        return _created(work)[:len(value)] <= value
    return True  # the rest are accepted and not applied (the recorded lists already are)
