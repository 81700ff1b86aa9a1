"""One-click links in a digest: signed, bound to one account, action and paper, expiring, and spent on first use.

A link carries {reader, the account's link key, action, paper, nonce}, signed with the site's
secret key and timestamped: a changed byte, another reader's id, an account made after the
link (the key is random per account, so a removed reader's links reach no later one) or an
old link is refused, and a link already used changes nothing and says when it was used.

Following a link is a POST. A GET (what a mail client's click, and a mail scanner's fetch,
send) shows what the link will do with a button, and a script on that page presses it at once:
a person's one click does it, a scanner that fetches links without running scripts changes
nothing. The set-password link asks for the password first.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from papersift.clock import utc_now
from papersift.readers import accounts, signals
from papersift.settings import Settings
from papersift.store import Store
from papersift.web import urls
from papersift.web.urls import absolute

ACTIONS = ("up", "down", "not_interested", "unsubscribe", "set_password")
# What the page of an unconfirmed link says it will do (its button does it).
CONFIRM = {"up": "like this paper", "down": "rate this paper down",
           "not_interested": "mark this paper not interesting",
           "unsubscribe": "stop your digests"}


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(accounts.secret_key(settings), salt="papersift-link")


def make_link(settings: Settings, reader: dict[str, Any], action: str,
              paper_id: str | None = None) -> str:
    """The absolute URL of a link that does `action` for this reader (and paper)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown link action {action!r}")
    token = _serializer(settings).dumps({"r": reader["id"], "k": reader["link_key"],
                                         "a": action, "p": paper_id,
                                         "n": secrets.token_urlsafe(9)})
    return absolute(settings, urls.link(token))


@dataclass
class LinkResult:
    """What following a link did: status 'done', 'ask' (for a password), 'confirm' (a GET: what its
    button will do), 'used', 'expired', 'forged' or 'gone'."""

    status: str
    message: str
    action: str | None = None
    paper_id: str | None = None
    reader: dict[str, Any] | None = None


def read_link(settings: Settings, token: str) -> tuple[dict[str, Any], datetime] | LinkResult:
    """The link's payload and when it was made, or the LinkResult that says why it cannot be
    used."""
    try:
        payload, made = _serializer(settings).loads(
            token, max_age=int(settings.link_days) * 86400, return_timestamp=True)
    except SignatureExpired:
        return LinkResult("expired", f"this link is more than {settings.link_days} days old; "
                                     "use the buttons on the site instead")
    except BadSignature:
        return LinkResult("forged", "this link is not one papersift made; nothing changed")
    if not isinstance(payload, dict) or payload.get("a") not in ACTIONS \
            or not isinstance(payload.get("r"), int):
        return LinkResult("forged", "this link is not one papersift made; nothing changed")
    return payload, made


def _made_for(payload: dict[str, Any], made: datetime, reader: dict[str, Any]) -> bool:
    """Whether the link was made for this very account: its key, or (a link made before
    links carried keys) made after the account was."""
    if "k" in payload:
        return hmac.compare_digest(str(payload["k"]), str(reader["link_key"]))
    return made.strftime("%Y-%m-%dT%H:%M:%SZ") >= str(reader["created_at"])


def follow_link(store: Store, settings: Settings, token: str, password: str | None = None,
                confirmed: bool = True) -> LinkResult:
    """Do what a link says, once. Unconfirmed (a GET), only say what it will do; a
    set-password link needs the new password."""
    read = read_link(settings, token)
    if isinstance(read, LinkResult):
        return read
    payload, made = read
    reader = store.readers.get_reader(payload["r"])
    if reader is None or not _made_for(payload, made, reader):
        return LinkResult("gone", "the account this link was for no longer exists; nothing "
                                  "changed")
    action, paper = payload["a"], payload.get("p")
    if action == "set_password" and password is None:
        return LinkResult("ask", "choose a password", action, None, reader)
    if action != "set_password" and not confirmed:
        return LinkResult("confirm", CONFIRM[action], action, paper, reader)
    if action == "set_password":
        accounts.check_password(password or "")  # before the link is spent
    used = store.delivery.use_link(payload["n"], reader["id"], utc_now())
    if used is not None:
        return LinkResult("used", f"this link was already used ({used[:16].replace('T', ' ')} "
                                  "UTC); nothing changed", action, paper, reader)
    return _apply(store, reader, action, paper, password)


def _apply(store: Store, reader: dict[str, Any], action: str, paper: str | None,
           password: str | None) -> LinkResult:
    if action == "unsubscribe":
        current = store.delivery.delivery_settings(reader["id"])
        store.delivery.set_delivery_settings(reader["id"], "off", current["days"], False)
        return LinkResult("done", "you will get no more digests (turn them on again on your "
                                  "profile page)", action, None, reader)
    if action == "set_password":
        accounts.change_password(store, reader["id"], password or "")
        return LinkResult("done", "your password is set; log in with it", action, None, reader)
    try:
        signals.react(store, reader["id"], paper or "", action)
    except signals.SignalError as exc:
        return LinkResult("gone", str(exc), action, paper, reader)
    said = {"up": "liked", "down": "rated down", "not_interested": "marked not interesting"}
    return LinkResult("done", f"{said[action]}; your next feed and digest take it into account",
                      action, paper, reader)
