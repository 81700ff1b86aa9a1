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
    # ... from the guesser's address: the owner elsewhere is not kept out.
    assert accounts.log_in(store, settings, "ada", "correct horse battery", "10.0.0.2").token
    store.readers.clear_login_failures(accounts.login_limits(settings, "ada", "")[0][0])
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


# --- what mutation testing found untested (issue 20, docs/testing.md)

def test_name_password_and_email_bounds_are_inclusive(store: Store) -> None:
    with pytest.raises(accounts.AccountError, match=r"^a name is 2 to 40 letters, digits, '\.', "
                       r"'_' or '-', starting with a letter or digit$"):
        accounts.check_name(None)  # type: ignore[arg-type]
    assert accounts.check_password("abcde" * (accounts.MIN_PASSWORD // 5))
    assert accounts.check_password("abcde" * (accounts.MAX_PASSWORD // 5) + "abcd")
    for weak in (" " * 10, "x" * 10, "abab abab ab", " abcd     "):  # fewer than 5 different
        with pytest.raises(accounts.AccountError, match="5 different characters"):
            accounts.check_password(weak)
    email = "a" * 64 + "@" + "b" * 185 + ".org"
    assert len(email) == 254 and accounts.check_email(email) == email
    with pytest.raises(accounts.AccountError):
        accounts.check_email("a" + email)


def test_sign_up_modes_say_why_and_keep_the_email(store: Store, settings: Settings) -> None:
    session = accounts.sign_up(store, settings, "eve", "correct horse battery", "eve@example.org")
    assert store.readers.find_reader("eve")["email"] == "eve@example.org"
    assert session.reader["name"] == "eve"
    with pytest.raises(UsageError, match=r"^signup must be one of open, invite, closed, not 'x'$"):
        accounts.sign_up(store, settings.replace(signup="x"), "f1", "correct horse battery")
    with pytest.raises(accounts.AccountError,
                       match=r"^sign-up is closed here: ask the admin for an account$"):
        accounts.sign_up(store, settings.replace(signup="closed"), "f2", "correct horse battery")
    invited = settings.replace(signup="invite")
    with pytest.raises(accounts.AccountError, match=r"^sign-up here is by invitation: enter "
                       r"the code you were given$"):
        accounts.sign_up(store, invited, "f3", "correct horse battery", invitation=None)
    with pytest.raises(accounts.AccountError,
                       match=r"^that invitation code is unknown, used or expired$"):
        accounts.sign_up(store, invited, "f4", "correct horse battery", invitation="nope")


def test_tokens_carry_their_entropy_and_sessions_their_expiry(store: Store,
                                                              settings: Settings) -> None:
    reader_id = accounts.add_reader(store, "gus", "correct horse battery")
    session = accounts.start_session(store, settings.replace(session_days=1), reader_id)
    assert len(session.token) == 43 and len(session.csrf_token) == 32  # 256 and 192 bits
    expires = datetime.strptime(session.expires_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert timedelta(hours=23) < expires - datetime.now(UTC) <= timedelta(days=1)
    assert len(accounts.invite(store)) == 16  # 96 bits
    assert len(accounts.secret_key(settings)) == 64  # 384 bits


def test_a_success_clears_the_names_failures_and_addresses_have_a_wider_limit(
        store: Store, settings: Settings) -> None:
    accounts.add_reader(store, "hal", "correct horse battery")
    attempts = settings.login_attempts
    for _ in range(attempts - 1):
        with pytest.raises(accounts.LoginRefused):
            accounts.log_in(store, settings, "hal", "wrong password!", address="10.0.0.1")
    accounts.log_in(store, settings, "hal", "correct horse battery", address="10.0.0.2")
    for _ in range(attempts - 1):
        with pytest.raises(accounts.LoginRefused):
            accounts.log_in(store, settings, "hal", "wrong password!", address="10.0.0.3")
    assert accounts.log_in(store, settings, "hal", "correct horse battery", address="10.0.0.4")
    # One address guessing many names: refused after 4 x login_attempts failures.
    for n in range(4 * attempts):
        with pytest.raises(accounts.LoginRefused, match="wrong name or password"):
            accounts.log_in(store, settings, f"name{n}", "wrong password!", address="10.9.9.9")
    with pytest.raises(accounts.LoginRefused,
                       match=r"^too many failed logins; wait 15 minutes and try again, or ask "
                             r"for a sign-in link by email$"):
        accounts.log_in(store, settings, "hal", "correct horse battery", address="10.9.9.9")


def test_passwords_past_the_limit_never_verify_and_old_hashes_are_upgraded(
        store: Store, settings: Settings) -> None:
    from argon2 import PasswordHasher

    longest = ("pass" * accounts.MAX_PASSWORD)[:accounts.MAX_PASSWORD - 6] + " word!"
    reader_id = accounts.add_reader(store, "ivy", longest)
    assert accounts.log_in(store, settings, "ivy", longest)
    with pytest.raises(accounts.LoginRefused):
        accounts.log_in(store, settings, "ivy", longest + "!")
    with pytest.raises(accounts.LoginRefused):
        accounts.log_in(store, settings, "ivy", None)  # type: ignore[arg-type]
    weak = PasswordHasher(time_cost=1, memory_cost=8192).hash("correct horse battery")
    store.readers.set_password_hash(reader_id, weak)
    accounts.log_in(store, settings, "ivy", "correct horse battery")
    upgraded = store.readers.find_reader("ivy")["password_hash"]
    assert upgraded != weak and PasswordHasher().verify(upgraded, "correct horse battery")
    assert not PasswordHasher().check_needs_rehash(upgraded)


def test_csrf_and_reader_lookup(store: Store) -> None:
    assert accounts.csrf_matches("abc", "abc") and not accounts.csrf_matches("abc", "abd")
    assert not accounts.csrf_matches(None, "None") and not accounts.csrf_matches("", "")
    accounts.add_reader(store, "jan", "correct horse battery")
    assert accounts.reader_named(store, " JAN ")["name"] == "jan"
    with pytest.raises(accounts.PapersiftError, match=r"^no reader named 'kim'$"):
        accounts.reader_named(store, "kim")
