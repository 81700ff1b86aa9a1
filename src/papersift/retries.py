"""One retry policy for calls to outside HTTP services: what is worth another try, and how long to wait before it."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx

RETRY_AFTER_CAP = 60.0  # seconds: a Retry-After longer than this is cut to it (by default)
BACKOFF_CAP = 60.0      # seconds: no doubled wait is longer
SERVICE_BACKOFF = 0.5   # seconds: the first wait for an embeddings or topic-naming endpoint

T = TypeVar("T")


class BadReply(ValueError):
    """A 200 answer whose body cannot be used: tried again, like a 5xx."""


class Refused(Exception):
    """The endpoint refused the request (a 4xx other than 429): another try cannot help."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status, self.detail = status, detail


class GaveUp(Exception):
    """Every attempt failed in a way worth retrying; `last` says how the last one did."""

    def __init__(self, attempts: int, last: str) -> None:
        super().__init__(f"gave up after {attempts} attempts: {last}")
        self.attempts, self.last = attempts, last


def retry_after_seconds(value: str | None, cap: float = RETRY_AFTER_CAP) -> float | None:
    """Retry-After as seconds ('120' or an HTTP date), at most `cap`; None when absent or
    unusable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), cap)


def backoff_seconds(first: float, attempt: int) -> float:
    """The wait after failed attempt number `attempt` (from 0): `first`, doubling, capped."""
    return min(BACKOFF_CAP, max(0.0, first) * 2 ** attempt)


def error_detail(response: httpx.Response) -> str:
    """What an OpenAI-compatible error body says ({"error": {"message": ...}}), else its text."""
    try:
        return str(response.json()["error"]["message"])[:200]
    except (ValueError, KeyError, TypeError):
        return response.text[:200]


def post_json(client: httpx.Client, url: str, body: Mapping[str, Any],
              parse: Callable[[httpx.Response], T], *, attempts: int, backoff: float,
              headers: Mapping[str, str] | None = None) -> T:
    """POST `body` as JSON and `parse` the 200 answer, trying up to `attempts` times.

    429, 5xx, timeouts, dropped connections and answers `parse` rejects (BadReply) are tried
    again, after the server's Retry-After if it sent one, else after `backoff` seconds,
    doubling. Raises Refused at once for any other status, GaveUp when the attempts ran out."""
    attempts = max(1, attempts)
    last = "no attempt"
    for attempt in range(attempts):
        wait = backoff_seconds(backoff, attempt)
        try:
            response = client.post(url, json=body, headers=headers)
        except httpx.TimeoutException:
            last = "timeout"
        except httpx.RequestError as exc:  # refused or dropped connection, broken encoding
            last = f"transport error: {type(exc).__name__}"
        else:
            status = response.status_code
            if status == 200:
                try:
                    return parse(response)
                except BadReply as exc:
                    last = f"malformed response body ({exc})"
            elif status == 429 or status >= 500:
                last = f"HTTP {status}"
                after = retry_after_seconds(response.headers.get("Retry-After"))
                wait = wait if after is None else after
            else:
                raise Refused(status, error_detail(response))
        if attempt + 1 < attempts:
            time.sleep(wait)
    raise GaveUp(attempts, last)
