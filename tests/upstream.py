"""Local stand-ins for arXiv and Hugging Face: one HTTP server on 127.0.0.1 speaking their wire formats, with faults.

Usage::

    from tests.upstream import Fault, Upstream, make_paper

    with Upstream([make_paper("2611.00001", categories=["cs.LG"])]) as server:
        settings = load_settings(**server.settings_overrides())   # or server.env() for a CLI
        server.faults = [Fault(status=503, retry_after=1), Fault(truncate=True)]
        ...
        assert server.requests[0].params["start"] == "0"

Routes (the same paths as upstream, under `server.url`):

- `/api/query`          arXiv API Atom feed (2026 layout): `search_query` with `cat:` terms and a
                        `submittedDate:[YYYYMMDDHHMM TO YYYYMMDDHHMM]` range, `start`,
                        `max_results` (> 30000 -> HTTP 400 error feed, as arXiv does).
- `/oai`                OAI-PMH ListRecords, `metadataPrefix` arXiv or arXivRaw, `set`, `from`,
                        `until`, resumption tokens (`oai_page_size` records a page; new-server
                        tokens without cursor/completeListSize unless `oai_token_attrs`).
- `/rss/<cat>+<cat>`    the announcement RSS of `announce_day` (default: the latest `announced`).
- `/api/daily_papers`   Hugging Face daily papers of `?date=` (papers whose `hf_date` or else
                        `announced` is that day).

Papers are plain dicts made by `make_paper` (or `shared_papers` from the shared data file). A
malformed entry is a paper whose rendering is overridden: `make_paper(..., render={"title": ""})`
or `render={"published": "yesterday"}` puts that text in place of the element. Keys by route:
API id/title/updated/summary/published; OAI id/title/created; RSS title/description/pubDate;
HF id/title/publishedAt. `make_paper(..., deleted=True)` is a deleted OAI record.
`closed_port()` gives a port that refuses connections, for offline tests.

Faults (`server.faults`, consumed one per request, in order; `Fault.path` limits one to a
route; `Fault()` does nothing, so `[Fault(), Fault(status=503)]` hits the second request): an
error status with `Retry-After`, a body cut off mid-way, a slow answer, a replaced body (e.g.
a real sample from ../shared/formats), or arXiv's spurious empty page; and the hostile ones:
a redirect (to itself: a loop), a gzip bomb, a huge or dripping body, headers that drip
(`sticky` faults answer every matching request). Every request is recorded in
`server.requests`.
"""

from __future__ import annotations

import gzip
import json
import re
import socket
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape, quoteattr

_ARXIV_TZ = timezone(timedelta(hours=-5))  # US Eastern (standard time), arXiv's clock
_PHYSICS_ARCHIVES = {
    "astro-ph", "cond-mat", "gr-qc", "hep-ex", "hep-lat", "hep-ph", "hep-th", "math-ph",
    "nlin", "nucl-ex", "nucl-th", "quant-ph",
}


@dataclass
class Fault:
    """What to do wrong on one request instead of answering normally."""

    status: int | None = None  # answer with this status (and `body`, or a short HTML page)
    retry_after: float | str | None = None  # Retry-After header: seconds or an HTTP date
    truncate: bool = False  # announce the full Content-Length, send half the body, hang up
    delay: float = 0.0  # sleep this long before answering (to provoke client timeouts)
    body: bytes | None = None  # answer with exactly these bytes (a real sample, an error page)
    empty: bool = False  # answer normally but with no entries (arXiv's spurious empty page)
    path: str | None = None  # only requests whose path starts with this consume the fault
    redirect: str | None = None  # answer 302 to this location (the request's own path: a loop)
    gzip_bomb: int = 0  # answer a gzip body that inflates to this many bytes
    size: int = 0  # answer this many bytes of filler (with `drip`: one `chunk` at a time)
    chunk: int = 1 << 16
    drip: float = 0.0  # seconds between chunks of a `size` body, or between header bytes
    drip_headers: bool = False  # send the status line and headers one byte every `drip` s
    no_length: bool = False  # a `size` body without Content-Length: it ends when we hang up
    sticky: bool = False  # not consumed: every matching request gets it
    content_type: str | None = None  # of a `status` answer's `body` (default: XML)


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    params: dict[str, str]
    time: float  # time.monotonic() on arrival
    headers: dict[str, str]


def make_paper(paper_id: str, **fields: Any) -> dict[str, Any]:
    """A paper as the servers know it; every field can be overridden.

    Fields: title, abstract, authors, categories (primary first), version, submitted and
    updated (ISO timestamps), announced (day), comment, doi, journal_ref, license,
    announce_type, upvotes, num_comments, github_repo, hf_date, deleted, render.
    """
    announced = fields.get("announced", "2026-11-27")
    submitted = fields.get("submitted") or (
        f"{date.fromisoformat(announced) - timedelta(days=1)}T17:30:00Z")
    paper = {
        "id": paper_id, "title": f"Paper {paper_id}", "abstract": f"Abstract of {paper_id}.",
        "authors": ["Ada Lovelace", "Alan Turing"], "categories": ["cs.LG"], "version": 1,
        "submitted": submitted, "updated": submitted, "announced": announced, "comment": None,
        "doi": None, "journal_ref": None,
        "license": "http://creativecommons.org/licenses/by/4.0/", "announce_type": "new",
        "upvotes": 0, "num_comments": 0, "github_repo": None, "hf_date": None,
        "deleted": False, "render": {},
    }
    paper.update(fields)
    return paper


def make_papers(count: int, prefix: str = "2611", **fields: Any) -> list[dict[str, Any]]:
    """`count` papers 2611.00001, 2611.00002, ... sharing `fields`."""
    return [make_paper(f"{prefix}.{i:05d}", **fields) for i in range(1, count + 1)]


_BOMBS: dict[int, bytes] = {}


def gzip_bomb(size: int) -> bytes:
    """A gzip stream of `size` zero bytes (1 GB compresses to about 1 MB), made once per size."""
    if size not in _BOMBS:
        deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
        block = bytes(1 << 20)
        parts = [deflate.compress(block[:min(len(block), size - start)])
                 for start in range(0, size, len(block))]
        _BOMBS[size] = b"".join(parts) + deflate.flush()
    return _BOMBS[size]


def closed_port() -> int:
    """A local port nobody listens on (connections are refused), for offline tests."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def shared_papers(path: Path, count: int, categories: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The first `count` papers of a recent-papers JSON-lines file (gz), as server papers."""
    wanted = set(categories or ())
    papers = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            data = json.loads(line)
            cats = [c for c in data["categories"] if re.match(r"^[a-z\-]+(\.[A-Za-z\-]+)?$", c)]
            if wanted and not wanted & set(cats):
                continue
            papers.append(make_paper(
                data["id"], title=data["title"], abstract=data["abstract"],
                authors=data["authors"], categories=cats, comment=data.get("comment"),
                announced=data["announced"],
            ))
            if len(papers) >= count:
                break
    return papers


def set_specs(categories: Iterable[str]) -> list[str]:
    """arXiv categories -> the OAI set specs arXiv lists them under ('cs.LG' -> 'cs:cs:LG')."""
    specs = []
    for category in categories:
        archive, _, sub = category.partition(".")
        if archive in _PHYSICS_ARCHIVES:
            specs.append(f"physics:{archive}:{sub}" if sub else f"physics:{archive}")
        elif archive == "physics":
            specs.append(f"physics:physics:{sub}" if sub else "physics")
        else:
            specs.append(f"{archive}:{archive}:{sub}" if sub else archive)
    return specs


class Upstream:
    """One local server for every upstream; a context manager (starts on enter, stops on exit)."""

    def __init__(
        self,
        papers: Iterable[dict[str, Any]] = (),
        *,
        oai_page_size: int = 100,
        oai_token_attrs: bool = False,
        announce_day: str | None = None,
    ) -> None:
        self.papers: list[dict[str, Any]] = list(papers)
        self.faults: list[Fault] = []
        self.requests: list[Received] = []
        self.oai_page_size = oai_page_size
        self.oai_token_attrs = oai_token_attrs
        self.announce_day = announce_day
        self._tokens: dict[str, tuple[list[dict[str, Any]], str, int]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle
    def start(self) -> Upstream:
        handler = type("Handler", (_Handler,), {"upstream": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Upstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------- addresses
    @property
    def url(self) -> str:
        assert self._server, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def arxiv_api_url(self) -> str:
        return self.url + "/api/query"

    @property
    def oai_url(self) -> str:
        return self.url + "/oai"

    @property
    def rss_url(self) -> str:
        return self.url + "/rss"

    @property
    def hf_url(self) -> str:
        return self.url + "/api/daily_papers"

    def settings_overrides(self, **more: Any) -> dict[str, Any]:
        """Keyword arguments for load_settings: every endpoint here, no delays, quick retries."""
        values = {
            "arxiv_api_url": self.arxiv_api_url, "oai_url": self.oai_url, "rss_url": self.rss_url,
            "hf_url": self.hf_url, "request_delay": 0.0, "http_backoff": 0.01, "http_timeout": 5.0,
        }
        values.update(more)
        return values

    def env(self, **more: Any) -> dict[str, str]:
        """The same as PAPERSIFT_* environment variables, for running the CLI."""
        return {f"PAPERSIFT_{k.upper()}": str(v) for k, v in self.settings_overrides(**more).items()}

    def requests_to(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path.startswith(path)]

    # ------------------------------------------------------------- internals
    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for index, fault in enumerate(self.faults):
                if fault.path is None or path.startswith(fault.path):
                    return fault if fault.sticky else self.faults.pop(index)
        return None

    def respond(self, path: str, params: dict[str, str], empty: bool) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request."""
        if path == "/api/query":
            return _arxiv_api(self.papers, params, empty)
        if path == "/oai":
            return self._oai(params, empty)
        if path.startswith("/rss/"):
            return self._rss(unquote(path[len("/rss/"):]), empty)
        if path == "/api/daily_papers":
            return self._hf(params, empty)
        return 404, "text/plain", b"not found"

    def _oai(self, params: dict[str, str], empty: bool) -> tuple[int, str, bytes]:
        request_attrs = " ".join(f"{k}={quoteattr(v)}" for k, v in sorted(params.items()))
        if params.get("verb") != "ListRecords":
            return 200, _XML, _oai_error(request_attrs, "badVerb", "Illegal verb")
        token = params.get("resumptionToken")
        if token:
            if token not in self._tokens or len(params) != 2:
                return 200, _XML, _oai_error(
                    request_attrs, "badResumptionToken", f"Invalid resumption token {token}")
            matches, prefix, offset = self._tokens[token]
        else:
            prefix = params.get("metadataPrefix", "")
            if prefix not in ("arXiv", "arXivRaw"):
                return 200, _XML, _oai_error(
                    request_attrs, "cannotDisseminateFormat", f"Unknown format {prefix!r}")
            wanted = params.get("set")
            since, until = params.get("from", ""), params.get("until", "9999")
            matches = [
                p for p in self.papers
                if since <= _datestamp(p) <= until and (
                    not wanted or any(s == wanted or s.startswith(wanted + ":")
                                      for s in set_specs(p["categories"])))
            ]
            offset = 0
            if not matches:
                return 200, _XML, _oai_error(
                    request_attrs, "noRecordsMatch",
                    "No records match the paramaters specified for this selective harvesting request.")
        page = [] if empty else matches[offset:offset + self.oai_page_size]
        following = offset + self.oai_page_size
        token_xml = ""
        if following < len(matches):
            next_token = f"{id(matches) % 100000}|{following + 1}"
            self._tokens[next_token] = (matches, prefix, following)
            attrs = (f" completeListSize='{len(matches)}' cursor='{offset}'"
                     if self.oai_token_attrs else "")
            token_xml = f"<resumptionToken{attrs}>{escape(next_token)}</resumptionToken>"
        elif token:
            attrs = (f" completeListSize='{len(matches)}' cursor='{offset}'"
                     if self.oai_token_attrs else "")
            token_xml = f"<resumptionToken{attrs}/>"
        records = "".join(_oai_record(p, prefix) for p in page)
        return 200, _XML, (
            f"{_OAI_HEAD}<responseDate>{_now()}</responseDate>\n"
            f"<request {request_attrs}>http://oaipmh.arxiv.org/oai</request>\n"
            f"<ListRecords>\n{records}{token_xml}\n</ListRecords>\n</OAI-PMH>\n"
        ).encode()

    def _rss(self, spec: str, empty: bool) -> tuple[int, str, bytes]:
        categories = [c for c in spec.split("+") if c]
        day = self.announce_day or max((p["announced"] for p in self.papers), default="2026-11-27")
        items = [] if empty else [
            p for p in self.papers
            if p["announced"] == day and set(categories) & set(p["categories"])
        ]
        pub = _rfc822(day)
        names = ", ".join(categories)
        body = (
            "<?xml version='1.0' encoding='UTF-8'?>\n"
            '<rss xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:dc="http://purl.org/dc/elements/1.1/"'
            ' xmlns:atom="http://www.w3.org/2005/Atom" xmlns:content="http://purl.org/rss/1.0/modules/content/"'
            ' version="2.0">\n  <channel>\n'
            f"    <title>{escape(names)} updates on arXiv.org</title>\n"
            f"    <link>http://rss.arxiv.org/rss/{escape(spec)}</link>\n"
            f"    <description>{escape(names)} updates on the arXiv.org e-print archive.</description>\n"
            f'    <atom:link href="http://rss.arxiv.org/rss/{escape(spec)}" rel="self" type="application/rss+xml"/>\n'
            "    <docs>http://www.rssboard.org/rss-specification</docs>\n"
            "    <language>en-us</language>\n"
            f"    <lastBuildDate>{pub[:-15]}08:58:05 +0000</lastBuildDate>\n"
            "    <managingEditor>rss-help@arxiv.org</managingEditor>\n"
            f"    <pubDate>{pub}</pubDate>\n"
            "    <skipDays>\n      <day>Sunday</day>\n      <day>Saturday</day>\n    </skipDays>\n"
            + "".join(_rss_item(p, pub) for p in items)
            + "  </channel>\n</rss>\n"
        )
        return 200, "application/rss+xml; charset=utf-8", body.encode()

    def _hf(self, params: dict[str, str], empty: bool) -> tuple[int, str, bytes]:
        days = [p["hf_date"] or p["announced"] for p in self.papers]
        day = params.get("date") or max(days, default="")
        items = [] if empty else [
            _hf_item(p) for p, d in zip(self.papers, days, strict=True) if d == day]
        return 200, "application/json; charset=utf-8", json.dumps(
            items, separators=(",", ":"), ensure_ascii=False).encode()


_XML = "text/xml; charset=utf-8"
_OAI_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/ '
    'http://www.openarchives.org/OAI/2.0/OAI-PMH.xsd">\n'
)


class _Handler(BaseHTTPRequestHandler):
    upstream: Upstream
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler dispatches to
        server = self.upstream
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        with server._lock:
            server.requests.append(
                Received(parts.path, params, time.monotonic(), dict(self.headers.items())))
        fault = server._take_fault(parts.path) or Fault()
        try:
            if fault.delay:
                time.sleep(fault.delay)
            if self._hostile(fault):
                return
            if fault.status:
                headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
                if fault.body is not None:
                    self._send(fault.status, fault.content_type or _XML, fault.body, headers)
                else:
                    body = f"<html><body><h1>{fault.status}</h1></body></html>".encode()
                    self._send(fault.status, "text/html", body, headers)
                return
            if fault.body is not None:
                self._send(200, _XML, fault.body, cut=len(fault.body) // 2 if fault.truncate else None)
                return
            # A route may add headers as a fourth item (Crossref's rate-limit headers).
            status, content_type, body, *more = server.respond(parts.path, params, fault.empty)
            headers = more[0] if more else None
            if fault.truncate:
                self._send(status, content_type, body, headers, cut=len(body) // 2)
                return
            self._send(status, content_type, body, headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): nothing left to say

    def _hostile(self, fault: Fault) -> bool:
        """Answer with a redirect, a gzip bomb, an endless or dripping body; False if none."""
        if fault.redirect is not None:
            self._send(302, "text/html", b"moved", {"Location": fault.redirect})
        elif fault.gzip_bomb:
            self._send(200, _XML, gzip_bomb(fault.gzip_bomb), {"Content-Encoding": "gzip"})
        elif fault.drip_headers:
            head = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 10_000 + b"\r\n\r\n"
            for byte in head:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(fault.drip)
        elif fault.size:
            self.send_response(200)
            self.send_header("Content-Type", _XML)
            if fault.no_length:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(fault.size))
            self.end_headers()
            for start in range(0, fault.size, fault.chunk):
                self.wfile.write(b" " * min(fault.chunk, fault.size - start))
                self.wfile.flush()
                time.sleep(fault.drip)
        else:
            return False
        return True

    def _send(
        self, status: int, content_type: str, body: bytes,
        headers: dict[str, str] | None = None, cut: int | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if cut is not None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body if cut is None else body[:cut])
        self.wfile.flush()


# --------------------------------------------------------------------- arXiv API
_CAT = re.compile(r"cat:([\w.\-]+)")
_RANGE = re.compile(r"submittedDate:\[(\d{12}) TO (\d{12})\]")


def _arxiv_api(papers: list[dict[str, Any]], params: dict[str, str], empty: bool) -> tuple[int, str, bytes]:
    query = params.get("search_query", "")
    start, size = int(params.get("start", "0")), int(params.get("max_results", "10"))
    if size > 30000:
        return 400, "application/atom+xml", _api_error(
            "max_results_must_not_exceed_30000", "max_results must not exceed 30000")
    categories = set(_CAT.findall(query))
    window = _RANGE.search(query)
    if not categories:
        return 400, "application/atom+xml", _api_error(
            "malformed_query", f"malformed query: {query}")
    low, high = window.groups() if window else ("000000000000", "999999999999")
    matches = [
        p for p in papers
        if categories & set(p["categories"]) and low <= _compact(p["submitted"]) <= high
    ]
    matches.sort(key=lambda p: p["submitted"], reverse=params.get("sortOrder") != "ascending")
    page = [] if empty else matches[start:start + size]
    self_link = escape(f"https://arxiv.org/api/query?search_query={query}&start={start}"
                       f"&max_results={size}&id_list=")
    body = (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        "  <id>https://arxiv.org/api/local-upstream</id>\n"
        f"  <title>arXiv Query: {escape(f'search_query={query}&id_list=&start={start}&max_results={size}')}</title>\n"
        f"  <updated>{_now()}</updated>\n"
        f'  <link href="{self_link}" type="application/atom+xml"/>\n'
        f"  <opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>\n"
        f"  <opensearch:totalResults>{len(matches)}</opensearch:totalResults>\n"
        f"  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
        + "".join(_atom_entry(p) for p in page)
        + "</feed>\n"
    )
    return 200, "application/atom+xml; charset=utf-8", body.encode()


def _atom_entry(p: dict[str, Any]) -> str:
    r = p["render"]
    pid = f"{p['id']}v{p['version']}"
    lines = [
        "  <entry>",
        f"    <id>{escape(r.get('id', f'http://arxiv.org/abs/{pid}'))}</id>",
        f"    <title>{escape(r.get('title', p['title']))}</title>",
        f"    <updated>{escape(r.get('updated', p['updated']))}</updated>",
        f'    <link href="https://arxiv.org/abs/{pid}" rel="alternate" type="text/html"/>',
        f'    <link href="https://arxiv.org/pdf/{pid}" rel="related" type="application/pdf" title="pdf"/>',
        f"    <summary>{escape(r.get('summary', p['abstract']))}</summary>",
    ]
    lines += [f'    <category term="{escape(c)}" scheme="http://arxiv.org/schemas/atom"/>'
              for c in p["categories"]]
    lines.append(f"    <published>{escape(r.get('published', p['submitted']))}</published>")
    if p["comment"]:
        lines.append(f"    <arxiv:comment>{escape(p['comment'])}</arxiv:comment>")
    if p["categories"]:
        lines.append(f'    <arxiv:primary_category term="{escape(p["categories"][0])}"/>')
    if p["journal_ref"]:
        lines.append(f"    <arxiv:journal_ref>{escape(p['journal_ref'])}</arxiv:journal_ref>")
    for name in p["authors"]:
        lines += ["    <author>", f"      <name>{escape(name)}</name>", "    </author>"]
    if p["doi"]:
        lines.append(f"    <arxiv:doi>{escape(p['doi'])}</arxiv:doi>")
        lines.append(f'    <link rel="related" href="https://doi.org/{escape(p["doi"])}" title="doi"/>')
    lines.append("  </entry>\n")
    return "\n".join(lines)


def _api_error(code: str, message: str) -> bytes:
    return (
        "<?xml version='1.0' encoding='UTF-8'?>\n"
        '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
        'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
        "  <id>https://arxiv.org/</id>\n  <title>arXiv Search Results</title>\n"
        f"  <updated>{_now()}</updated>\n"
        "  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>\n"
        "  <opensearch:totalResults>1</opensearch:totalResults>\n"
        "  <opensearch:startIndex>0</opensearch:startIndex>\n"
        "  <entry>\n"
        f"    <id>https://arxiv.org/api/errors#{escape(code)}</id>\n"
        "    <title>Error</title>\n"
        f"    <updated>{_now()}</updated>\n"
        f'    <link href="https://arxiv.org/api/errors#{escape(code)}" rel="alternate" type="text/html"/>\n'
        f"    <summary>{escape(message)}</summary>\n"
        "    <author>\n      <name>arXiv api core</name>\n    </author>\n"
        "  </entry>\n</feed>\n"
    ).encode()


# ---------------------------------------------------------------------- OAI-PMH
def _oai_error(request_attrs: str, code: str, message: str) -> bytes:
    return (
        f"{_OAI_HEAD}<responseDate>{_now()}</responseDate>\n"
        f"<request {request_attrs}>http://oaipmh.arxiv.org/oai</request>\n"
        f"<error code='{code}'>{escape(message)}</error>\n</OAI-PMH>\n"
    ).encode()


def _datestamp(p: dict[str, Any]) -> str:
    return (p["updated"] or p["submitted"])[:10]


def _oai_record(p: dict[str, Any], prefix: str) -> str:
    specs = "".join(f"\n <setSpec>{escape(s)}</setSpec>" for s in set_specs(p["categories"]))
    status = ' status="deleted"' if p["deleted"] else ""
    header = (f'<header{status}>\n <identifier>oai:arXiv.org:{escape(p["id"])}</identifier>\n'
              f" <datestamp>{_datestamp(p)}</datestamp>{specs}\n</header>\n")
    if p["deleted"]:
        return f"<record>\n{header}</record>\n"
    r = p["render"]
    optional = "".join(
        f"<{tag}>{escape(p[key])}</{tag}>"
        for tag, key in (("comments", "comment"), ("journal-ref", "journal_ref"), ("doi", "doi"),
                         ("license", "license"))
        if p[key]
    )
    common = (f"<title>{escape(r.get('title', p['title']))}</title>")
    if prefix == "arXivRaw":
        versions = "".join(
            f"<version version='v{n}'><date>{_rfc822_time(p['submitted'] if n == 1 else p['updated'])}"
            f"</date><size>{10 + n}kb</size></version>"
            for n in range(1, p["version"] + 1)
        )
        meta = (
            "<arXivRaw xsi:schemaLocation='http://arxiv.org/OAI/arXivRaw/ "
            "http://arxiv.org/OAI/arXivRaw.xsd' xmlns='http://arxiv.org/OAI/arXivRaw/' "
            "xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance'>\n"
            f" <id>{escape(r.get('id', p['id']))}</id><submitter>{escape(p['authors'][0] if p['authors'] else '')}"
            f"</submitter>{versions}{common}<authors>{escape(', '.join(p['authors']))}</authors>"
            f"<categories>{escape(' '.join(p['categories']))}</categories>{optional}"
            f"<abstract>{escape(p['abstract'])}</abstract></arXivRaw>\n"
        )
    else:
        authors = "".join(_oai_author(name) for name in p["authors"])
        updated = f"<updated>{p['updated'][:10]}</updated>" if p["version"] > 1 else ""
        meta = (
            '<arXiv xmlns="http://arxiv.org/OAI/arXiv/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
            'xsi:schemaLocation="http://arxiv.org/OAI/arXiv/ https://oaipmh.arxiv.org/OAI/arXiv.xsd">\n'
            f" <id>{escape(r.get('id', p['id']))}</id>"
            f"<created>{escape(r.get('created', p['submitted'][:10]))}</created>{updated}"
            f"<authors>{authors}</authors>{common}"
            f"<categories>{escape(' '.join(p['categories']))}</categories>{optional}"
            f"<abstract>{escape(p['abstract'])}</abstract></arXiv>\n"
        )
    return f"<record>\n{header}<metadata>\n {meta}</metadata>\n</record>\n"


def _oai_author(name: str) -> str:
    parts = name.split()
    if len(parts) == 1:
        return f"<author><keyname>{escape(name)}</keyname></author>"
    return (f"<author><keyname>{escape(parts[-1])}</keyname>"
            f"<forenames>{escape(' '.join(parts[:-1]))}</forenames></author>")


# -------------------------------------------------------------------------- RSS
def _rss_item(p: dict[str, Any], pub: str) -> str:
    r = p["render"]
    head = f"arXiv:{p['id']}v{p['version']} Announce Type: {p['announce_type']} "
    lines = [
        "    <item>",
        f"      <title>{escape(r.get('title', p['title']))}</title>",
        f"      <link>https://arxiv.org/abs/{p['id']}</link>",
        f"      <description>{escape(r.get('description', head))}"
        f"\nAbstract: {escape(p['abstract'])}</description>",
        f'      <guid isPermaLink="false">oai:arXiv.org:{p["id"]}v{p["version"]}</guid>',
    ]
    lines += [f"      <category>{escape(c)}</category>" for c in p["categories"]]
    lines += [
        f"      <pubDate>{escape(r.get('pubDate', pub))}</pubDate>",
        f"      <arxiv:announce_type>{escape(p['announce_type'])}</arxiv:announce_type>",
        f"      <dc:rights>{escape(p['license'] or '')}</dc:rights>",
    ]
    if p["doi"]:
        lines.append(f"      <arxiv:DOI>{escape(p['doi'])}</arxiv:DOI>")
    if p["journal_ref"]:
        lines.append(f"      <arxiv:journal_reference>{escape(p['journal_ref'])}</arxiv:journal_reference>")
    lines += [f"      <dc:creator>{escape(', '.join(p['authors']))}</dc:creator>", "    </item>\n"]
    return "\n".join(lines)


# ------------------------------------------------------------------ HF daily papers
def _hf_item(p: dict[str, Any]) -> dict[str, Any]:
    r = p["render"]
    authors = [{"_id": f"a{p['id']}{i}", "name": name, "hidden": False}
               for i, name in enumerate(p["authors"])]
    day = p["hf_date"] or p["announced"]
    paper: dict[str, Any] = {
        "id": r.get("id", p["id"]), "authors": authors,
        "publishedAt": r.get("publishedAt", p["submitted"][:10] + "T00:00:00.000Z"),
        "submittedOnDailyAt": f"{day}T00:00:00.000Z",
        "title": r.get("title", p["title"]), "summary": p["abstract"], "upvotes": p["upvotes"],
        "discussionId": f"d{p['id']}", "ai_summary": "", "ai_keywords": [],
    }
    if p["github_repo"]:
        paper["githubRepo"] = p["github_repo"]
    return {
        "paper": paper, "publishedAt": p["submitted"][:10] + "T00:00:00.000Z",
        "title": paper["title"], "summary": p["abstract"],
        "thumbnail": f"https://cdn-thumbnails.huggingface.co/social-thumbnails/papers/{p['id']}.png",
        "numComments": p["num_comments"], "isAuthorParticipating": False,
    }


# ------------------------------------------------------------------------ dates
def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _compact(timestamp: str) -> str:
    """'2026-11-26T17:30:00Z' -> '202611261730' (arXiv's submittedDate form)."""
    return re.sub(r"\D", "", timestamp)[:12]


def _rfc822(day: str) -> str:
    """'2026-11-27' -> 'Fri, 27 Nov 2026 00:00:00 -0500', as arXiv dates its announcements."""
    return format_datetime(datetime.fromisoformat(day).replace(tzinfo=_ARXIV_TZ))


def _rfc822_time(timestamp: str) -> str:
    when = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    return format_datetime(when, usegmt=True)
