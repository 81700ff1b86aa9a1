"""Reader accounts: sign-up, passwords (argon2id), sessions with CSRF tokens, login rate limiting, invitations."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from papersift.errors import PapersiftError, UsageError
from papersift.settings import Settings
from papersift.store import Store, StoreConflict

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,39}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
MIN_PASSWORD = 10
MIN_DISTINCT = 5  # "          " or "aaaaaaaaaa" is ten characters and no password
MAX_PASSWORD = 1024  # argon2 hashes anything, but a megabyte "password" is an attack
RATE_WINDOW = timedelta(minutes=15)
# Failed logins allowed in RATE_WINDOW, as multiples of the login_attempts setting: per name
# from one address (what one guesser meets), per address (one guesser, many names), and per
# name from every address (many guessers, one name). One address's guesses never keep the
# owner out from another; past the last limit the owner still gets in by an emailed link.
NAME_FROM_ADDRESS, ADDRESS, NAME = 1, 4, 10
INVITATION_DAYS = 14
SIGNUP_MODES = ("open", "invite", "closed")
_hasher = PasswordHasher()


class AccountError(UsageError):
    """A sign-up or login that cannot be done as asked; the message says why."""


class LoginRefused(PapersiftError):
    """Wrong name or password, or too many attempts (the message never says which name exists)."""


@dataclass(frozen=True)
class Session:
    """A logged-in reader: the token for the cookie (never stored) and the form token."""

    token: str
    csrf_token: str
    reader: dict[str, Any]
    expires_at: str


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def token_hash(token: str) -> str:
    """What the store keeps of a session token or invitation code."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not _NAME.match(name):
        raise AccountError("a name is 2 to 40 letters, digits, '.', '_' or '-', "
                           "starting with a letter or digit")
    return name


def check_password(password: str) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise AccountError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise AccountError(f"a password has at most {MAX_PASSWORD} characters")
    if len(set(password.strip())) < MIN_DISTINCT:
        raise AccountError(f"a password needs at least {MIN_DISTINCT} different characters "
                           "(not counting spaces at either end)")
    return password


def check_email(email: str | None) -> str | None:
    email = (email or "").strip()
    if not email:
        return None
    if len(email) > 254 or not _EMAIL.match(email):
        raise AccountError(f"{email!r} is not an email address")
    return email


def add_reader(store: Store, name: str, password: str, email: str | None = None) -> int:
    """Make an account (what the admin's `papersift readers add` and sign-up both call)."""
    name, email = check_name(name), check_email(email)
    password_hash = _hasher.hash(check_password(password))
    try:
        return store.readers.add_reader(name, email, password_hash)
    except StoreConflict:
        raise AccountError(f"the name {name!r} is taken; choose another") from None


def sign_up(store: Store, settings: Settings, name: str, password: str,
            email: str | None = None, invitation: str | None = None,
            address: str = "") -> Session:
    """An account made from the site: open, by invitation, or refused (the `signup` setting).
    An invitation code is checked before the name, so a wrong code tells nothing of which names
    exist; attempts from one address are limited."""
    mode = settings.signup
    if mode not in SIGNUP_MODES:
        raise UsageError(f"signup must be one of {', '.join(SIGNUP_MODES)}, not {mode!r}")
    if mode == "closed":
        raise AccountError("sign-up is closed here: ask the admin for an account")
    now = _now()
    limit = int(settings.signup_attempts)
    if not store.readers.claim_login_attempt([(f"signup:{address}", limit)],
                                             secrets.token_urlsafe(12),
                                             _iso(now - RATE_WINDOW), _iso(now)):
        raise AccountError("too many sign-ups from your address; wait 15 minutes and try again")
    code = (invitation or "").strip()
    if mode == "invite" and not code:
        raise AccountError("sign-up here is by invitation: enter the code you were given")
    if mode == "invite" and not store.readers.invitation_open(token_hash(code), _iso(now)):
        raise AccountError("that invitation code is unknown, used or expired")
    reader_id = add_reader(store, name, password, email)
    if mode == "invite" and not store.readers.use_invitation(token_hash(code), reader_id,
                                                             _iso(now)):
        store.readers.remove_reader(reader_id)  # another sign-up spent the code meanwhile
        raise AccountError("that invitation code is unknown, used or expired")
    return start_session(store, settings, reader_id)


def start_session(store: Store, settings: Settings, reader_id: int) -> Session:
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    expires = _iso(_now() + timedelta(days=max(1, int(settings.session_days))))
    store.readers.add_session(reader_id, token_hash(token), csrf, expires)
    return Session(token, csrf, store.readers.get_reader(reader_id) or {}, expires)


def login_limits(settings: Settings, name: str, address: str) -> list[tuple[str, int]]:
    """(key, failures allowed in RATE_WINDOW) that a login of this name from this address meets."""
    name_key, attempts = (name or "").strip().lower(), int(settings.login_attempts)
    return [(f"name:{name_key}|ip:{address}", NAME_FROM_ADDRESS * attempts),
            (f"ip:{address}", ADDRESS * attempts), (f"name:{name_key}", NAME * attempts)]


def log_in(store: Store, settings: Settings, name: str, password: str,
           address: str = "") -> Session:
    """A session for a reader whose password matches; LoginRefused (the same message whatever
    was wrong) otherwise, and once a name or an address has failed too often recently.

    The attempt is counted before the password is checked, in one step with the check of
    the limits (concurrent tries cannot all pass), and a right password takes its count back.
    An unknown name costs the same hash as a known one, so the time tells nothing."""
    now = _now()
    limits = login_limits(settings, name, address)
    attempt = secrets.token_urlsafe(12)
    if not store.readers.claim_login_attempt(limits, attempt, _iso(now - RATE_WINDOW),
                                             _iso(now)):
        raise LoginRefused("too many failed logins; wait 15 minutes and try again, or ask "
                           "for a sign-in link by email")
    reader = store.readers.find_reader((name or "").strip())
    matches = _verify(reader["password_hash"] if reader else _unknown_hash(), password)
    if reader is None or not matches:
        raise LoginRefused("wrong name or password")
    store.readers.forgive_login_attempt(attempt)
    store.readers.clear_login_failures(limits[0][0])
    if _hasher.check_needs_rehash(reader["password_hash"]):
        store.readers.set_password_hash(reader["id"], _hasher.hash(password))
    return start_session(store, settings, reader["id"])


_UNKNOWN_HASH: list[str] = []


def _unknown_hash() -> str:
    """A hash with the hasher's parameters that no password matches: what a login of an
    unknown name is checked against."""
    if not _UNKNOWN_HASH:
        _UNKNOWN_HASH.append(_hasher.hash(secrets.token_urlsafe(32)))
    return _UNKNOWN_HASH[0]


def _verify(password_hash: str, password: str) -> bool:
    if not isinstance(password, str) or len(password) > MAX_PASSWORD:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def session_for(store: Store, token: str | None) -> dict[str, Any] | None:
    """{reader, csrf_token, expires_at} for a live session token; None otherwise."""
    if not token:
        return None
    return store.readers.session_of(token_hash(token), _iso(_now()))


def log_out(store: Store, token: str | None) -> None:
    if token:
        store.readers.end_session(token_hash(token))


def csrf_matches(expected: str | None, given: str | None) -> bool:
    return bool(expected and given) and hmac.compare_digest(str(expected), str(given))


def change_password(store: Store, reader_id: int, password: str) -> None:
    """A new password; every session of the reader ends."""
    store.readers.set_password_hash(reader_id, _hasher.hash(check_password(password)))
    store.readers.end_sessions(reader_id)


def invite(store: Store) -> str:
    """A new invitation code (shown once; only its hash is kept)."""
    code = secrets.token_urlsafe(12)
    store.readers.add_invitation(token_hash(code), _iso(_now() + timedelta(days=INVITATION_DAYS)))
    return code


def reader_named(store: Store, name: str) -> dict[str, Any]:
    """The reader of this name; PapersiftError saying so if there is none."""
    reader = store.readers.find_reader((name or "").strip())
    if reader is None:
        raise PapersiftError(f"no reader named {name!r}")
    return reader


def secret_key(settings: Settings) -> str:
    """The configured secret key, else one made once and kept in the data dir."""
    if settings.secret_key:
        return str(settings.secret_key)
    path = settings.paths.secret_key
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        key = secrets.token_urlsafe(48)
        try:  # exclusive create: two workers starting at once agree on one key
            with path.open("x") as handle:
                handle.write(key)
            path.chmod(0o600)
        except FileExistsError:
            return path.read_text().strip()
        return key
