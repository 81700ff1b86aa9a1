"""Readers on the site served for real: sign-up and log-in, CSRF on every form, each reader's data their own, clear answers to bad input, and the whole loop in chromium."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from papersift.settings import load_settings
from papersift.store import open_store
from tests.conftest import shared_file
from tests.web_helpers import (
    ARTIFACTS,
    LiveServer,
    chromium,
    console_errors,
    fill_store,
    free_port,
    site_database_url,
    write_fixture,
)

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The site over a store of each backend (browser tests use the SQLite one only: what
    they check happens in the browser)."""
    root = tmp_path_factory.mktemp("readers-web")
    write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), root / "papers.jsonl", days=3,
                  per_day=40)
    port = free_port()
    settings = load_settings(environ={}, config=root / "none.toml", data_dir=str(root / "data"),
                             database_url=site_database_url(request),
                             base_url=f"http://127.0.0.1:{port}", threads=1, feed_size=20,
                             # Many readers sign up from 127.0.0.1 here; the limit has its test.
                             signup_attempts=1000)
    fill_store(settings, root / "papers.jsonl")
    with LiveServer(settings, port) as server:
        server.settings = settings
        yield server


def _form_token(client: httpx.Client, path: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', client.get(path).text).group(1)


def _csrf(client: httpx.Client) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get("/me/profile").text).group(1)


def reader(site: Any, name: str) -> httpx.Client:
    """A browser-like client signed up as `name`."""
    client = httpx.Client(base_url=site.url, timeout=60)
    answer = client.post("/signup", data={"form_token": _form_token(client, "/signup"),
                                          "name": name, "password": PASSWORD})
    assert answer.status_code == 303 and answer.headers["location"] == "/me/profile", answer.text
    return client


def test_pages_of_a_reader_need_a_session(site: Any) -> None:
    with httpx.Client(base_url=site.url) as anonymous:
        assert anonymous.get("/me").headers["location"] == "/login?next=%2Fme"
        assert anonymous.get("/me.json").status_code == 401
        assert anonymous.post("/me/react", data={"paper_id": "x", "reaction": "up"}
                              ).status_code == 401
    forged = {"papersift_session": "not-a-signed-token"}
    with httpx.Client(base_url=site.url, cookies=forged) as forger:
        assert forger.get("/me").status_code == 303


def test_sign_up_sets_a_safe_cookie_and_refuses_bad_input(site: Any) -> None:
    client = httpx.Client(base_url=site.url)
    token = _form_token(client, "/signup")
    assert client.post("/signup", data={"name": "carol", "password": PASSWORD}
                       ).status_code == 403  # no form token
    short = client.post("/signup", data={"form_token": token, "name": "carol", "password": "x"})
    assert short.status_code == 400 and "at least 10 characters" in short.text
    answer = client.post("/signup", data={"form_token": token, "name": "carol",
                                          "password": PASSWORD})
    cookie = answer.headers["set-cookie"]
    assert "papersift_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
    taken = httpx.post(site.url + "/signup", data={"form_token": token, "name": "Carol",
                                                   "password": PASSWORD},
                       cookies={"papersift_form": client.cookies["papersift_form"]})
    assert taken.status_code == 400 and "taken" in taken.text


def test_one_reader_cannot_read_or_change_anothers_data(site: Any) -> None:
    ada, bob = reader(site, "ada-web"), reader(site, "bob-web")
    paper = ada.get("/me.json").json()["papers"][0]["id"]
    csrf = _csrf(ada)
    for path, data in (("/me/react", {"paper_id": paper, "reaction": "up"}),
                       ("/me/collections", {"paper_id": paper, "collection": "Secret"}),
                       ("/me/feedback", {"text": "more about secret plans"})):
        assert ada.post(path, data={**data, "csrf": csrf}).status_code == 303
    assert ada.get("/me/collections/Secret.json").json()["papers"][0]["id"] == paper
    assert bob.get("/me/collections/Secret").status_code == 404
    assert bob.get("/me/collections/Secret.json").status_code == 404
    mine = bob.get("/me/profile.json").json()
    assert mine["reader"] == {"name": "bob-web"} and mine["entries"] == []
    assert mine["collections"] == [] and mine["reactions"] == []
    assert "secret" not in bob.get("/me").text.lower()
    entry = ada.get("/me/profile.json").json()["entries"][0]
    # Ada's form token does not work in Bob's session, and Bob cannot remove Ada's entry.
    assert bob.post("/me/entries/delete", data={"csrf": csrf, "entry_id": entry["id"]}
                    ).status_code == 403
    assert bob.post("/me/entries/delete", data={"csrf": _csrf(bob), "entry_id": entry["id"]}
                    ).status_code == 303
    assert ada.get("/me/profile.json").json()["entries"] == [entry]


def test_bad_input_gets_a_message_and_changes_nothing(site: Any) -> None:
    client = reader(site, "dora-web")
    csrf = _csrf(client)
    json_ = {"accept": "application/json"}
    answers = {
        "unknown paper": client.post("/me/react", headers=json_, data={
            "csrf": csrf, "paper_id": "2609.99999", "reaction": "up"}),
        "missing csrf": client.post("/me/react", headers=json_, data={
            "paper_id": "2609.99999", "reaction": "up"}),
        "100 KB feedback": client.post("/me/feedback", headers=json_, data={
            "csrf": csrf, "text": "more about theory " * 6000}),
        "not BibTeX": client.post("/me/import", headers=json_, data={
            "csrf": csrf, "text": "Dear papersift, this is a letter."}),
        "bad follow": client.post("/me/follow", headers=json_, data={
            "csrf": csrf, "kind": "planet", "value": "mars"}),
    }
    assert {k: v.status_code for k, v in answers.items()} == {
        "unknown paper": 400, "missing csrf": 403, "100 KB feedback": 413, "not BibTeX": 400,
        "bad follow": 400}
    assert "no paper" in answers["unknown paper"].json()["error"]
    assert "no arXiv ids found" in answers["not BibTeX"].json()["error"]
    profile = client.get("/me/profile.json").json()
    assert profile["entries"] == profile["reactions"] == profile["follows"] == []


def test_logins_are_rate_limited_and_logout_ends_the_session(site: Any) -> None:
    client = reader(site, "eve-web")
    old_cookie = client.cookies["papersift_session"]
    assert client.post("/logout", data={"csrf": _csrf(client)}).status_code == 303
    assert httpx.get(site.url + "/me", cookies={"papersift_session": old_cookie}
                     ).status_code == 303  # the session is over on the server too
    stranger = httpx.Client(base_url=site.url)
    token = _form_token(stranger, "/login")
    for _ in range(site.settings.login_attempts):
        wrong = stranger.post("/login", data={"form_token": token, "name": "eve-web",
                                              "password": "not the password"})
        assert wrong.status_code == 401 and "wrong name or password" in wrong.text
    right = stranger.post("/login", data={"form_token": token, "name": "eve-web",
                                          "password": PASSWORD})
    assert right.status_code == 401 and "too many failed logins" in right.text


def test_a_rating_changes_the_next_feed(site: Any) -> None:
    client = reader(site, "fay-web")
    csrf = _csrf(client)
    first = client.get("/me.json").json()["papers"]
    for paper in first[:3]:
        assert client.post("/me/react", data={"csrf": csrf, "paper_id": paper["id"],
                                              "reaction": "up"}).status_code == 303
    second = client.get("/me.json").json()["papers"]
    assert not {p["id"] for p in first[:3]} & {p["id"] for p in second}
    liked = {p["id"] for p in first[:3]}
    assert any(r.get("paper_id") in liked for p in second for r in p["reasons"])
    with open_store(site.settings) as store:
        ada = store.readers.find_reader("fay-web")
        assert {r["paper_id"] for r in store.readers.reactions_of(ada["id"])} == liked


@pytest.mark.browser
def test_a_new_reader_signs_up_follows_rates_and_tells_papersift(site: Any) -> None:
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        errors = console_errors(page)
        _walk(site, page)
    assert not errors, errors


def _walk(site: Any, page: Any) -> None:
    page.goto(site.url + "/signup")
    page.fill("#signup-name", "gina-browser")
    page.fill("#signup-password", PASSWORD)
    page.click("form.stack button")
    page.wait_for_url("**/me/profile")
    options = page.locator("#follow-topic option")
    for index in range(2):
        page.select_option("#follow-topic", value=options.nth(index).get_attribute("value"))
        page.click("text=Follow topic")
        page.wait_for_url("**/me/profile")
    assert page.locator("#follows li").count() == 2
    page.screenshot(path=str(ARTIFACTS / "readers-1-profile.png"))
    page.goto(site.url + "/me")
    before = page.locator("article.paper h2 a").all_inner_texts()
    assert page.locator("ul.reasons li", has_text="a topic you follow").count() > 0
    page.screenshot(path=str(ARTIFACTS / "readers-2-feed-follows.png"))
    for index in range(5):  # rated with the script: no page load, the button shows it
        form = page.locator("form.react").nth(index)
        form.locator("button[value=up]").click()
        form.locator("button[value=up][aria-pressed=true]").wait_for(timeout=10_000)
    assert page.locator("button[value=up][aria-pressed=true]").count() == 5
    page.fill("#feedback-text", "more about language models, less about benchmarks")
    page.click("form.feedback button")
    page.wait_for_url("**/me")
    after = page.locator("article.paper h2 a").all_inner_texts()
    assert after != before
    assert page.locator("ul.reasons li", has_text="close to a paper you liked").count() > 0
    assert page.locator(".entries .tag", has_text="more: language models").count() == 1
    page.screenshot(path=str(ARTIFACTS / "readers-3-feed-after.png"))


# ------------------------------------------------------------------ delivery
def _link_lines(message: Any) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in message.get_body(("plain",)).get_content().splitlines():
        if "/l/" in line:
            label, _, url = line.strip().partition(": ")
            found.setdefault(label, []).append(url)
    return found


def test_the_whole_loop_sign_up_follow_digest_rate_next_digest(site: Any) -> None:
    from datetime import UTC, datetime, timedelta

    from papersift.delivery.digest import send_digests
    from tests.smtp_server import SmtpServer

    client = httpx.Client(base_url=site.url, timeout=60)
    client.post("/signup", data={"form_token": _form_token(client, "/signup"),
                                 "name": "hana-mail", "password": PASSWORD,
                                 "email": "hana@example.org"})
    topics = client.get("/me/profile.json").json()["topics"]
    assert client.post("/me/follow", data={"csrf": _csrf(client), "kind": "topic",
                                           "value": topics[0]["slug"]}).status_code == 303
    with SmtpServer() as smtp, open_store(site.settings) as store:
        mail = site.settings.replace(**smtp.settings(), digest_size=4)
        assert send_digests(store, mail, "hana-mail").counts["sent"] == 1
        [first] = smtp.inbox.messages
        assert not any("close to a paper you liked" in r for r in
                       first.get_body(("plain",)).get_content().splitlines())
        rate = _link_lines(first)["More like this"][0]
        assert rate.startswith(site.url + "/l/")
        # A GET (a mail scanner's fetch) only shows what the link does; its button does it.
        landing = httpx.get(rate)
        assert landing.status_code == 200 and "This link will like this paper" in landing.text
        assert store.readers.reactions_of(store.readers.find_reader("hana-mail")["id"]) == []
        done = httpx.post(rate)
        assert done.status_code == 200 and "Liked; your next feed" in done.text
        again = httpx.post(rate)
        assert again.status_code == 409 and "already used" in again.text
        tomorrow = datetime.now(UTC) + timedelta(days=1)
        assert send_digests(store, mail, "hana-mail", now=tomorrow).counts["sent"] == 1
        second = smtp.inbox.messages[1].get_body(("plain",)).get_content()
        assert "close to a paper you liked" in second  # the rating shaped the next digest
        unsubscribe = first["List-Unsubscribe"].strip("<>")
        one_click = httpx.post(unsubscribe, data={"List-Unsubscribe": "One-Click"})
        assert one_click.status_code == 200
        assert store.delivery.delivery_settings(
            store.readers.find_reader("hana-mail")["id"])["schedule"] == "off"
    assert httpx.get(site.url + "/l/not-a-real-token").status_code == 400


def test_private_feed_export_and_delete(site: Any) -> None:
    import feedparser

    client = reader(site, "ivan-feed")
    made = client.post("/me/feed-token", data={"csrf": _csrf(client)},
                       headers={"accept": "application/json"}).json()
    feed_url = made["feed_url"]
    assert feed_url.startswith(site.url + "/me/feed.atom?token=")
    parsed = feedparser.parse(httpx.get(feed_url).content)
    assert parsed.entries and "ivan-feed" in parsed.feed.title
    client.post("/me/feed-token", data={"csrf": _csrf(client)})  # a new one: the old stops
    assert httpx.get(feed_url).status_code == 404
    newer = client.post("/me/feed-token", data={"csrf": _csrf(client)},
                        headers={"accept": "application/json"}).json()["feed_url"]
    assert httpx.get(newer).status_code == 200
    revoked = client.post("/me/feed-token", data={"csrf": _csrf(client), "revoke": "1"})
    assert "no longer works" in revoked.text
    assert httpx.get(newer).status_code == 404  # revoked, and no new address made
    assert httpx.get(site.url + "/me/feed.atom").status_code == 404
    exported = client.get("/me/export.json")
    assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
    assert exported.json()["reader"]["name"] == "ivan-feed"
    wrong = client.post("/me/delete", data={"csrf": _csrf(client), "password": "not it at all"},
                        headers={"accept": "application/json"})
    assert wrong.status_code == 400 and "wrong name or password" in wrong.json()["error"]
    gone = client.post("/me/delete", data={"csrf": _csrf(client), "password": PASSWORD})
    assert gone.status_code == 303
    with open_store(site.settings) as store:
        assert store.readers.find_reader("ivan-feed") is None


def test_a_library_export_is_imported_from_the_form_with_a_page_that_says_what_happened(
        site: Any) -> None:
    """A Zotero-sized BibTeX file (1,000 entries, ~190 KB) pasted in the profile's form: a
    page (not JSON) saying what was liked and what was not; too large a file gets a page too."""
    client = reader(site, "lib-web")
    with open_store(site.settings, readonly=True) as store:
        stored = [p["id"] for p in store.papers.iter_papers()][:100]
    ids = stored + [f"2401.{n:05d}" for n in range(1000 - len(stored))]
    text = "".join(
        f"@article{{key{n},\n  title = {{A {{Study}} number {n}}},\n  author = {{Ada One and"
        f" Bea Two}},\n  journal = {{arXiv preprint}},\n  eprint = {{{pid}}},\n  archivePrefix"
        f" = {{arXiv}},\n  url = {{https://arxiv.org/abs/{pid}}},\n}}\n"
        for n, pid in enumerate(ids))
    assert 150_000 < len(text) < 250_000
    html = {"accept": "text/html"}
    page = client.post("/me/import", headers=html, data={"csrf": _csrf(client), "text": text})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f"{len(stored)} papers liked; {1000 - len(stored)} not in this store" in page.text
    liked = client.get("/me/profile.json").json()["reactions"]
    assert len(liked) == len(stored)
    huge = client.post("/me/import", headers=html, data={"csrf": _csrf(client),
                                                         "text": "x" * 7_000_000})
    assert huge.status_code == 413 and huge.headers["content-type"].startswith("text/html")
    assert "more than 6.1 MB" in huge.text
