"""Bounds on what one client may cost the site: the time and size of its headers, and of its body."""

from __future__ import annotations

import asyncio
import html
import json
import os
from typing import Any

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# The request line and headers of a browser or a feed reader fit in a few KB.
MAX_HEADER_BYTES = 64 << 10
SETTINGS_ENV = "PAPERSIFT_WEB_SETTINGS"  # how `papersift serve --workers N` hands settings over
_HEADER_TIMEOUT: list[float] = []


def header_timeout() -> float:
    """web_header_timeout of this worker process (from the settings `serve` handed over)."""
    if not _HEADER_TIMEOUT:
        from papersift.settings import load_settings

        settings = load_settings()
        try:
            handed = json.loads(os.environ.get(SETTINGS_ENV) or "{}")
            settings = settings.replace(**{k: v for k, v in handed.items()
                                           if k == "web_header_timeout"})
        except (ValueError, TypeError, AttributeError):
            pass
        _HEADER_TIMEOUT.append(float(settings.web_header_timeout))
    return _HEADER_TIMEOUT[0]


class HeadersTooLarge(Exception):  # noqa: N818 (the parser turns it into a 400 and a close)
    """The request line and headers together are larger than MAX_HEADER_BYTES."""


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header timeout and a cap on header bytes.

    uvicorn bounds idle keep-alive connections, but not a client that sends its headers a
    byte at a time: 500 such connections were held open for as long as they liked. Here a
    request's headers must be complete within `web_header_timeout` seconds of its first byte
    (or of the connection opening), else the connection gets a 408 and is closed.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_bytes = 0
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_bytes = 0
        self._arm()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value))
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > MAX_HEADER_BYTES:
            # Raised inside the parser's callback: uvicorn answers 400 and closes.
            raise HeadersTooLarge(f"request headers over {MAX_HEADER_BYTES} bytes")

    def _arm(self) -> None:
        self._disarm()
        if header_timeout() > 0:
            self._header_timer = self.loop.call_later(header_timeout(), self._too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n"
                                 b"connection: close\r\n\r\n")
            self.transport.close()


class RequestLimits:
    """Every request's body: at most `max_bytes`, all of it within `timeout` seconds.

    A body is read here before the app sees it (only requests that declare one: the site's
    GET pages pass straight through), so no endpoint can be fed a 200 MB body or kept
    waiting on one.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float,
                 larger: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.larger = larger or {}  # paths that take more (a library export to import)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is None and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"], self.max_bytes)
        too_large = f"that is more than {_size(limit)}; send less"
        if length is not None and (not length.isdigit() or int(length) > limit):
            await _refuse(413, too_large, scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.timeout):
                messages = await self._read_body(receive, limit)
        except TimeoutError:
            await _refuse(408, f"the body did not arrive within {self.timeout:g} s", scope,
                          receive, send)
            return
        if messages is None:
            await _refuse(413, too_large, scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _read_body(self, receive: Receive, limit: int) -> list[Message] | None:
        """The body's messages, or None past `limit` bytes."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages  # the client went away: the app sees it as it would
            size += len(message.get("body", b""))
            if size > limit:
                return None
            if not message.get("more_body", False):
                return messages


def _size(limit: int) -> str:
    return f"{limit / 1e6:.1f} MB" if limit >= 1_000_000 else f"{limit / 1e3:.0f} KB"


async def _refuse(status: int, message: str, scope: Scope, receive: Receive,
                  send: Send) -> None:
    """JSON for a script, a page for a browser (which would show raw JSON)."""
    accept = dict(scope["headers"]).get(b"accept", b"")
    if b"text/html" in accept and b"application/json" not in accept:
        page = (f"<!doctype html><html lang=en><meta charset=utf-8><title>Not sent</title>"
                f"<h1>Not sent</h1><p>{html.escape(message[:1].upper() + message[1:])}.</p>"
                "<p>Go back and try again.</p></html>")
        response = Response(page, status_code=status, media_type="text/html; charset=utf-8",
                            headers={"connection": "close"})
    else:
        body: dict[str, Any] = {"error": message, "status": status}
        response = Response(json.dumps(body), status_code=status,
                            media_type="application/json", headers={"connection": "close"})
    await response(scope, receive, send)
