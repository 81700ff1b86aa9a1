"""Email digests to a real SMTP server on 127.0.0.1: what is sent and when, what a refusing, dropping or slow server leaves, and the signed links in them."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage

import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.delivery import preferences
from papersift.delivery.digest import send_digests
from papersift.delivery.links import follow_link, make_link
from papersift.readers import accounts, signals
from papersift.readers.export import delete_account, export_reader
from papersift.settings import Settings
from papersift.store import Store
from tests.reader_helpers import make_world
from tests.smtp_server import SmtpServer

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def smtp() -> SmtpServer:
    with SmtpServer() as server:
        yield server


@pytest.fixture
def setup(store: Store, settings: Settings, smtp: SmtpServer) -> tuple[Settings, int, dict]:
    world = make_world(store)
    reader = accounts.add_reader(store, "ada", "correct horse battery", "ada@example.org")
    for pid in world["old-graphs"][:4]:
        signals.react(store, reader, pid, "up")
    return settings.replace(**smtp.settings(), digest_size=5), reader, world


def _links(message: EmailMessage) -> list[str]:
    text = message.get_body(("plain",)).get_content()
    return [line.split(": ", 1)[1] for line in text.splitlines() if "/l/" in line]


def test_a_digest_is_multipart_with_one_click_headers(store, setup, smtp) -> None:
    settings, reader, _ = setup
    report = send_digests(store, settings)
    assert report.counts["sent"] == 1 and report.ok
    [message] = smtp.inbox.messages
    assert message["To"] == "ada@example.org" and message["From"] == "digest@papersift.test"
    assert message.get_content_type() == "multipart/alternative"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["List-Unsubscribe"].startswith("<http://127.0.0.1:8000/l/")
    assert message["Message-ID"].startswith(f"<digest-{reader}-")
    html = message.get_body(("html",)).get_content()
    assert "<script" not in html.lower() and " src=" not in html.lower()
    assert "<link" not in html.lower() and "url(" not in html.lower()
    digest = store.delivery.digests_of(reader)[0]
    assert digest["status"] == "sent" and len(digest["papers"]) == 5
    assert store.delivery.sent_paper_ids(reader) == set(digest["papers"])


def test_never_twice_never_empty(store, setup, smtp) -> None:
    settings, reader, _ = setup
    today = datetime.now(UTC)
    assert send_digests(store, settings, now=today).counts["sent"] == 1
    assert send_digests(store, settings, now=today).counts == {
        "sent": 0, "failed": 0, "empty": 0, "already": 1}
    sent = set()
    for days in range(1, 12):  # day after day, until the week's papers run out
        report = send_digests(store, settings, now=today + timedelta(days=days))
        papers = store.delivery.digests_of(reader)[0]["papers"]
        if report.counts["empty"]:
            break
        assert not set(papers) & sent
        sent |= set(papers)
    else:
        pytest.fail("the digests never ran out of papers")
    assert len(smtp.inbox.messages) == len(store.delivery.digests_of(reader))


@pytest.mark.parametrize("mode", ["refuse", "drop", "slow", "refuse_rcpt"])
def test_a_failed_send_is_recorded_and_sent_by_the_next_run(store, setup, smtp, mode) -> None:
    settings, reader, _ = setup
    smtp.inbox.mode, smtp.inbox.delay = mode, 3.0
    started = time.monotonic()
    report = send_digests(store, settings.replace(smtp_timeout=1.0))
    assert time.monotonic() - started < 10
    assert report.counts["failed"] == 1 and not report.ok and report.failures[0]["source"] == "ada"
    [digest] = store.delivery.digests_of(reader)
    assert digest["status"] == "failed" and digest["last_error"]
    assert store.delivery.sent_paper_ids(reader) == set()  # nothing counts as sent
    smtp.inbox.mode = "ok"
    smtp.inbox.messages.clear()
    assert send_digests(store, settings).counts["sent"] == 1
    [again] = store.delivery.digests_of(reader)
    assert again["papers"] == digest["papers"] and again["status"] == "sent"
    assert smtp.inbox.messages[-1]["Message-ID"] == digest["message_id"]


def test_schedules_pauses_and_catch_up(store, setup, smtp) -> None:
    settings, reader, _ = setup
    monday = datetime(2026, 11, 30, 7, tzinfo=UTC)
    preferences.set_schedule(store, reader, "weekly", ["thu"], False)
    assert send_digests(store, settings, now=monday).counts["sent"] == 0  # not due
    preferences.set_schedule(store, reader, "daily", [], True)
    assert send_digests(store, settings, now=monday).counts["sent"] == 0  # paused
    with pytest.raises(Exception, match="paused"):
        send_digests(store, settings, "ada", now=monday)
    with pytest.raises(Exception, match="a weekly digest needs"):
        preferences.set_schedule(store, reader, "weekly", [], False)
    preferences.set_schedule(store, reader, "daily", [], False)
    # Back after two months: the best papers, not everything.
    report = send_digests(store, settings.replace(digest_size=3), now=datetime.now(UTC))
    assert report.counts["sent"] == 1 and len(store.delivery.digests_of(reader)[0]["papers"]) == 3


def test_links_rate_once_and_refuse_forgeries(store, setup, smtp) -> None:
    settings, reader, _ = setup
    send_digests(store, settings)
    up = _links(smtp.inbox.messages[0])[0]  # "More like this" of the first paper
    token = up.rsplit("/l/", 1)[1]
    done = follow_link(store, settings, token)
    assert done.status == "done" and done.action == "up"
    assert (done.paper_id, "up") in {(r["paper_id"], r["reaction"])
                                     for r in store.readers.reactions_of(reader)}
    assert follow_link(store, settings, token).status == "used"
    tampered = token[:-3] + ("abc" if not token.endswith("abc") else "xyz")
    assert follow_link(store, settings, tampered).status == "forged"
    account = store.readers.get_reader(reader)
    old = make_link(settings.replace(link_days=0), account, "down", done.paper_id)
    time.sleep(1.1)
    assert follow_link(store, settings.replace(link_days=0), old.rsplit("/l/", 1)[1]
                       ).status == "expired"
    other_key = settings.replace(secret_key="another site")
    assert follow_link(store, other_key, token).status == "forged"
    unsubscribe = make_link(settings, account, "unsubscribe").rsplit("/l/", 1)[1]
    assert follow_link(store, settings, unsubscribe).status == "done"
    assert store.delivery.delivery_settings(reader)["schedule"] == "off"


def test_export_and_delete(store, setup, smtp) -> None:
    settings, reader, world = setup
    signals.save(store, reader, "To read", world["graphs"][0])
    signals.give_feedback(store, reader, "less about chemistry")
    send_digests(store, settings)
    data = export_reader(store, reader)
    assert data["reader"]["name"] == "ada" and len(data["reactions"]) == 4
    assert data["collections"][0]["papers"] == [world["graphs"][0]]
    assert data["profile_entries"][0]["phrase"] == "chemistry"
    assert data["digests"][0]["status"] == "sent"
    json.dumps(data)
    ada = store.readers.get_reader(reader)
    with pytest.raises(accounts.LoginRefused):
        delete_account(store, settings, ada, "wrong password")
    assert store.readers.get_reader(reader) is not None
    delete_account(store, settings, ada, "correct horse battery")
    assert store.readers.get_reader(reader) is None
    assert store.delivery.digests_of(reader) == [] and store.delivery.sent_paper_ids(reader) == set()


def test_the_command_line(store, setup, smtp, monkeypatch) -> None:
    settings, _, _ = setup
    for name, value in settings.values.items():
        if name.startswith(("smtp_", "mail_", "digest_")):
            monkeypatch.setenv(f"PAPERSIFT_{name.upper()}", str(value))
    runner = CliRunner()
    preview = runner.invoke(app, ["digest", "preview", "ada"])
    assert preview.exit_code == 0 and "More like this:" in preview.stdout
    assert smtp.inbox.messages == []  # a preview sends nothing
    sent = runner.invoke(app, ["digest", "send", "--json"])
    assert sent.exit_code == 0 and json.loads(sent.stdout)["counts"]["sent"] == 1
    assert runner.invoke(app, ["digest", "send", "--reader", "nobody"]).exit_code == 1
    smtp.inbox.mode = "refuse"
    later = runner.invoke(app, ["digest", "send", "--reader", "ada", "--json"])
    assert later.exit_code in (0, 1)  # today's was sent already: nothing to refuse
    monkeypatch.setenv("PAPERSIFT_SMTP_HOST", "")
    unset = runner.invoke(app, ["digest", "send"])
    assert unset.exit_code == 2 and "smtp_host" in unset.output


@pytest.mark.browser
def test_the_email_renders_in_chromium_without_remote_resources_or_scripts(store, setup,
                                                                          smtp) -> None:
    from pathlib import Path

    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    settings, _, _ = setup
    send_digests(store, settings)
    html = smtp.inbox.messages[0].get_body(("html",)).get_content()
    artifacts = Path(__file__).resolve().parents[1] / "test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu"])
        page = chromium.new_page(viewport={"width": 700, "height": 1200})
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.set_content(html, wait_until="load")
        assert requested == []  # no image, font, style sheet or script is fetched
        assert page.evaluate("document.scripts.length") == 0
        assert page.locator("h2 a").count() == 5
        assert page.locator("a", has_text="More like this").count() == 5
        page.screenshot(path=str(artifacts / "digest-email.png"))
        chromium.close()


@pytest.mark.parametrize("tls", ["starttls", "tls"])
def test_digests_go_over_starttls_and_tls(store, settings, tmp_path, monkeypatch, tls) -> None:
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this server only
    make_world(store)
    accounts.add_reader(store, "ada", "correct horse battery", "ada@example.org")
    with SmtpServer(tls, context) as smtp:
        report = send_digests(store, settings.replace(**smtp.settings()))
        assert report.counts["sent"] == 1 and len(smtp.inbox.messages) == 1
