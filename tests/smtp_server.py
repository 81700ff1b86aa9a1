"""A real SMTP server on 127.0.0.1 (aiosmtpd) that can accept, refuse, drop the connection or stall."""

from __future__ import annotations

import asyncio
import ssl
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller

from tests.web_helpers import free_port


class Inbox:
    """The server's handler. mode: 'ok', 'refuse' (554 on DATA), 'refuse_rcpt' (550 on
    RCPT), 'drop' (closes the connection in the middle of DATA), 'slow' (waits `delay`)."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.mode = "ok"
        self.delay = 0.0

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,  # noqa: N802
                          rcpt_options: list[str]) -> str:
        if self.mode == "refuse_rcpt":
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        if self.mode == "refuse":
            return "554 5.7.1 message refused by policy"
        if self.mode == "drop":
            server.transport.close()
            return "421 closing"
        if self.mode == "slow":
            await asyncio.sleep(self.delay)
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 Message accepted for delivery"


class SmtpServer:
    """`with SmtpServer() as smtp:` serves on smtp.port; smtp.inbox holds what arrived."""

    def __init__(self, tls: str = "none", context: ssl.SSLContext | None = None) -> None:
        """tls: 'none', 'starttls' (required before mail) or 'tls' (from the first byte)."""
        self.inbox = Inbox()
        self.port = free_port()
        self.tls = tls
        options: dict[str, Any] = {}
        if tls == "starttls":
            options = {"tls_context": context, "require_starttls": True}
        elif tls == "tls":
            options = {"ssl_context": context}
        self.controller = Controller(self.inbox, hostname="127.0.0.1", port=self.port,
                                     **options)

    def settings(self, **more: Any) -> dict[str, Any]:
        return {"smtp_host": "127.0.0.1", "smtp_port": self.port, "smtp_tls": self.tls,
                "mail_from": "digest@papersift.test", "smtp_timeout": 5.0, **more}

    def __enter__(self) -> SmtpServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()
