"""Links by email to choose a password: for an account the admin made, and for a reader who forgot theirs or whose name others' guesses locked."""

from __future__ import annotations

import logging
import secrets
import threading
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

from papersift.delivery.links import make_link
from papersift.delivery.smtp import Mailer
from papersift.errors import PapersiftError, UsageError
from papersift.settings import Settings
from papersift.store import Store

log = logging.getLogger(__name__)
LINKS_PER_NAME, LINKS_PER_ADDRESS = 3, 10  # sign-in links asked for in LINK_WINDOW
LINK_WINDOW = timedelta(hours=1)
SENT_OR_NOT = ("if that name has an account with an email address, a link to choose a new "
               "password is on its way (it works once, for {days} days)")


def send_password_link(settings: Settings, reader: dict[str, Any]) -> str:
    """Email the reader a link to choose their password; returns the address it went to."""
    if not reader.get("email"):
        raise UsageError(f"{reader['name']} has no email address to send a link to")
    _send(settings, reader, f"An account named {reader['name']} was made for you on "
                            f"{settings.site_title}.")
    return str(reader["email"])


def send_sign_in_link(store: Store, settings: Settings, name: str, address: str) -> str:
    """Email the reader of this name a link to choose a new password: the way in for an owner
    whose name is locked by others' failed logins. The answer is the same whether or not the
    name exists; asking is limited per name and per address."""
    if not settings.smtp_host:
        raise UsageError("this site sends no email: ask its admin to set a new password")
    now = datetime.now(UTC)
    iso = "%Y-%m-%dT%H:%M:%SZ"
    limits = [(f"link:name:{(name or '').strip().lower()}", LINKS_PER_NAME),
              (f"link:ip:{address}", LINKS_PER_ADDRESS)]
    if not store.readers.claim_login_attempt(limits, secrets.token_urlsafe(12),
                                             (now - LINK_WINDOW).strftime(iso), now.strftime(iso)):
        raise UsageError("too many links asked for; wait an hour and try again")
    reader = store.readers.find_reader((name or "").strip())
    if reader is not None and reader.get("email"):
        why = (f"Someone (we hope you) asked for a link to sign in to {settings.site_title} as "
               f"{reader['name']}. If it was not you, ignore this message: nothing changes "
               "until the link is used.")
        # Sent beside the answer, so its time does not tell which names have an account.
        threading.Thread(target=_send_logged, args=(settings, reader, why), daemon=True).start()
    return SENT_OR_NOT.format(days=settings.link_days)


def _send_logged(settings: Settings, reader: dict[str, Any], why: str) -> None:
    try:
        _send(settings, reader, why)
    except PapersiftError as exc:
        log.warning("the sign-in link to %s was not sent: %s", reader["name"], exc)


def _send(settings: Settings, reader: dict[str, Any], why: str) -> None:
    link = make_link(settings, reader, "set_password")
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = reader["email"]
    message["Subject"] = f"Your {settings.site_title} account"
    message.set_content(
        f"{why}\n\nChoose your password here (the link works once, for {settings.link_days} "
        f"days):\n{link}\n")
    mailer = Mailer(settings)
    try:
        mailer.send(message)
    finally:
        mailer.close()
