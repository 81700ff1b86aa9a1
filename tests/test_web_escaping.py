"""Hostile text on every page kind, rendered in-process: shown as text, never as markup (issue 20).

Each hostile value carries an element of its own (<x-injected id=...>) and an event handler:
a page passes when the element is nowhere in its DOM, no attribute is an event handler, and
the value's literal text is what the reader sees. Fast (no model, no shared data), so it is
also what the mutation run of the templates' escaping uses (docs/testing.md).

Four stores, so that every printed expression of the templates is on some page: the hostile
store (every page kind, a reader's pages, the pages that answer a form or a digest's link),
a busy day (the one-day front page, pages of pagination, similar papers from embeddings served
by a real loopback server, a feed's reasons and interests), quiet days (the front page of
several days, a feed with nothing left to show) and a store before its topics are built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.delivery import links, preferences
from papersift.readers import accounts, signals
from papersift.records import PaperRecord
from papersift.search import Embed
from papersift.settings import Settings
from papersift.store import add_records, open_store
from papersift.summarize import Summarize
from papersift.web import urls
from papersift.web.app import create_app
from tests.openai_server import OpenAIServer
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
# The paper's other parts an upstream writes: a journal reference, a DOI (printed in a link:
# a quote would end the attribute) and a category that is not arXiv's (printed as a tag).
JOURNAL = '<x-injected id="journal">J. Evil</x-injected> 12 (2026)'
DOI = '10.1000/x" onmouseover="alert(8)" y="<x-injected id="doi">'
ODD_CATEGORY = '<x-injected id="category">cs.EVIL</x-injected>'
# A request path is printed on its error page: a quote in it would end an attribute.
BAD_PATH = 'x" onmouseover="alert(9)" y="<x-injected id="path2">'
# A sign-up whose email is no address, or whose name is no name: the page says so and gives
# the form back filled in (in attributes: a quote would end them).
EMAIL = 'x" onmouseover="alert(10)" y="<x-injected id="email">@'
BAD_NAME = 'eve" onmouseover="alert(14)'
# An email address that is one (no space, one @), shown on its reader's profile.
READER_EMAIL = "<x-injected/onmouseover=alert(12)>@example.org"
# A search filter the query repair cannot read: the note that says so quotes it.
NOTE_QUERY = "graph year:<x-injected/onmouseover=alert(13)>"
# The busy store's papers' second author: every one of them, a co-author on the author's page.
AUTHOR_2 = '<x-injected id="coauthor">Trudy</x-injected> "Eve"'
# The busy store's second section and topic (the first ones reuse SECTION and LABEL).
SECTION_2 = '<x-injected id="section2">Proteins</x-injected> & "co"'
LABEL_2 = '<x-injected id="label2">Folding</x-injected> <img src=x onerror=alert(11)>'
BUSY = '<x-injected id="busy-'  # what every title of the busy and quiet stores holds


@dataclass(frozen=True)
class Request:
    """A page that answers something other than a plain GET with 200 or 404."""

    path: str
    fields: tuple[tuple[str, str], ...] = ()
    status: int = 200
    method: str = "POST"


Pages = dict[str | Request, list[str]]


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


class Fields(HTMLParser):
    """The values of a page's form fields, by id, as a browser reads them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.inputs: dict[str, str | None] = {}
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "input" and named.get("id"):
            self.inputs[str(named["id"])] = named.get("value")


def assert_inert(page: str, where: str) -> Dom:
    dom = Dom(page)
    assert "x-injected" not in dom.tags, f"{where}: an injected element is in the DOM"
    assert dom.handlers == [], f"{where}: event handlers {dom.handlers}"
    return dom


def add_topics(store: Any, sections: list[tuple[int, str, str]],
               topics: list[tuple[int, str, str, int, list[str]]],
               members: dict[int, list[str]]) -> None:
    """Sections (id, slug, label), topics (id, slug, label, section id, key phrases) and
    their papers, as the topic build writes them."""
    for section in sections:
        run_sql(store, "INSERT INTO sections(id, slug, label) VALUES (?, ?, ?)", section)
    for tid, slug, label, section_id, phrases in topics:
        run_sql(store, "INSERT INTO topics(id, slug, label, key_phrases, section_id, size)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                (tid, slug, label, json.dumps(phrases), section_id, len(members[tid])))
        for pid in members[tid]:
            run_sql(store, "INSERT INTO paper_topics(paper_id, topic_id, assigned_by)"
                           " VALUES (?, ?, 'build')", (pid, tid))


def hostile_store(settings: Settings) -> None:
    with open_store(settings) as store:
        add_records(store, [
            PaperRecord(id=HOSTILE_ID, title=TITLE, abstract=ABSTRACT,
                        authors=[AUTHOR, "Alice Safe"], categories=["cs.LG", ODD_CATEGORY],
                        source="file", announced=DAY, version=2, journal_ref=JOURNAL, doi=DOI,
                        comment='<x-injected id="comment">c</x-injected>'),
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
        # A second section, which a reader follows before a topic build removes it.
        add_topics(store, [(1, "desk", SECTION), (2, "retired", "Retired")],
                   [(1, "hostile", LABEL, 1, [LABEL, QUERY])],
                   {1: [HOSTILE_ID, "2611.00002"]})
        Summarize().run(store, settings)


@pytest.fixture
def client(settings: Settings) -> TestClient:
    hostile_store(settings)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def author_path(client: TestClient, paper_id: str = HOSTILE_ID) -> str:
    page = client.get(urls.paper(paper_id)).text
    return next(h for h in re.findall(r'href="(/authors/[^"]+)"', page) if "mallory" in h)


def public_pages(client: TestClient) -> Pages:
    """Every public page kind, with the hostile values each must show as text."""
    return {
        "/": [TITLE, LABEL, SECTION],
        urls.paper(HOSTILE_ID): [TITLE, ABSTRACT.split(" on molecules")[0], AUTHOR, LABEL,
                                 JOURNAL, ODD_CATEGORY],
        urls.topic("hostile"): [LABEL, TITLE],
        urls.section("desk"): [SECTION, LABEL, TITLE],
        urls.daily(DAY): [TITLE],
        urls.category("cs.LG"): [TITLE],
        author_path(client): [AUTHOR, TITLE],
        urls.with_query(urls.SEARCH, q=QUERY): [QUERY],
        urls.with_query(urls.SEARCH, q="graph networks"): [TITLE],
        urls.TOPICS: [SECTION, LABEL],
        "/papers/" + quote('<x-injected id="path">'): [],
        "/papers/" + quote(BAD_PATH): [BAD_PATH],
        urls.with_query(urls.SEARCH, q="graph", since=QUERY, until=QUERY, category=QUERY,
                        topic=QUERY): [],
        urls.with_query(urls.SEARCH, q=NOTE_QUERY): [f"ignored {NOTE_QUERY.split()[1]}"],
        urls.with_query(urls.LOGIN, next=QUERY): [],
        urls.SIGNUP: [],
    }


def log_in(client: TestClient, name: str) -> None:
    """Log `name` in on `client` through the form, as a reader does."""
    page = client.get(urls.LOGIN).text
    token = re.search(r'name="form_token" value="([^"]+)"', page).group(1)
    answer = client.post(urls.LOGIN, data={"form_token": token, "name": name,
                                          "password": PASSWORD}, follow_redirects=False)
    assert answer.status_code == 303, answer.text


def log_in_a_reader(client: TestClient, settings: Settings) -> Pages:
    """A reader who follows a hostile search and the hostile topic, logged in on `client`;
    the reader's pages with the hostile values each must show as text."""
    with open_store(settings) as store:
        reader_id = accounts.add_reader(store, "mallory", PASSWORD, READER_EMAIL)
        signals.follow(store, reader_id, FOLLOWED)
        signals.follow(store, reader_id, "topic:hostile")
        signals.follow(store, reader_id, "section:retired")
        run_sql(store, "DELETE FROM sections WHERE slug = 'retired'")  # a topic build did
        signals.save(store, reader_id, "reading list", HOSTILE_ID)
        # Wishes in the reader's words, a rating, a digest schedule and a private feed: the
        # profile's and the feed's other parts.
        signals.give_feedback(store, reader_id, FEEDBACK)
        signals.react(store, reader_id, "2611.00002", "up")
        preferences.set_schedule(store, reader_id, "weekly", ["mon", "thu"], paused=False)
        preferences.new_feed_token(store, reader_id)
    log_in(client, "mallory")
    return {
        urls.ME: [TITLE],
        urls.ME_PROFILE: [FOLLOWED.partition(":")[2], LABEL, FEEDBACK, "retired", READER_EMAIL],
        urls.me_collection("reading list"): [TITLE],
        # A one-click link that is not signed: the same refusal page every time it is opened.
        Request(urls.link('<x-injected id="link">'), method="GET", status=400): [],
    }


def forms_and_links(client: TestClient, settings: Settings) -> Pages:
    """The pages that answer a form or a digest's link (the reader of log_in_a_reader is
    logged in on `client`): a failed log-in, a sign-up with a hostile email, a new private
    feed address, a rating link already used and a set-password link."""
    form_token = re.search(r'name="form_token" value="([^"]+)"',
                           client.get(urls.LOGIN).text).group(1)
    csrf = re.search(r'name="csrf" value="([^"]+)"', client.get(urls.ME).text).group(1)
    with open_store(settings) as store:
        reader = store.readers.find_reader("mallory")
    rating, password = (urlsplit(links.make_link(settings, reader, action, paper)).path
                        for action, paper in (("up", "2611.00004"), ("set_password", None)))
    assert client.post(rating).status_code == 200  # used once: from now on, "already used"
    return {
        # No such name: the same answer as a wrong password, without hashing one.
        Request(urls.LOGIN, (("form_token", form_token), ("name", "nobody"),
                             ("password", "not the password"), ("next", urls.ME)),
                status=401): ["wrong name or password"],
        Request(urls.SIGNUP, (("form_token", form_token), ("name", "eve"),
                              ("password", PASSWORD), ("email", EMAIL)),
                status=400): [f"{EMAIL!r} is not an email address"],
        Request(urls.SIGNUP, (("form_token", form_token), ("name", BAD_NAME),
                              ("password", PASSWORD)), status=400): ["a name is 2 to 40"],
        Request(urls.ME_FEED_TOKEN, (("csrf", csrf),)): [f"{urls.ME_FEED}?token="],
        Request(rating, method="POST", status=409): ["already used"],
        password: ["Choose a password"],
    }


@contextmanager
def hostile_site(settings: Settings) -> Iterator[tuple[TestClient, Pages]]:
    """The hostile store served, its reader logged in: (client, every page it checks)."""
    # Each mutant of the mutation run fails one more log-in: the lock-out is not tested here.
    settings = settings.replace(login_attempts=1_000_000)
    hostile_store(settings)
    with TestClient(create_app(settings)) as test_client:
        pages = {**public_pages(test_client), **log_in_a_reader(test_client, settings)}
        yield test_client, {**pages, **forms_and_links(test_client, settings)}


# -------------------------------------------------- a busy day, on pages of two papers
def busy_title(n: int) -> str:
    return f'Busy {_theme(n)} paper {n} {BUSY}{n}">b</x-injected>'


def _theme(n: int) -> str:
    return ("graph", "protein")[n % 2]


def themed_vectors(texts: list[str], model: str) -> list[list[float]]:
    """The embeddings server's answer: papers of one theme close, of two themes far apart."""
    return [[float(t.lower().count("graph")), float(t.lower().count("protein")), 0.1]
            for t in texts]


def busy_store(settings: Settings, papers: int = 24) -> None:
    """One announcement day with more papers than the front page holds, in two sections,
    embedded (similar papers), all by the hostile author; a reader who liked one paper of
    each theme."""
    ids = [f"2611.1{n:04d}" for n in range(papers)]
    with open_store(settings) as store:
        add_records(store, [PaperRecord(
            id=pid, title=busy_title(n), abstract=f"We study {_theme(n)} models, case {n}.",
            authors=[AUTHOR, AUTHOR_2], categories=["cs.LG"], source="file",
            announced=DAY) for n, pid in enumerate(ids)])
        add_topics(store, [(1, "graphs", SECTION), (2, "proteins", SECTION_2)],
                   [(1, "graph-topic", LABEL, 1, [LABEL]), (2, "protein-topic", LABEL_2, 2, [])],
                   {1: ids[0::2], 2: ids[1::2]})
        Embed().run(store, settings)
        reader_id = accounts.add_reader(store, "ada", PASSWORD)
        for pid in ids[:2]:
            signals.react(store, reader_id, pid, "up")


@contextmanager
def busy_site(settings: Settings) -> Iterator[tuple[TestClient, Pages]]:
    """The busy store served with pages of two papers: its front page, the pages of
    pagination, a paper with similar papers, and the feed of a reader with two interests."""
    with OpenAIServer() as server:
        server.embeddings_handler = themed_vectors
        settings = settings.replace(page_size_web=2, feed_size=6, embedder="openai",
                                    embed_url=server.url)
        busy_store(settings)
        with TestClient(create_app(settings)) as test_client:
            author = author_path(test_client, "2611.10000")
            pages: Pages = {
                "/": [SECTION, SECTION_2, f"more in {SECTION} that day", BUSY],
                urls.with_query(author, page=5): [AUTHOR, AUTHOR_2, BUSY],
                urls.with_query(urls.category("cs.LG"), page=5): [BUSY],
                urls.with_query(urls.daily(DAY), page=2): [BUSY],
                urls.with_query(urls.topic("graph-topic"), page=2): [LABEL, BUSY],
                urls.with_query(urls.section("graphs"), page=2): [SECTION, BUSY],
                urls.with_query(urls.SEARCH, q="busy paper", page=2): [BUSY],
                urls.paper("2611.10002"): ["Similar papers", busy_title(4)],
            }
            log_in(test_client, "ada")
            # Each paper of the feed is close to a liked one (named, with its hostile title).
            pages[urls.ME] = [LABEL, LABEL_2, "close to a paper you liked: " + busy_title(0)]
            pages[urls.ME_PROFILE] = [busy_title(0), busy_title(1)]  # the papers rated
            yield test_client, pages


# ------------------------------------------ quiet days, and a store before its topics
def quiet_store(settings: Settings) -> None:
    """A latest day too thin for the front page, joined by the day before; a reader who has
    seen every paper already."""
    days = [AFTER] * 3 + [DAY] * 19
    ids = [f"2611.2{n:04d}" for n in range(len(days))]
    with open_store(settings) as store:
        add_records(store, [PaperRecord(
            id=pid, title=busy_title(n), abstract=f"We study {_theme(n)} models, case {n}.",
            authors=["Ada Lovelace"], categories=["cs.LG"], source="file", announced=day)
            for n, (pid, day) in enumerate(zip(ids, days, strict=True))])
        add_topics(store, [(1, "desk", SECTION)], [(1, "quiet", LABEL, 1, [])], {1: ids})
        reader_id = accounts.add_reader(store, "newcomer", PASSWORD)
        yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        store.readers.mark_shown(reader_id, ids, yesterday)


@contextmanager
def quiet_site(settings: Settings) -> Iterator[tuple[TestClient, Pages]]:
    quiet_store(settings)
    with TestClient(create_app(settings)) as test_client:
        log_in(test_client, "newcomer")
        yield test_client, {"/": [SECTION, f"more in {SECTION}", BUSY],
                            urls.ME: ["Start here", "No new papers to show"]}


@contextmanager
def bare_site(settings: Settings) -> Iterator[tuple[TestClient, Pages]]:
    """Papers whose topics are not built yet: the topics page lists arXiv categories."""
    with open_store(settings) as store:
        add_records(store, [PaperRecord(id=HOSTILE_ID, title=TITLE, abstract=ABSTRACT,
                                        authors=[AUTHOR], categories=["cs.LG", ODD_CATEGORY],
                                        source="file", announced=DAY)])
    with TestClient(create_app(settings)) as test_client:
        yield test_client, {"/": [TITLE], urls.TOPICS: ["Machine Learning"]}


SITES = {"hostile": hostile_site, "busy": busy_site, "quiet": quiet_site, "bare": bare_site}


@contextmanager
def hostile_sites(settings: Settings) -> Iterator[list[tuple[TestClient, Pages]]]:
    """Every store above, each in a folder of its own under settings' data dir, served."""
    with ExitStack() as stack:
        yield [stack.enter_context(site(settings.replace(
            data_dir=str(settings.data_path / name)))) for name, site in SITES.items()]


def fetch(client: TestClient, key: str | Request) -> Any:
    if isinstance(key, str):
        return client.get(key)
    if key.method == "GET":
        return client.get(key.path)
    return client.post(key.path, data=dict(key.fields), follow_redirects=False)


def check_page(key: str | Request, response: Any, literals: list[str]) -> str:
    """The page answered as expected, inert and showing its literals; its HTML."""
    expected = (200, 404) if isinstance(key, str) else (key.status,)
    assert response.status_code in expected, (key, response.status_code)
    dom = assert_inert(response.text, str(key))
    for literal in literals:
        assert dom.shows(literal), (key, literal)
    return response.text


def check_pages(client: TestClient, pages: Pages) -> dict[str | Request, str]:
    """Every page checked; the pages' HTML by key."""
    return {key: check_page(key, fetch(client, key), literals) for key, literals in pages.items()}


def test_every_public_page_shows_hostile_text_as_text(client: TestClient) -> None:
    check_pages(client, public_pages(client))


def test_a_readers_pages_show_hostile_text_as_text(client: TestClient, settings: Settings
                                                   ) -> None:
    check_pages(client, log_in_a_reader(client, settings))


def test_shared_pages_of_a_signed_in_reader_show_hostile_text_as_text(
        client: TestClient, settings: Settings) -> None:
    """The reader's controls on every shared page (ratings, saves, follows, a claim of the
    hostile author) keep every value text; the profile lists the claim as text too."""
    pages = public_pages(client)
    author = author_path(client)
    log_in_a_reader(client, settings)
    with open_store(settings) as store:
        mallory = store.readers.find_reader("mallory")
        signals.claim(store, mallory["id"], author.rsplit("/", 1)[1])
    pages[urls.ME_PROFILE] = [AUTHOR, TITLE]
    pages[urls.ME] = [AUTHOR]
    html = check_pages(client, pages)
    assert 'class="react"' in html[urls.topic("hostile")] and "This is you" in html[author]
    assert 'class="follow"' in html[urls.with_query(urls.SEARCH, q=QUERY)]


def test_pages_answering_forms_and_links_show_hostile_text_as_text(
        client: TestClient, settings: Settings) -> None:
    log_in_a_reader(client, settings)
    pages = forms_and_links(client, settings)
    check_pages(client, pages)
    # The refused sign-up gives the form back as the reader filled it in, escaped.
    bad_email, bad_name = (k for k in pages if isinstance(k, Request) and k.path == urls.SIGNUP)
    values = Fields(fetch(client, bad_email).text).inputs
    assert (values["signup-name"], values["signup-email"]) == ("eve", EMAIL)
    assert Fields(fetch(client, bad_name).text).inputs["signup-name"] == BAD_NAME


@pytest.mark.parametrize("name", ["busy", "quiet", "bare"])
def test_other_stores_pages_show_hostile_text_as_text(name: str, settings: Settings) -> None:
    """A busy day (one-day front page, pagination, similar papers, a feed's reasons), quiet
    days (the front page of several days) and a store before its topics are built."""
    with SITES[name](settings) as (test_client, pages):
        check_pages(test_client, pages)


def test_the_check_itself_sees_markup_that_is_not_escaped() -> None:
    """The DOM check would fail a page that let any of the values through."""
    for value in (TITLE, AUTHOR, LABEL, SECTION, QUERY, FOLLOWED, FEEDBACK, JOURNAL, DOI,
                  ODD_CATEGORY, BAD_PATH, EMAIL, READER_EMAIL, NOTE_QUERY, AUTHOR_2, SECTION_2,
                  LABEL_2, busy_title(0)):
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
