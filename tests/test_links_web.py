"""Links, threads and weekly briefs on the site, served for real: the paper page's "builds on" and
"followed up by", thread pages and feeds, weekly brief pages, their JSON twins, the static
export, following a thread, the weekly digest's section; and the pages in chromium."""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

import feedparser
import httpx
import pytest

from papersift.briefs.stage import Briefs
from papersift.briefs.weeks import parse_week
from papersift.delivery.render import render_digest
from papersift.delivery.weekly import week_section
from papersift.links.stage import Links
from papersift.readers import signals
from papersift.settings import load_settings
from papersift.store import open_store
from papersift.web import urls
from papersift.web.export import build_site
from tests.test_links_store import WORDS, _ingest, _records, _topics
from tests.web_helpers import ARTIFACTS, LiveServer, chromium, console_errors, free_port

PASSWORD = "a long enough password 34"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("links-web")
    port = free_port()
    settings = load_settings(environ={}, config=root / "none.toml", data_dir=str(root / "data"),
                             base_url=f"http://127.0.0.1:{port}", threads=1,
                             signup_attempts=1000)
    records = list(_records())
    with open_store(settings) as store:
        _ingest(store, settings, records, root / "papers.jsonl")
        _topics(store, records)
        Links(params=WORDS).run(store, settings)
        assert Briefs().run(store, settings).ok
        source, target, name, _, _ = store.links.all_links()[0]
        weeks = store.links.brief_weeks(store.topics.find_topic("language")["id"])
    with LiveServer(settings, port) as server, httpx.Client(base_url=server.url,
                                                            timeout=60) as client:
        server.client, server.settings, server.root = client, settings, root
        server.link = (source, target, name)
        server.thread_id = f"{name}-{target}"
        server.weeks = weeks
        yield server


def test_the_paper_page_shows_what_it_builds_on_and_what_followed(site: Any) -> None:
    source, target, name = site.link
    page = site.client.get(urls.paper(source)).text
    assert "Builds on / compares with:" in page and f"<strong>{name}</strong>" in page
    twin = site.client.get(urls.paper(source) + ".json").json()
    assert any(b["id"] == target and b["name"] == name for b in twin["links"]["builds_on"])
    origin = site.client.get(urls.paper(target) + ".json").json()["links"]
    assert origin["followed_by"]["count"] >= 1 and name in origin["coined"]
    assert source in {p["id"] for p in origin["followed_by"]["papers"]}
    assert "Followed up by" in site.client.get(urls.paper(target)).text


def test_thread_page_timeline_and_feed(site: Any) -> None:
    answer = site.client.get(urls.thread(site.thread_id))
    assert answer.status_code == 200 and "the thread" in answer.text
    data = site.client.get(urls.thread(site.thread_id) + ".json").json()
    assert data["timeline"][0]["entries"][0]["role"] == "origin"
    assert data["thread"]["follow"] == f"thread:{site.thread_id}"
    feed = feedparser.parse(site.client.get(urls.thread(site.thread_id) + ".atom").content)
    assert not feed.bozo and len(feed.entries) == data["thread"]["size"]
    assert site.client.get(urls.thread("NOPE-0000.00000")).status_code == 404


def test_weekly_brief_pages_twins_and_feed(site: Any) -> None:
    latest, week = site.weeks[0], site.weeks[-1]
    data = site.client.get(urls.topic_week("language", week) + ".json").json()
    assert data["week"] == week and len(data["five"]) >= 1 and data["growth"]["line"]
    assert all(p["why"] for p in data["five"])
    cited = {c["id"] for s in data["brief"]["sentences"] for c in s["cites"]}
    assert cited <= {p["id"] for p in data["five"]}
    page = site.client.get(urls.topic_week("language", week)).text
    assert "Five to read" in page and "The week in brief" in page
    # A sentence that names its paper links that id in place; it never says the id twice.
    for sentence in re.findall(r'<span class="brief-sentence">(.*?)</span>', page, re.S):
        for pid in set(re.findall(r'class="cite"[^>]*>\[?([^<\]]+)\]?</a>', sentence)):
            assert re.sub(r"<[^>]+>", "", sentence).count(pid) == 1, sentence
    assert any(part.get("cite") for s in data["brief"]["sentences"] for part in s["parts"])
    assert site.client.get(urls.topic_latest_week("language") + ".json").json()["week"] == latest
    feed = feedparser.parse(site.client.get(urls.topic_weeks("language") + ".atom").content)
    assert not feed.bozo and len(feed.entries) == len(site.weeks)
    assert "This week in brief" in site.client.get(urls.topic("language")).text
    assert site.client.get(urls.topic_week("language", "2019-W01")).status_code == 404
    assert site.client.get(urls.topic_week("language", "last-week")).status_code == 404


def test_a_reader_follows_a_thread_and_gets_the_week_by_mail(site: Any) -> None:
    with open_store(site.settings) as store:
        rid = store.readers.add_reader("wren", "wren@example.org", "x")
        signals.follow(store, rid, f"thread:{site.thread_id}")
        signals.follow(store, rid, "topic:language")
        assert {f["kind"] for f in store.readers.follows_of(rid)} == {"thread", "topic"}
        with pytest.raises(signals.SignalError):
            signals.follow(store, rid, "thread:NOPE-1")
        monday, _ = parse_week(site.weeks[0])
        assert week_section(store, site.settings, rid, monday) == []  # a daily digest
        store.delivery.set_delivery_settings(rid, "weekly", ["mon"], False)
        section = week_section(store, site.settings, rid, date.fromordinal(monday.toordinal()))
    assert section and section[0]["url"].endswith(urls.topic_week("language", site.weeks[0]))
    assert section[0]["brief"] and section[0]["picks"]
    text, html_part = render_digest(site.settings, {"name": "wren", "email": "w@example.org"},
                                    monday, [], "http://x/unsubscribe", section)
    for part in (text, html_part):
        assert "This week in the topics you follow" in part and section[0]["url"] in part


def test_the_static_export_holds_threads_and_briefs(site: Any) -> None:
    out = site.root / "export"
    report = build_site(site.settings, out)
    assert report.ok
    assert (out / f"threads/{site.thread_id}.html").is_file()
    assert (out / f"threads/{site.thread_id}.atom").is_file()
    assert (out / f"topics/language/weeks/{site.weeks[0]}.html").is_file()
    assert (out / "topics/language/week.html").is_file()
    assert feedparser.parse((out / "topics/language/weeks.atom").read_bytes()).entries


def test_the_pages_in_chromium(site: Any) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        errors = console_errors(page)
        page.goto(site.url + urls.topic_latest_week("language"))
        assert page.locator("section.five .pick").count() >= 1
        # The busiest week of the fixture: five picks and a full brief.
        page.goto(site.url + urls.topic_week("language", site.weeks[-1]))
        assert page.locator("section.five .pick").count() == 5
        page.screenshot(path=str(ARTIFACTS / "brief-week.png"), full_page=True)
        page.goto(site.url + urls.paper(site.link[0]))
        page.locator("section.paper-links").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "paper-links.png"))
        # A signed-in reader follows the thread from its page, in place.
        page.goto(site.url + "/signup")
        page.fill("#signup-name", "thread-reader")
        page.fill("#signup-password", PASSWORD)
        page.click("form.stack button")
        page.wait_for_url("**/me/profile")
        page.goto(site.url + urls.thread(site.thread_id))
        page.click("form.follow button")
        page.locator("form.follow button[aria-pressed=true]").wait_for(timeout=10_000)
        page.screenshot(path=str(ARTIFACTS / "thread.png"), full_page=True)
    assert not errors, errors
    me = json.loads(site.client.get(urls.thread(site.thread_id) + ".json").text)
    assert me["thread"]["id"] == site.thread_id
