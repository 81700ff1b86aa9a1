"""One-click links in a digest: signed, bound to one reader, action and paper, expiring, and spent on first use.

A link carries {reader, action, paper, nonce}, signed with the site's secret key and
timestamped: a changed byte, another reader's id or an old link is refused, and a link
already used changes nothing and says when it was used.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from papersift.clock import utc_now
from papersift.readers import accounts, signals
from papersift.settings import Settings
from papersift.store import Store

ACTIONS = ("up", "down", "not_interested", "unsubscribe", "set_password")
PATH = "/l/"


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(accounts.secret_key(settings), salt="papersift-link")


def make_link(settings: Settings, reader_id: int, action: str, paper_id: str | None = None
              ) -> str:
    """The absolute URL of a link that does `action` for this reader (and paper)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown link action {action!r}")
    token = _serializer(settings).dumps({"r": reader_id, "a": action, "p": paper_id,
                                         "n": secrets.token_urlsafe(9)})
    return settings.base_url.rstrip("/") + PATH + token


@dataclass
class LinkResult:
    """What following a link did: status 'done', 'used', 'expired', 'forged' or 'gone'."""

    status: str
    message: str
    action: str | None = None
    paper_id: str | None = None
    reader: dict[str, Any] | None = None


def read_link(settings: Settings, token: str) -> dict[str, Any] | LinkResult:
    """The link's payload, or the LinkResult that says why it cannot be used."""
    try:
        payload = _serializer(settings).loads(token, max_age=int(settings.link_days) * 86400)
    except SignatureExpired:
        return LinkResult("expired", f"this link is more than {settings.link_days} days old; "
                                     "use the buttons on the site instead")
    except BadSignature:
        return LinkResult("forged", "this link is not one papersift made; nothing changed")
    if not isinstance(payload, dict) or payload.get("a") not in ACTIONS:
        return LinkResult("forged", "this link is not one papersift made; nothing changed")
    return payload


def follow_link(store: Store, settings: Settings, token: str,
                password: str | None = None) -> LinkResult:
    """Do what a link says, once. A set-password link needs the new password."""
    payload = read_link(settings, token)
    if isinstance(payload, LinkResult):
        return payload
    reader = store.readers.get_reader(int(payload["r"]))
    if reader is None:
        return LinkResult("gone", "the account this link was for no longer exists")
    action, paper = payload["a"], payload.get("p")
    if action == "set_password" and password is None:
        return LinkResult("ask", "choose a password", action, None, reader)
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
