"""Reader accounts: names and passwords checked, argon2 hashes, sessions that end, rate-limited logins, invitations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from papersift.errors import UsageError
from papersift.readers import accounts
from papersift.settings import Settings
from papersift.store import Store

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_an_account_keeps_an_argon2_hash_never_the_password(store: Store) -> None:
    reader_id = accounts.add_reader(store, "ada", "correct horse battery", "ada@example.org")
    stored = store.readers.find_reader("ADA")  # names match in any case
    assert stored["id"] == reader_id and stored["email"] == "ada@example.org"
    assert stored["password_hash"].startswith("$argon2id$")
    assert "correct horse" not in stored["password_hash"]
    assert "password_hash" not in store.readers.list_readers()[0]


@pytest.mark.parametrize(("name", "password", "email", "message"), [
    ("a", "correct horse battery", None, "a name is 2 to 40"),
    ("<script>", "correct horse battery", None, "a name is 2 to 40"),
    ("bob", "short", None, "at least 10"),
    ("bob", "x" * 2000, None, "at most"),
    ("bob", "correct horse battery", "not-an-address", "not an email"),
])
def test_bad_sign_up_input_is_refused_with_a_reason(store: Store, name: str, password: str,
                                                    email: str | None, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        accounts.add_reader(store, name, password, email)
    assert store.readers.list_readers() == []


def test_a_taken_name_is_refused(store: Store) -> None:
    accounts.add_reader(store, "ada", "correct horse battery")
    with pytest.raises(accounts.AccountError, match="taken"):
        accounts.add_reader(store, "Ada", "another good password")


def test_log_in_and_out(store: Store, settings: Settings) -> None:
    accounts.add_reader(store, "ada", "correct horse battery")
    session = accounts.log_in(store, settings, "ada", "correct horse battery", "10.0.0.1")
    live = accounts.session_for(store, session.token)
    assert live["reader"]["name"] == "ada" and live["csrf_token"] == session.csrf_token
    assert accounts.csrf_matches(live["csrf_token"], session.csrf_token)
    assert not accounts.csrf_matches(live["csrf_token"], "forged")
    assert not accounts.csrf_matches(live["csrf_token"], None)
    accounts.log_out(store, session.token)
    assert accounts.session_for(store, session.token) is None
    assert accounts.session_for(store, "made-up") is None


def test_wrong_password_and_unknown_name_say_the_same(store: Store, settings: Settings) -> None:
    accounts.add_reader(store, "ada", "correct horse battery")
    messages = set()
    for name, password in (("ada", "wrong password!"), ("nobody", "correct horse battery")):
        with pytest.raises(accounts.LoginRefused) as refused:
            accounts.log_in(store, settings, name, password)
        messages.add(str(refused.value))
    assert messages == {"wrong name or password"}


def test_logins_are_rate_limited_by_name(store: Store, settings: Settings) -> None:
    accounts.add_reader(store, "ada", "correct horse battery")
    for _ in range(settings.login_attempts):
        with pytest.raises(accounts.LoginRefused):
            accounts.log_in(store, settings, "ada", "guess guess guess")
    # Now even the right password waits: a guesser learns nothing from an answer.
    with pytest.raises(accounts.LoginRefused, match="too many"):
        accounts.log_in(store, settings, "ada", "correct horse battery")
    store.readers.clear_login_failures("name:ada")
    assert accounts.log_in(store, settings, "ada", "correct horse battery").token


def test_an_expired_session_is_gone(store: Store, settings: Settings) -> None:
    reader_id = accounts.add_reader(store, "ada", "correct horse battery")
    past = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.readers.add_session(reader_id, accounts.token_hash("old"), "csrf", past)
    assert accounts.session_for(store, "old") is None


def test_a_new_password_ends_every_session(store: Store, settings: Settings) -> None:
    reader_id = accounts.add_reader(store, "ada", "correct horse battery")
    session = accounts.log_in(store, settings, "ada", "correct horse battery")
    accounts.change_password(store, reader_id, "a brand new passphrase")
    assert accounts.session_for(store, session.token) is None
    with pytest.raises(accounts.LoginRefused):
        accounts.log_in(store, settings, "ada", "correct horse battery")


def test_sign_up_modes(store: Store, settings: Settings) -> None:
    assert accounts.sign_up(store, settings, "open-one", "correct horse battery").token
    closed = settings.replace(signup="closed")
    with pytest.raises(accounts.AccountError, match="closed"):
        accounts.sign_up(store, closed, "shut-out", "correct horse battery")
    invite_only = settings.replace(signup="invite")
    with pytest.raises(accounts.AccountError, match="invitation"):
        accounts.sign_up(store, invite_only, "no-code", "correct horse battery")
    with pytest.raises(accounts.AccountError, match="unknown, used or expired"):
        accounts.sign_up(store, invite_only, "bad-code", "correct horse battery", invitation="x")
    code = accounts.invite(store)
    assert accounts.sign_up(store, invite_only, "invited", "correct horse battery",
                            invitation=code).reader["name"] == "invited"
    with pytest.raises(accounts.AccountError, match="unknown, used or expired"):
        accounts.sign_up(store, invite_only, "second-use", "correct horse battery",
                         invitation=code)
    # A refused sign-up leaves no account behind.
    assert [r["name"] for r in store.readers.list_readers()] == ["invited", "open-one"]


def test_the_secret_key_is_made_once_and_kept(settings: Settings) -> None:
    first = accounts.secret_key(settings)
    assert len(first) > 40 and accounts.secret_key(settings) == first
    assert settings.paths.secret_key.stat().st_mode & 0o077 == 0
    assert accounts.secret_key(settings.replace(secret_key="configured")) == "configured"
