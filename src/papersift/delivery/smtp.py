"""Sending mail over SMTP (plain, STARTTLS or TLS), with a bounded conversation and one error type."""

from __future__ import annotations

import contextlib
import smtplib
import ssl
from email.message import EmailMessage

from papersift.errors import PapersiftError, UsageError
from papersift.settings import Settings

TLS_MODES = ("none", "starttls", "tls")


class SendError(PapersiftError):
    """The SMTP server refused a message or could not be reached; nothing counts as sent."""


class Mailer:
    """One SMTP connection for a run of messages (opened on first use, reopened after a
    failure), so a thousand digests do not cost a thousand handshakes."""

    def __init__(self, settings: Settings) -> None:
        if not settings.smtp_host:
            raise UsageError("no SMTP server is set: set smtp_host (PAPERSIFT_SMTP_HOST)")
        if settings.smtp_tls not in TLS_MODES:
            raise UsageError(f"smtp_tls is one of {', '.join(TLS_MODES)}, not "
                             f"{settings.smtp_tls!r}")
        self.settings = settings
        self.connection: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        s = self.settings
        timeout = float(s.smtp_timeout)
        if s.smtp_tls == "tls":
            connection: smtplib.SMTP = smtplib.SMTP_SSL(
                s.smtp_host, int(s.smtp_port), timeout=timeout,
                context=ssl.create_default_context())
        else:
            connection = smtplib.SMTP(s.smtp_host, int(s.smtp_port), timeout=timeout)
            if s.smtp_tls == "starttls":
                connection.starttls(context=ssl.create_default_context())
        if s.smtp_user:
            connection.login(s.smtp_user, s.smtp_password)
        return connection

    def send(self, message: EmailMessage) -> None:
        """Send or raise SendError: once this returns, the server took the message."""
        try:
            if self.connection is None:
                self.connection = self._connect()
            refused = self.connection.send_message(message)
        except smtplib.SMTPRecipientsRefused as exc:
            self.close()
            raise SendError(f"the server refused {', '.join(exc.recipients)}") from None
        except (TimeoutError, smtplib.SMTPException, OSError, ssl.SSLError) as exc:
            self.close()
            raise SendError(f"{self.settings.smtp_host}:{self.settings.smtp_port}: "
                            f"{type(exc).__name__}: {exc}") from None
        if refused:
            raise SendError(f"the server refused {', '.join(refused)}")

    def close(self) -> None:
        if self.connection is not None:
            with contextlib.suppress(smtplib.SMTPException, OSError):
                self.connection.quit()
            self.connection = None
