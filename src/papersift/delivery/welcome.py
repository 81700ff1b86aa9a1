"""An account made by the admin for a reader who sets their own password: a signed link by email."""

from __future__ import annotations

from email.message import EmailMessage
from typing import Any

from papersift.delivery.links import make_link
from papersift.delivery.smtp import Mailer
from papersift.errors import UsageError
from papersift.settings import Settings


def send_password_link(settings: Settings, reader: dict[str, Any]) -> str:
    """Email the reader a link to choose their password; returns the address it went to."""
    if not reader.get("email"):
        raise UsageError(f"{reader['name']} has no email address to send a link to")
    link = make_link(settings, reader["id"], "set_password")
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = reader["email"]
    message["Subject"] = f"Your {settings.site_title} account"
    message.set_content(
        f"An account named {reader['name']} was made for you on {settings.site_title}.\n\n"
        f"Choose your password here (the link works once, for {settings.link_days} days):\n"
        f"{link}\n")
    mailer = Mailer(settings)
    try:
        mailer.send(message)
    finally:
        mailer.close()
    return str(reader["email"])
