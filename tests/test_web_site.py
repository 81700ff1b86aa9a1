"""The site served for real (uvicorn on 127.0.0.1) over a store of real papers: HTTP and browser."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import feedparser
import httpx
import pytest

from papersift.settings import load_settings
from papersift.store import open_store
from tests.conftest import shared_file
from tests.web_helpers import (
    ADMIN_TOKEN,
    XSS_ID,
    XSS_TITLE,
    LiveServer,
    fill_store,
    free_port,
    site_database_url,
    write_fixture,
)

# Browser tests check what happens in the browser: one backend serves them.
SQLITE_SITE = pytest.mark.parametrize("site", ["sqlite"], indirect=True)
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
PAGE_SIZE = 10
_ITEM = re.compile(r'class="paper-title"><a href="([^"]+)">(.*?)</a>', re.S)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The site over a store of each backend (browser tests use the SQLite one only: what
    they check happens in the browser)."""
    root = tmp_path_factory.mktemp("web")
    records = write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), root / "papers.jsonl")
    port = free_port()
    settings = load_settings(environ={}, config=root / "none.toml", data_dir=str(root / "data"),
                             database_url=site_database_url(request),
                             page_size_web=PAGE_SIZE, admin_token=ADMIN_TOKEN,
                             base_url=f"http://127.0.0.1:{port}", threads=1)
    how = fill_store(settings, root / "papers.jsonl")
    with LiveServer(settings, port) as server, httpx.Client(base_url=server.url,
                                                            timeout=60) as client:
        server.client = client
        server.settings = settings
        server.records = records
        server.how = how
        yield server


def items(page_html: str) -> list[tuple[str, str]]:
    return [(href, html.unescape(re.sub(r"<[^>]+>", "", title))) for href, title in
            _ITEM.findall(page_html)]


def biggest_topic(site: Any) -> dict[str, Any]:
    data = site.client.get("/topics.json").json()
    return max((t for s in data["sections"] for t in s["topics"]), key=lambda t: t["size"])


# ------------------------------------------------------------------ HTTP
def test_json_twins_carry_what_the_html_shows(site: Any) -> None:
    topic = biggest_topic(site)
    assert topic["size"] > 2 * PAGE_SIZE, "the fixture needs a topic with several pages"
    for path in ("/", f"{topic['url']}?page=2", "/daily/" + site.records[0]["announced"]):
        page = site.client.get(path)
        assert page.status_code == 200, path
        twin = site.client.get(path + ("&" if "?" in path else "?") + "format=json").json()
        shown = items(page.text)
        assert shown == [(p["url"], p["title"]) for p in twin["papers"]], path
    twin = site.client.get(f"{topic['url']}.json", params={"page": 2}).json()
    assert twin["count_line"] == (f"{topic['size']} articles · page 2 of "
                                  f"{-(-topic['size'] // PAGE_SIZE)}")
    assert twin["count_line"] in html.unescape(
        site.client.get(topic["url"], params={"page": 2}).text)
    dates = [p["date"] for p in twin["papers"]]
    assert dates == sorted(dates, reverse=True)


def test_topic_page_numbers_and_author_lines(site: Any) -> None:
    topic = biggest_topic(site)
    data = site.client.get(f"{topic['url']}.json").json()
    assert len(data["papers"]) == PAGE_SIZE
    assert data["pagination"]["next"] == f"{topic['url']}?page=2"
    by_id = {r["id"]: r for r in site.records}
    for paper in data["papers"]:
        names = by_id[paper["id"]]["authors"]
        expected = ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")
        assert paper["author_line"] == expected
    assert site.client.get(topic["url"], params={"page": 999}).status_code == 404
    assert site.client.get(topic["url"], params={"page": "x"}).status_code == 404


def test_every_listed_topic_has_papers_and_a_page(site: Any) -> None:
    listed = [t for s in site.client.get("/topics.json").json()["sections"] for t in s["topics"]]
    assert listed and all(t["size"] > 0 for t in listed)
    for topic in listed:
        assert site.client.get(topic["url"]).status_code == 200, topic["url"]


def test_old_topic_slug_redirects_permanently(site: Any) -> None:
    topic = biggest_topic(site)
    moved = site.client.get("/topics/an-old-topic-slug", follow_redirects=False)
    assert moved.status_code == 301
    assert moved.headers["location"] == topic["url"]


def test_the_paper_page_names_its_topic_as_listings_do(site: Any) -> None:
    """A topic an LLM named is named so everywhere: listings, its page and each paper page."""
    topic = biggest_topic(site)
    with open_store(site.settings) as store:
        topic_id = store.topics.find_topic(topic["slug"])["id"]
        store.topics.set_topic_llm_labels([(topic_id, "Named by the language model")])
    try:
        listing = site.client.get(f"{topic['url']}.json").json()
        paper_url = listing["papers"][0]["url"]
        paper = site.client.get(f"{paper_url}.json").json()["paper"]
        assert listing["title"] == "Named by the language model"
        assert listing["papers"][0]["topic"]["label"] == "Named by the language model"
        assert paper["topic"] == listing["papers"][0]["topic"]
        assert "Named by the language model" in site.client.get(paper_url).text
    finally:
        with open_store(site.settings) as store:
            store.topics.set_topic_llm_labels([(topic_id, None)])


def test_every_page_has_a_strict_csp_and_missing_pages_help(site: Any) -> None:
    for path in ("/", "/topics", "/no/such/page", "/papers/9999.99999", "/search?q=x"):
        response = site.client.get(path)
        csp = response.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
    missing = site.client.get("/papers/9999.99999")
    assert missing.status_code == 404
    assert 'role="search"' in missing.text and 'href="/topics"' in missing.text
    assert "9999.99999" in missing.text
    as_json = site.client.get("/papers/9999.99999.json")
    assert as_json.status_code == 404 and "error" in as_json.json()


def test_bad_search_queries_get_a_message_not_an_error(site: Any) -> None:
    for params in ({"q": "((( *** )))", "mode": "keyword"}, {"q": "graph", "since": "last tuesday"},
                   {"q": "graph", "mode": "telepathy"}, {"q": "x" * 600}):
        response = site.client.get("/search", params=params)
        assert response.status_code == 200, params
        assert 'role="alert"' in response.text, params
        assert site.client.get("/search.json", params=params).json()["message"]


def test_search_finds_a_paper_by_its_title_words(site: Any) -> None:
    record = next(r for r in site.records if r["id"] != XSS_ID and len(r["title"].split()) > 4)
    words = " ".join(w for w in re.findall(r"[A-Za-z]{5,}", record["title"])[:3])
    data = site.client.get("/search.json", params={"q": words}).json()
    assert data["message"] is None
    assert record["id"] in [p["id"] for p in data["results"]]
    snippets = [piece for p in data["results"] for piece in p["snippet"]]
    assert any(piece["hit"] for piece in snippets), "no result shows a highlighted word"


def test_a_query_that_matches_nothing_says_so(site: Any) -> None:
    data = site.client.get("/search.json", params={"q": "qwzxv", "mode": "keyword"}).json()
    assert data["results"] == [] and "no papers match" in data["message"].lower()


def test_feeds_parse_back_with_the_pages_entries(site: Any) -> None:
    topic = biggest_topic(site)
    author = site.client.get("/papers/" + site.records[0]["id"] + ".json").json()
    author_url = author["paper"]["authors"][0]["url"]
    for page, feed in (("/", "/feed.atom"), (topic["url"], topic["url"] + ".atom"),
                       (author_url, author_url + ".atom"),
                       ("/search?q=learning", "/search.atom?q=learning")):
        twin = site.client.get(page + ("&" if "?" in page else "?") + "format=json").json()
        response = site.client.get(feed)
        assert response.status_code == 200 and "atom" in response.headers["content-type"]
        parsed = feedparser.parse(response.content)
        assert not parsed.bozo, (feed, parsed.get("bozo_exception"))
        assert [e.link for e in parsed.entries] == [site.url + p["url"] for p in twin["papers"]]
        assert [e.title for e in parsed.entries] == [p["title"] for p in twin["papers"]]
        assert parsed.entries, feed


def test_sitemap_lists_pages_that_exist(site: Any) -> None:
    index = site.client.get("/sitemap.xml")
    assert index.status_code == 200
    parts = re.findall(r"<loc>([^<]+)</loc>", index.text)
    assert any("sitemap-papers-1.xml" in p for p in parts)
    papers = site.client.get("/sitemap-papers-1.xml").text
    urls = re.findall(r"<loc>([^<]+)</loc>", papers)
    assert len(urls) == len(site.records)
    assert site.client.get(urls[0].replace(site.url, "")).status_code == 200


def test_writes_need_the_admin_token(site: Any) -> None:
    pid = site.records[1]["id"]
    assert site.client.post(f"/api/flag/{pid}").status_code == 403
    assert site.client.post(f"/api/flag/{pid}",
                            headers={"authorization": "Bearer wrong"}).status_code == 403
    assert site.client.get(f"/api/flag/{pid}").status_code == 405
    ok = site.client.post(f"/api/flag/{pid}", json={"reason": "misleading"},
                          headers={"authorization": f"Bearer {ADMIN_TOKEN}"})
    assert ok.status_code == 200, ok.text
    with open_store(site.settings) as store:
        assert store.summaries.get_summary(pid)["flagged"]


def test_hostile_text_is_escaped_in_every_format(site: Any) -> None:
    page = site.client.get(f"/papers/{XSS_ID}").text
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page and "<iframe" not in page and "<b onmouseover" not in page
    assert site.client.get(f"/papers/{XSS_ID}.json").json()["paper"]["title"] == XSS_TITLE


# --------------------------------------------------------------- browser
@pytest.fixture(scope="module")
def browser() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True,
            args=["--no-sandbox", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-quic",
                  "--no-first-run", "--disable-gpu"])
        yield chromium
        chromium.close()


class Watched:
    """A page that records console errors, page errors and dialogs (a dialog means a script ran)."""

    def __init__(self, browser: Any, **context: Any) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"web-{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()


@pytest.mark.browser
@SQLITE_SITE
def test_reader_walks_front_section_topic_paper_author_search(site: Any, browser: Any) -> None:
    watched = Watched(browser, viewport={"width": 1100, "height": 900})
    page = watched.page
    page.goto(site.url + "/")
    assert page.locator("h1").inner_text().startswith("New papers")
    assert page.locator("main section.front-section").count() >= 2
    assert page.locator("main article.paper").first.locator("p.blurb").inner_text().strip()
    watched.shot("1-front")

    section_link = page.locator("section.front-section h2 a").first
    section_label = section_link.inner_text()
    section_link.click()
    assert page.locator("h1").inner_text() == section_label
    watched.shot("2-section")

    topic = biggest_topic(site)
    page.locator(f'aside a[href="{topic["url"]}"]').first.click() \
        if page.locator(f'aside a[href="{topic["url"]}"]').count() else page.goto(
            site.url + topic["url"])
    assert page.locator("h1").inner_text() == topic["label"]
    page.get_by_role("link", name="Page 2", exact=True).first.click()
    pages = -(-topic["size"] // PAGE_SIZE)
    assert page.locator("p.count-line").inner_text().startswith(
        f"{topic['size']} articles · page 2 of {pages}")
    dates = page.locator("main article.paper time").all_inner_texts()
    assert len(dates) == PAGE_SIZE and dates == sorted(dates, reverse=True)
    watched.shot("3-topic-page-2")

    first = page.locator("main article.paper h2 a").first
    title = first.inner_text()
    first.click()
    assert page.locator("h1").inner_text() == title
    assert page.locator("p.byline a").count() >= 1
    assert page.locator("section[aria-labelledby=h-abstract] p.abstract").inner_text()
    assert "@misc{" in page.locator("textarea#bibtex").input_value()
    assert page.get_by_role("link", name="PDF").get_attribute("href").startswith(
        "https://arxiv.org/pdf/")
    watched.shot("4-paper")

    author_link = page.locator("p.byline a").first
    author = author_link.inner_text()
    author_link.click()
    assert page.locator("h1").inner_text() == author
    assert title in page.locator("main article.paper h2").all_inner_texts()
    watched.shot("5-author")

    query = " ".join(re.findall(r"[A-Za-z]{5,}", title)[:2]) or title.split()[0]
    page.locator("#site-q").fill(query)
    page.locator("#site-q").press("Enter")
    page.wait_for_url(re.compile(r"/search\?"))
    results = page.locator("main .results article.paper")
    assert results.count() >= 1
    assert page.locator("main .results mark").count() >= 1
    watched.shot("6-search")
    result_title = results.first.locator("h2 a").inner_text()
    results.first.locator("h2 a").click()
    assert page.locator("h1").inner_text() == result_title
    assert watched.errors == [], watched.errors
    assert watched.dialogs == []
    watched.close()


@pytest.mark.browser
@SQLITE_SITE
def test_no_script_runs_from_a_hostile_title(site: Any, browser: Any) -> None:
    watched = Watched(browser)
    page = watched.page
    for path in ("/", f"/papers/{XSS_ID}", "/search?q=alert+attacks"):
        page.goto(site.url + path)
        page.wait_for_load_state("load")
    page.goto(f"{site.url}/papers/{XSS_ID}")
    assert page.locator("h1").inner_text() == XSS_TITLE
    author = page.locator("p.byline a").first
    author.hover()
    author.click()
    page.wait_for_load_state("load")
    assert watched.dialogs == [], watched.dialogs
    assert page.evaluate("document.querySelectorAll('main script, main img[src=x]').length") == 0
    watched.shot("xss")
    watched.close()


@pytest.mark.browser
@SQLITE_SITE
def test_readable_at_320_pixels_and_in_dark_mode(site: Any, browser: Any) -> None:
    topic = biggest_topic(site)
    watched = Watched(browser, viewport={"width": 320, "height": 640}, color_scheme="dark")
    page = watched.page
    for name, path in (("front", "/"), ("topic", topic["url"]),
                       ("paper", "/papers/" + site.records[0]["id"]), ("search", "/search?q=model")):
        page.goto(site.url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= 320, (path, overflow)
        watched.shot(f"320-dark-{name}")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 22, 26)"
    page.goto(site.url + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#main"
    assert watched.errors == [], watched.errors
    watched.close()
