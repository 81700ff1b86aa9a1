"""Hostile requests and hostile stored text (issue 19): XML always parses, every request is bounded."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import httpx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from papersift.latex import readable
from papersift.records import PaperRecord
from papersift.search.highlight import WINDOW_CHARS, Highlighter
from papersift.settings import Settings
from papersift.store import add_records, open_store
from papersift.topics.phrases import doc_terms
from papersift.web import limits, urls
from papersift.web.feeds import atom_feed, xml_safe
from papersift.web.search_view import NOT_READY
from tests.web_helpers import LiveServer

TOKEN = "hostile-admin-token"
DAY = (date.today() - timedelta(days=1)).isoformat()


def paper(number: int, **fields: Any) -> PaperRecord:
    values: dict[str, Any] = {
        "id": f"2611.{number:05d}", "title": f"Graph networks study {number}",
        "abstract": "We study graph networks on molecules.", "authors": ["Ada Lovelace"],
        "categories": ["cs.LG"], "source": "file", "announced": DAY}
    values.update(fields)
    return PaperRecord(**values)


@pytest.fixture
def hostile_settings(settings: Settings) -> Settings:
    """A store written as an older papersift would have: NUL and controls in the text
    (add_records prepares records without the ingest checks), one 5 MB abstract."""
    with open_store(settings) as store:
        add_records(store, [
            paper(1, title="Null\x00 in the title\x0b of graph networks",
                  authors=["Ada\x00 Lovelace"]),
            paper(2, abstract="graph " * 1_000_000 + "networks"),
            *[paper(n) for n in range(3, 8)],
        ])
    return settings.replace(admin_token=TOKEN, web_header_timeout=1.0)


def served(settings: Settings) -> LiveServer:
    """The app under uvicorn with papersift's bounded protocol (as `serve` runs it)."""
    return LiveServer(settings, http=limits.BoundedHttpToolsProtocol)


@pytest.fixture
def site(hostile_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    monkeypatch.setenv(limits.SETTINGS_ENV, json.dumps({"web_header_timeout": 1.0}))
    monkeypatch.setattr(limits, "_HEADER_TIMEOUT", [])
    with served(hostile_settings) as server:
        yield server


def get(site: LiveServer, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.get(site.url + path, timeout=30, **kwargs)


def test_feeds_and_sitemaps_parse_with_nul_in_the_store(site: LiveServer) -> None:
    for path in ("/feed.atom", f"/daily/{DAY}.json", "/authors/ada-lovelace.atom",
                 "/search.atom?q=graph&mode=keyword", "/categories/cs.LG.atom",
                 "/sitemap.xml", "/sitemap-papers-1.xml", "/sitemap-authors-1.xml"):
        response = get(site, path)
        assert response.status_code == 200, (path, response.text[:200])
        if path.endswith(".json"):
            continue
        root = ET.fromstring(response.content)  # raises on a NUL
        if path.endswith(".atom"):
            titles = [e.text for e in root.iter("{http://www.w3.org/2005/Atom}title")]
            assert not any("\x00" in (t or "") for t in titles)
    feed = get(site, "/search.atom?q=null&mode=keyword").text
    assert "Null in the title of graph networks" in feed, feed


@pytest.mark.parametrize("path", [
    "/sitemap-papers-99999999999999999999999.xml", "/sitemap-papers-2.xml",
    "/sitemap-papers-0.xml", "/sitemap-authors-\u0661.xml", "/sitemap-papers-1x.xml",
    f"/daily/{DAY}?page=99999999999999999999", "/topics?page=1e9", "/search?q=graph&page=-1",
    f"/categories/cs.LG?page={'9' * 5000}",
])
def test_numeric_path_parts_are_validated(site: LiveServer, path: str) -> None:
    response = get(site, path)
    assert response.status_code == 404, (path, response.status_code)


def test_slash_redirects_never_echo_the_host(site: LiveServer) -> None:
    response = get(site, "/topics/?page=2", headers={"Host": "evil.com"})
    assert response.status_code == 301 and response.headers["location"] == "/topics?page=2"
    response = get(site, "//evil.com/")
    assert response.headers["location"] == "/evil.com"
    assert "content-security-policy" in response.headers


def test_daily_redirects_to_the_latest_day_as_a_path(site: LiveServer) -> None:
    response = get(site, "/daily", headers={"Host": "evil.com"})
    assert response.status_code in (302, 307) and response.headers["location"] == f"/daily/{DAY}"


def test_flag_bodies_are_bounded_and_checked(site: LiveServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    url = site.url + "/api/flag/2611.00003"
    big = httpx.post(url, content=b'{"reason": "' + b"x" * (200 << 10) + b'"}', headers=auth)
    assert big.status_code == 413 and "more than 66 KB" in big.json()["error"]
    deep = httpx.post(url, content=b'{"reason": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                      headers=auth)
    assert deep.status_code == 400
    for body in (b"[1]", b'{"reason": {"a": 1}}', b"not json"):
        assert httpx.post(url, content=body, headers=auth).status_code == 400
    assert httpx.post(url, content=b'{"reason": "wrong"}', headers=auth).status_code == 404
    assert httpx.post(url, content=b"x" * (200 << 10)).status_code == 413  # before the token


def test_a_client_that_drips_its_headers_is_cut_off(site: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", site.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        answer = b""
        try:
            while chunk := sock.recv(1024):
                answer += chunk
                sock.sendall(b"X-Slow: 1\r\n")
        except (ConnectionResetError, BrokenPipeError):
            pass
        assert time.monotonic() - started < 5
    assert answer.startswith(b"HTTP/1.1 408")
    assert get(site, "/healthz").status_code == 200  # the site goes on


def test_a_client_that_drips_its_body_is_cut_off(site: LiveServer) -> None:
    with socket.create_connection(("127.0.0.1", site.port), timeout=10) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /api/flag/2611.00003 HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 100\r\n\r\n{")
        answer = sock.recv(4096)
        assert time.monotonic() - started < 5
    assert answer.startswith(b"HTTP/1.1 408")


def test_headers_too_large_are_refused(site: LiveServer) -> None:
    response = get(site, "/", headers={"X-Big": "a" * (100 << 10)})
    assert response.status_code == 400


def test_a_huge_abstract_costs_a_search_no_more_than_its_window(site: LiveServer) -> None:
    response = get(site, "/search.json?q=graph&mode=keyword")
    assert response.status_code == 200
    results = response.json()["results"]
    assert results and all(len(json.dumps(r)) < 20_000 for r in results)


def test_search_never_exports_the_model_inside_a_request(site: LiveServer,
                                                         hostile_settings: Settings) -> None:
    response = get(site, "/search.json?q=graph")  # hybrid: needs the model
    assert response.status_code == 200
    assert NOT_READY in response.json()["notes"] and response.json()["results"]
    assert not hostile_settings.paths.models.exists()


def test_a_paper_page_never_exports_the_model_for_its_neighbours(
        hostile_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # A vector of another model is stored (the embedder was changed): the neighbours would
    # need this paper embedded again, by a model that is not exported yet.
    with open_store(hostile_settings) as store:
        store.embeddings.put_embeddings("an-older-model", [
            (f"2611.{n:05d}", "hash", np.ones(384, dtype=np.float32)) for n in range(3, 8)])
    monkeypatch.setenv(limits.SETTINGS_ENV, json.dumps({"web_header_timeout": 1.0}))
    with served(hostile_settings) as site:
        response = get(site, urls.paper("2611.00003"))
    assert response.status_code == 200 and "Graph networks study 3" in response.text
    assert not hostile_settings.paths.models.exists()


def test_highlighting_works_on_a_window_of_the_text() -> None:
    text = "graph " * 1_000_000
    marker = Highlighter(["graph"])
    marked = marker.mark(text)
    assert marked.endswith("…") and len(marked) < 4 * WINDOW_CHARS  # all of it marked
    plain, html = marker.snippet("word " * 1_000_000 + "graph")
    assert plain.endswith("…") and len(plain) < 1000  # the match past the window is not sought
    plain, html = marker.snippet("graph networks " * 10)
    assert "<mark>graph</mark>" in html and not plain.endswith("…")


def test_a_nul_in_a_text_does_not_split_its_document() -> None:
    texts = ["graph neural networks for molecules", "graph\x00 neural networks\x00 again",
             "diffusion models for images", "graph neural networks at scale"]
    terms = doc_terms(texts, min_df=1)
    assert terms.matrix.shape[0] == len(texts)
    column = terms.terms.index("graph neural network") if "graph neural network" in terms.terms \
        else terms.terms.index("neural")
    assert terms.matrix[:, column].sum() >= 2


# ------------------------------------------------------------------ the feed writer
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from(
    ["\x00", "\x0b", "\ufffe", "\uffff", "<", "&", "]", ">", "\x85", "\r", "\n", "\t"]), max_size=60)


@hsettings(max_examples=200, deadline=None)
@given(title=TEXT, name=TEXT, blurb=TEXT, label=TEXT, site_title=TEXT)
def test_any_text_makes_a_feed_that_parses(title: str, name: str, blurb: str, label: str,
                                           site_title: str) -> None:
    data = {"title": title, "path": "/x", "feed": "/x.atom", "papers": [{
        "url": "/papers/2611.00001", "title": title, "date": DAY, "blurb": blurb,
        "authors": [{"name": name, "url": "/authors/a"}], "n_authors": 3,
        "topic": {"slug": "t", "label": label}}]}
    root = ET.fromstring(atom_feed(data, "http://127.0.0.1:8000", site_title or "papersift"))
    atom = "{http://www.w3.org/2005/Atom}"
    entry = root.find(f"{atom}entry")
    assert entry is not None
    # Titles and blurbs are shown as readers read them (LaTeX rendered, one-spaced: issue 33),
    # the same in the feed as on the pages.
    assert (entry.findtext(f"{atom}title") or "") == as_parsed(readable(title))
    assert (entry.findtext(f"{atom}summary") or "") == as_parsed(readable(blurb))
    assert (entry.find(f"{atom}author/{atom}name").text or "") == as_parsed(name)
    assert entry.find(f"{atom}category").get("label") == xml_safe(label)


def as_parsed(text: str) -> str:
    """What an XML reader gives back of a text: its allowed characters, line ends as \\n."""
    return xml_safe(text).replace("\r\n", "\n").replace("\r", "\n")


def test_the_static_export_writes_feeds_that_parse(hostile_settings: Settings,
                                                   tmp_path: Path) -> None:
    from papersift.web.export import build_site

    out = tmp_path / "site"
    build_site(hostile_settings, out)
    feeds = list(out.rglob("*.atom"))
    assert feeds
    for feed in feeds:
        ET.fromstring(feed.read_bytes())
