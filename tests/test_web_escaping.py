"""Hostile text on every page kind, rendered in-process: shown as text, never as markup (issue 20).

Each hostile value carries an element of its own (<x-injected id=...>) and an event handler:
a page passes when the element is nowhere in its DOM, no attribute is an event handler, and
the value's literal text is what the reader sees. Fast (no model, no shared data), so it is
also what the mutation run of the templates' escaping uses (docs/testing.md).
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from papersift.delivery import links, preferences
from papersift.ingest.stage import add_records
from papersift.readers import accounts, signals
from papersift.records import PaperRecord
from papersift.settings import Settings
from papersift.store import open_store
from papersift.summarize import Summarize
from papersift.web import urls
from papersift.web.app import create_app
from tests.store_sql import run_sql

DAY = (date.today() - timedelta(days=2)).isoformat()
BEFORE = (date.today() - timedelta(days=3)).isoformat()
AFTER = (date.today() - timedelta(days=1)).isoformat()
HOSTILE_ID = "2611.00001"
TITLE = 'Graph nets <x-injected id="title">bold</x-injected> <img src=x onerror="alert(1)">'
ABSTRACT = ('We study graph networks <x-injected id="abstract">here</x-injected> on molecules. '
            'A second sentence <img src=x onerror="alert(2)"> follows with more detail about '
            "the message passing layers and the benchmarks used to compare them.")
AUTHOR = '<x-injected id="author" onmouseover="alert(3)">Mallory</x-injected> Evil'
LABEL = '<x-injected id="label">Graphs</x-injected> & <svg onload=alert(4)>'
SECTION = '<x-injected id="section">Learning</x-injected> "desk"'
QUERY = '<x-injected id="query">graph</x-injected> "<img src=x onerror=alert(5)>'
# A quote to break out of an attribute: printed raw, it would add an event handler.
FOLLOWED = 'search:x" onmouseover="alert(6)" y="<x-injected id="follow">graph</x-injected>'
FEEDBACK = ('more about <x-injected id="feedback">theory</x-injected>; '
            'less about "benchmarks" <img src=x onerror=alert(7)>')
PASSWORD = "correct horse battery"


class Dom(HTMLParser):
    """The elements, attributes and text a browser would build from a page."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [(tag, name) for name, _ in attrs if name.startswith("on")]

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def shows(self, literal: str) -> bool:
        return " ".join(literal.split()) in " ".join(" ".join(self.text).split())


def assert_inert(page: str, where: str) -> Dom:
    dom = Dom(page)
    assert "x-injected" not in dom.tags, f"{where}: an injected element is in the DOM"
    assert dom.handlers == [], f"{where}: event handlers {dom.handlers}"
    return dom


def hostile_store(settings: Settings) -> None:
    with open_store(settings) as store:
        add_records(store, [
            PaperRecord(id=HOSTILE_ID, title=TITLE, abstract=ABSTRACT,
                        authors=[AUTHOR, "Alice Safe"], categories=["cs.LG"], source="file",
                        announced=DAY, comment='<x-injected id="comment">c</x-injected>'),
            PaperRecord(id="2611.00002", title="Graph networks for chemistry benchmarks",
                        abstract="We compare graph networks on molecules. They do well.",
                        authors=["Ada Lovelace"], categories=["cs.LG"], source="file",
                        announced=DAY),
            # Papers the day before and the day after: the day pages' neighbour links.
            *[PaperRecord(id=f"2611.0000{n}", title=f"Graph networks, day {n}",
                          abstract="We study graph networks. They do well.",
                          authors=["Ada Lovelace"], categories=["cs.LG"], source="file",
                          announced=day) for n, day in ((3, BEFORE), (4, AFTER))],
        ])
        run_sql(store, "INSERT INTO sections(id, slug, label) VALUES (1, 'desk', ?)", (SECTION,))
        run_sql(store, "INSERT INTO topics(id, slug, label, key_phrases, section_id, size)"
                       " VALUES (1, 'hostile', ?, ?, 1, 2)", (LABEL, json.dumps([LABEL, QUERY])))
        run_sql(store, "INSERT INTO paper_topics(paper_id, topic_id, assigned_by)"
                       " VALUES (?, 1, 'build'), ('2611.00002', 1, 'build')", (HOSTILE_ID,))
        Summarize().run(store, settings)


@pytest.fixture
def client(settings: Settings) -> TestClient:
    hostile_store(settings)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def author_path(client: TestClient) -> str:
    page = client.get(urls.paper(HOSTILE_ID)).text
    return next(h for h in re.findall(r'href="(/authors/[^"]+)"', page) if "mallory" in h)


def public_pages(client: TestClient) -> dict[str, list[str]]:
    """Every public page kind, with the hostile values each must show as text."""
    return {
        "/": [TITLE, LABEL, SECTION],
        urls.paper(HOSTILE_ID): [TITLE, ABSTRACT.split(" on molecules")[0], AUTHOR, LABEL],
        urls.topic("hostile"): [LABEL, TITLE],
        urls.section("desk"): [SECTION, LABEL, TITLE],
        urls.daily(DAY): [TITLE],
        urls.category("cs.LG"): [TITLE],
        author_path(client): [AUTHOR, TITLE],
        urls.with_query(urls.SEARCH, q=QUERY): [QUERY],
        urls.with_query(urls.SEARCH, q="graph networks"): [TITLE],
        urls.TOPICS: [SECTION, LABEL],
        "/papers/" + quote('<x-injected id="path">'): [],
        urls.with_query(urls.SEARCH, q="graph", since=QUERY, category=QUERY, topic=QUERY): [],
        urls.with_query(urls.LOGIN, next=QUERY): [],
        urls.SIGNUP: [],
    }


def log_in_a_reader(client: TestClient, settings: Settings) -> dict[str, list[str]]:
    """A reader who follows a hostile search and the hostile topic, logged in on `client`;
    the reader's pages with the hostile values each must show as text."""
    with open_store(settings) as store:
        reader_id = accounts.add_reader(store, "mallory", PASSWORD, "mallory@example.org")
        signals.follow(store, reader_id, FOLLOWED)
        signals.follow(store, reader_id, "topic:hostile")
        signals.save(store, reader_id, "reading list", HOSTILE_ID)
        # Wishes in the reader's words, a rating, a digest schedule and a private feed: the
        # profile's and the feed's other parts.
        signals.give_feedback(store, reader_id, FEEDBACK)
        signals.react(store, reader_id, "2611.00002", "up")
        preferences.set_schedule(store, reader_id, "weekly", ["mon", "thu"], paused=False)
        preferences.new_feed_token(store, reader_id)
    page = client.get(urls.LOGIN).text
    token = re.search(r'name="form_token" value="([^"]+)"', page).group(1)
    answer = client.post(urls.LOGIN, data={"form_token": token, "name": "mallory",
                                          "password": PASSWORD}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return {
        urls.ME: [TITLE],
        urls.ME_PROFILE: [FOLLOWED.partition(":")[2], LABEL, FEEDBACK],
        urls.me_collection("reading list"): [TITLE],
        # A one-click link that is not signed: the same refusal page every time it is opened.
        links.PATH + quote('<x-injected id="link">'): [],
    }


def check_pages(client: TestClient, pages: dict[str, list[str]]) -> dict[str, str]:
    """Every page inert and showing its literals; the pages' HTML by path."""
    rendered = {}
    for path, literals in pages.items():
        response = client.get(path)
        refused = (400,) if path.startswith(links.PATH) else ()  # a forged link says so
        assert response.status_code in (200, 404, *refused), path
        dom = assert_inert(response.text, path)
        for literal in literals:
            assert dom.shows(literal), (path, literal)
        rendered[path] = response.text
    return rendered


def test_every_public_page_shows_hostile_text_as_text(client: TestClient) -> None:
    check_pages(client, public_pages(client))


def test_a_readers_pages_show_hostile_text_as_text(client: TestClient, settings: Settings
                                                   ) -> None:
    check_pages(client, log_in_a_reader(client, settings))


def test_the_check_itself_sees_markup_that_is_not_escaped() -> None:
    """The DOM check would fail a page that let any of the values through."""
    for value in (TITLE, AUTHOR, LABEL, SECTION, QUERY, FOLLOWED, FEEDBACK):
        with pytest.raises(AssertionError):
            assert_inert(f"<main><p>{value}</p></main>", "raw")



# --------------------------------------------------------------------- in chromium

@pytest.fixture
def served(settings: Settings) -> Any:
    from tests.web_helpers import LiveServer

    hostile_store(settings)
    with LiveServer(settings) as server:
        yield server


@pytest.mark.browser
def test_hostile_input_is_text_on_every_page_in_chromium(served: Any, settings: Settings,
                                                        tmp_path: Path) -> None:
    """A query, a title and abstract, an author and a topic label, each hostile: every page
    kind shows them as text, holds no injected element or handler, and logs no error."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    with open_store(settings) as store:
        reader_id = accounts.add_reader(store, "mallory", PASSWORD)
        signals.follow(store, reader_id, FOLLOWED)
        signals.follow(store, reader_id, "topic:hostile")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        page = chromium.new_page()
        errors: list[str] = []
        dialogs: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

        def visit(path: str | None, *literals: str) -> None:
            if path is not None:
                page.goto(served.url + path)
            page.wait_for_load_state("load")
            where = page.url
            injected = page.evaluate(
                "document.querySelectorAll('x-injected, img[src=\"x\"], [onerror], [onload],"
                " [onmouseover]').length")
            assert injected == 0, where
            shown = " ".join(page.locator("body").inner_text().split())
            for literal in literals:
                assert " ".join(literal.split()) in shown, (where, literal)

        author = author_path(TestClient(create_app(settings)))
        visit("/", TITLE, LABEL)
        visit(urls.paper(HOSTILE_ID), TITLE, AUTHOR, LABEL)
        page.locator(f'a[href="{author}"]').first.hover()
        page.locator(f'a[href="{author}"]').first.click()
        visit(None, AUTHOR, TITLE)
        visit(urls.topic("hostile"), LABEL, TITLE)
        visit(urls.daily(DAY), TITLE)
        visit(urls.category("cs.LG"), TITLE)
        visit(urls.TOPICS)
        page.locator("#site-q").fill(QUERY)
        page.locator("#site-q").press("Enter")
        page.wait_for_url(re.compile(r"/search\?"))
        visit(None, QUERY)
        assert page.locator("#q").input_value() == QUERY
        visit(urls.with_query(urls.SEARCH, q="graph networks"), TITLE)
        before = len(errors)
        visit("/papers/" + quote('<x-injected id="path">'))
        # The page itself answers 404 (chromium logs that status); nothing else may fail.
        assert errors[before:] == [
            "Failed to load resource: the server responded with a status of 404 (Not Found)"]
        del errors[before:]
        visit(urls.LOGIN)
        page.fill("main input[name=name]", "mallory")
        page.fill("main input[name=password]", PASSWORD)
        page.locator("main form").get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/me"))
        visit(urls.ME, TITLE)
        visit(urls.ME_PROFILE, FOLLOWED.partition(":")[2], LABEL)
        page.screenshot(path=str(tmp_path / "xss.png"), full_page=True)
        chromium.close()
    assert dialogs == [], dialogs
    assert errors == [], errors
