"""Readers act where they read (issue 32): rate, save and follow from every shared page, "This is me" on author pages, the front page's "For you" strip, a feed that widens rather than empties, and the anonymous cache left alone; the whole scenario in chromium."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from papersift.recommend import window as window_cache
from papersift.recommend.feed import build_feed
from papersift.records import PaperRecord
from papersift.settings import load_settings
from papersift.store import add_records, open_store
from papersift.web import urls
from papersift.web.reader_views import plural
from tests.conftest import shared_file
from tests.web_helpers import (
    ARTIFACTS,
    LiveServer,
    chromium,
    console_errors,
    fill_store,
    free_port,
    write_fixture,
)

PASSWORD = "correct horse battery"
JSON = {"accept": "application/json"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A small SQLite store (three days of 15 papers and the hostile one), served."""
    root = tmp_path_factory.mktemp("readers-act")
    write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), root / "papers.jsonl", days=3,
                  per_day=15)
    port = free_port()
    settings = load_settings(environ={}, config=root / "none.toml", data_dir=str(root / "data"),
                             base_url=f"http://127.0.0.1:{port}", threads=1, feed_size=12,
                             signup_attempts=1000)
    fill_store(settings, root / "papers.jsonl")
    with LiveServer(settings, port) as server:
        server.settings = settings
        with open_store(settings) as store:
            topics = store.topics.list_topics(include_other=False)
            server.topic = max(topics, key=lambda t: t["size"])["slug"]
            server.section = store.topics.list_sections()[0]["slug"]
            paper = store.pages.listing_by_ids([store.pages.day_papers(
                store.pages.latest_day())[0]["id"]])
            row = next(iter(paper.values()))
            server.author = row["lead_authors"][0]["slug"]
        yield server


def _form_token(client: httpx.Client, path: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', client.get(path).text).group(1)


def csrf_of(client: httpx.Client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/me/profile").text).group(1)


def reader(site: Any, name: str) -> httpx.Client:
    client = httpx.Client(base_url=site.url, timeout=60)
    answer = client.post("/signup", data={"form_token": _form_token(client, "/signup"),
                                          "name": name, "password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


def _cards(html: str) -> list[str]:
    return re.findall(r'<article class="paper" id="([^"]+)"', html)


def test_anonymous_pages_offer_a_sign_in_link_not_forms(site: Any) -> None:
    with httpx.Client(base_url=site.url, timeout=60) as anonymous:
        for path in (urls.FRONT, urls.topic(site.topic), urls.author(site.author),
                     urls.with_query(urls.SEARCH, q="learning")):
            page = anonymous.get(path)
            assert page.status_code == 200, path
            assert 'class="react"' not in page.text and 'class="follow"' not in page.text
            assert "Sign in to rate or save" in page.text, path
        search = anonymous.get(urls.with_query(urls.SEARCH, q="learning")).text
        assert "/login?next=/search%3Fq%3Dlearning" in search  # back to the same results
        topic = anonymous.get(urls.topic(site.topic))
        assert "Sign in to follow this topic" in topic.text
        assert topic.headers["cache-control"].startswith("public")
        assert "For you" not in anonymous.get(urls.FRONT).text


def test_a_reader_rates_and_saves_from_a_topic_page_and_comes_back_to_the_card(
        site: Any) -> None:
    client = reader(site, "rita-act")
    csrf = csrf_of(client)
    path = urls.topic(site.topic)
    page = client.get(path)
    cards = _cards(page.text)
    assert cards and page.text.count('<form class="react"') == len(cards)
    assert page.headers["cache-control"] == "private, no-store"
    assert 'class="follow"' in page.text and "Follow this topic" in page.text
    paper = re.search(r'name="paper_id" value="([^"]+)"', page.text).group(1)
    back = f"{path}#{cards[0]}"
    answer = client.post(urls.ME_REACT, data={"csrf": csrf, "paper_id": paper,
                                              "reaction": "up", "next": back})
    assert answer.status_code == 303 and answer.headers["location"] == back
    saved = client.post(urls.ME_SAVE, data={"csrf": csrf, "paper_id": paper,
                                            "collection": "Thesis", "next": back})
    assert saved.headers["location"] == back
    again = client.get(path).text
    card = again[again.index(f'id="{cards[0]}"'):]
    card = card[:card.index("</article>")]
    assert 'value="up" aria-pressed="true"' in card and "Saved ✓" in card and "in Thesis" in card
    # The anonymous rendering of the same page knows nothing of it.
    anonymous = httpx.get(site.url + path).text
    assert 'aria-pressed="true"' not in anonymous and "Thesis" not in anonymous
    # A script acts with the token in a header and gets JSON.
    scripted = client.post(urls.ME_REACT, headers={**JSON, "x-csrf-token": csrf},
                           data={"paper_id": paper, "reaction": "clear"})
    assert scripted.status_code == 200 and scripted.json()["ok"]


@pytest.mark.parametrize("target", ["//evil.example/x", "/\\evil.example", "https://evil.example",
                                    "/ok\r\nSet-Cookie: x=1", "javascript:alert(1)"])
def test_a_form_sends_the_browser_back_only_to_a_local_path(site: Any, target: str) -> None:
    client = reader(site, f"nina-{abs(hash(target)) % 10_000}")
    paper = re.search(r'name="paper_id" value="([^"]+)"',
                      client.get(urls.topic(site.topic)).text).group(1)
    answer = client.post(urls.ME_REACT, data={"csrf": csrf_of(client), "paper_id": paper,
                                              "reaction": "up", "next": target})
    assert answer.status_code == 303 and answer.headers["location"] == urls.ME


def test_every_new_post_refuses_a_missing_or_foreign_token_and_a_signed_out_request(
        site: Any) -> None:
    owner, other = reader(site, "olga-act"), reader(site, "otto-act")
    foreign = csrf_of(other)
    posts = {urls.ME_CLAIM: {"author": site.author},
             urls.ME_UNCLAIM: {"author": site.author},
             urls.ME_FOLLOW: {"target": f"topic:{site.topic}"},
             urls.ME_UNFOLLOW: {"target": f"topic:{site.topic}"},
             urls.ME_REACT: {"paper_id": "x", "reaction": "up"},
             urls.ME_SAVE: {"paper_id": "x", "collection": "A"}}
    for path, data in posts.items():
        assert httpx.post(site.url + path, data=data).status_code == 401, path
        assert owner.post(path, data=data).status_code == 403, path
        assert owner.post(path, data={**data, "csrf": foreign}).status_code == 403, path
        assert owner.post(path, data=data, headers={"x-csrf-token": foreign}
                          ).status_code == 403, path
    with open_store(site.settings) as store:
        olga = store.readers.find_reader("olga-act")
        assert store.readers.claims_of(olga["id"]) == []
        assert store.readers.follows_of(olga["id"]) == []


def test_follow_and_unfollow_from_the_pages_show_the_state(site: Any) -> None:
    client = reader(site, "fred-act")
    csrf = csrf_of(client)
    pages = {f"topic:{site.topic}": urls.topic(site.topic),
             f"section:{site.section}": urls.section(site.section),
             "category:cs.LG": urls.category("cs.LG"),
             f"author:{site.author}": urls.author(site.author),
             # The search's filters are kept: the feed applies them as the search page does.
             "search:graph learning cat:cs.LG": urls.with_query(
                 urls.SEARCH, q="graph  learning", category="cs.LG")}
    for target, path in pages.items():
        before = client.get(path).text
        assert f'name="target" value="{target}"' in before, path
        assert f'action="{urls.ME_FOLLOW}"' in before
        answer = client.post(urls.ME_FOLLOW, data={"csrf": csrf, "target": target,
                                                   "next": path})
        assert answer.status_code == 303 and answer.headers["location"] == path
        after = client.get(path).text
        assert "Following " in after and f'action="{urls.ME_UNFOLLOW}"' in after, path
    me = client.get(urls.ME).text
    assert "You follow" in me and "Search: graph learning cat:cs.LG" in me
    client.post(urls.ME_UNFOLLOW, data={"csrf": csrf, "target": f"topic:{site.topic}"})
    assert f'action="{urls.ME_FOLLOW}"' in client.get(urls.topic(site.topic)).text


def test_this_is_me_likes_follows_and_is_private(site: Any) -> None:
    client = reader(site, "clara-act")
    csrf = csrf_of(client)
    author = urls.author(site.author)
    assert ">This is me</button>" in client.get(author).text
    answer = client.post(urls.ME_CLAIM, headers=JSON, data={"csrf": csrf,
                                                           "author": site.author})
    liked = answer.json()["result"]["liked"]
    assert answer.status_code == 200 and liked >= 1
    page = client.get(author).text
    assert "This is you" in page and "Following " in page
    assert page.count('value="up" aria-pressed="true"') == min(liked, page.count("<article"))
    profile = client.get(urls.ME_PROFILE).text
    assert "liked from the claim" in profile and f"{plural(liked, 'paper')} liked" in profile
    me = client.get(urls.ME).text
    assert "You are " in me
    # Private: another reader sees the button, not the claim.
    other = reader(site, "claude-act").get(author).text
    assert "This is you" not in other and ">This is me</button>" in other
    removed = client.post(urls.ME_UNCLAIM, headers=JSON, data={"csrf": csrf,
                                                              "author": site.author})
    assert removed.json()["result"]["unliked"] == liked
    with open_store(site.settings) as store:
        me_ = store.readers.find_reader("clara-act")
        assert store.readers.claims_of(me_["id"]) == []
        assert store.readers.reactions_of(me_["id"]) == []
        assert store.readers.follows_of(me_["id"]) == []


def test_a_claimed_authors_new_paper_is_the_readers_own_not_a_recommendation(
        site: Any) -> None:
    client = reader(site, "owen-act")
    with open_store(site.settings) as store:
        latest = store.pages.latest_day()
        add_records(store, [PaperRecord(id="2699.00001", title="My new paper on graphs",
                                        abstract="We study graphs. A second sentence.",
                                        authors=["Own Author Act"], categories=["cs.LG"],
                                        source="file", announced=latest)])
        owen = store.readers.find_reader("owen-act")
        store.readers.add_claim(owen["id"], "own-author-act")
        window_cache.clear()
        feed = build_feed(store, site.settings, store.readers.get_reader(owen["id"]))
    assert feed.own == ["2699.00001"]
    assert "2699.00001" not in {i["paper_id"] for i in feed.items}
    window_cache.clear()
    me = client.get(urls.ME).text
    assert "Your new papers" in me and "My new paper on graphs" in me


def test_the_signed_in_front_page_has_a_for_you_strip(site: Any) -> None:
    client = reader(site, "fiona-act")
    csrf = csrf_of(client)
    client.post(urls.ME_FOLLOW, data={"csrf": csrf, "target": f"topic:{site.topic}"})
    front = client.get(urls.FRONT).text
    strip = front[front.index('class="for-you"'):front.index("</section>",
                                                             front.index('class="for-you"'))]
    assert 1 <= strip.count("<article") <= 5
    assert 'class="reasons"' in strip and "a topic you follow" in strip
    assert 'id="fy-p-' in strip
    assert "For you" not in httpx.get(site.url + urls.FRONT).text


def test_a_thin_window_widens_and_says_so(site: Any) -> None:
    settings = site.settings.replace(feed_days=1)
    with open_store(settings) as store:
        window_cache.clear()
        win = window_cache.window(store, settings)
        latest = store.pages.latest_day()
        thin = len(store.pages.day_papers(latest)) < window_cache.MIN_CANDIDATES
    window_cache.clear()
    assert win.widened == thin and (win.days > 1) == thin
    assert len(win.candidates.rows) >= min(window_cache.MIN_CANDIDATES, 40)
    assert plural(1, "paper") == "1 paper" and plural(1204, "paper") == "1,204 papers"


@pytest.mark.browser
def test_the_issue_scenario_in_chromium(site: Any) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        errors = console_errors(page)
        _scenario(site, page)
    assert not errors, errors


def _scenario(site: Any, page: Any) -> None:
    page.goto(site.url + "/signup")
    page.fill("#signup-name", "sam-browser")
    page.fill("#signup-password", PASSWORD)
    page.click("form.stack button")
    page.wait_for_url("**/me/profile")
    # Follow a topic from its page, in place.
    page.goto(site.url + urls.topic(site.topic))
    page.click("form.follow button")
    page.locator("form.follow button[aria-pressed=true]").wait_for(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "act-1-topic-signed-in.png"))
    # Follow an author from the author page.
    page.goto(site.url + urls.author(site.author))
    page.click("form.follow button")
    page.locator("form.follow button[aria-pressed=true]").wait_for(timeout=10_000)
    # Like three papers on the front page and mark one not interested, without reloads.
    page.goto(site.url + urls.FRONT)
    forms = page.locator("section.front-section form.react")
    for index in range(3):
        forms.nth(index).locator("button[value=up]").click()
        forms.nth(index).locator("button[value=up][aria-pressed=true]").wait_for(timeout=10_000)
    not_wanted = forms.nth(3)
    gone = not_wanted.locator("input[name=paper_id]").get_attribute("value")
    not_wanted.locator("button[value=not_interested]").click()
    not_wanted.locator("button[value=not_interested][aria-pressed=true]").wait_for(
        timeout=10_000)
    page.locator("section.front-section .actions").first.screenshot(
        path=str(ARTIFACTS / "act-2-card-controls.png"))
    # Save one from a search result page.
    page.goto(site.url + urls.with_query(urls.SEARCH, q="learning"))
    page.locator("form.save button").first.click()
    page.locator("form.save button[aria-pressed=true]").first.wait_for(timeout=10_000)
    # Claim an author with "This is me" (a plain form: the page comes back with the claim).
    page.goto(site.url + urls.author(site.author))
    page.click("form.claim button")
    page.locator(".claimed").wait_for(timeout=10_000)
    # /me lists the follows and the claim, names them in reasons, drops the unwanted paper.
    page.goto(site.url + urls.ME)
    follows = page.locator("p.follows").inner_text()
    assert "You are" in follows and "Topic:" in follows and "Author:" in follows
    assert page.locator("ul.reasons li").count() > 0
    reasons = " ".join(page.locator("ul.reasons li").all_inner_texts())
    assert "you follow" in reasons or "you liked" in reasons, reasons
    assert page.locator(f"input[name=paper_id][value='{gone}']").count() == 0
    page.goto(site.url + urls.FRONT)
    page.locator("section.for-you").wait_for()
    page.locator("section.for-you").screenshot(path=str(ARTIFACTS / "act-3-for-you.png"))
