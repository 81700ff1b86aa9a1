"""A polite HTTP fetcher for network sources: per-host delay, retries with backoff, fast offline failure."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from papersift import __version__
from papersift.records import SourceError
from papersift.settings import Settings

T = TypeVar("T")

USER_AGENT = f"papersift/{__version__} (research-paper news; +https://github.com/papersift)"
OFFLINE_HINT = (
    "no network? To ingest the local snapshot instead run: "
    "papersift ingest file:../shared/data/arxiv-2025-2026.jsonl.gz"
)
_BACKOFF_CAP = 60.0  # seconds: no single backoff wait is longer
_RETRY_AFTER_CAP = 300.0  # seconds: one answer must not stall a run for hours
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 520, 522, 524})

# When each host was last asked, shared by every fetcher of the process, so two sources
# talking to the same host (arXiv API then RSS in one run) still keep the delay.
_last_request: dict[str, float] = {}
_last_request_lock = threading.Lock()


class BadResponse(ValueError):
    """A response body that is cut off or cannot be parsed: worth asking again."""


class Fetcher:
    """GET with a per-host delay and retries; one per source run.

    `get(url, params, parse)` returns `parse(response)` for a 2xx response. `parse` raises
    BadResponse for a body worth fetching again (truncated, unparseable, arXiv's spurious
    empty page) and SourceError for a permanent problem. Non-retryable 4xx responses become a
    SourceError whose detail comes from `error_detail(response)` when given.
    """

    def __init__(self, settings: Settings, client: httpx.Client | None = None) -> None:
        self.delay = max(0.0, float(settings.request_delay))
        self.retries = max(0, int(settings.http_retries))
        self.backoff = max(0.0, float(settings.http_backoff))
        self._own_client = client is None
        self.client = client or httpx.Client(
            timeout=settings.http_timeout, headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
        )

    def close(self) -> None:
        if self._own_client:
            self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(
        self,
        url: str,
        params: Mapping[str, Any] | None = None,
        parse: Callable[[httpx.Response], T] = lambda r: r,  # type: ignore[assignment,return-value]
        error_detail: Callable[[httpx.Response], str | None] | None = None,
    ) -> T:
        shown = _show(url, params)
        last = "no response"
        connect_failures = 0
        attempt = 0
        while True:
            wait: float | None = None
            self._keep_delay(url)
            try:
                response = self.client.get(url, params=params)
            except httpx.UnsupportedProtocol as exc:
                raise SourceError(f"bad URL {shown}: {exc}") from None
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # DNS failure or refused connection: the network or the host is down, and a
                # long retry loop would only make the user wait. One quick second try.
                connect_failures += 1
                if connect_failures > 1:
                    raise SourceError(
                        f"cannot reach {_origin(url)} ({_reason(exc)}); {OFFLINE_HINT}") from None
                time.sleep(min(self.backoff, 0.5))
                continue
            except httpx.TimeoutException:
                last = "timed out"
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.DecodingError) as exc:
                last = f"body cut off ({_reason(exc)})"
            else:
                status = response.status_code
                if status in _RETRYABLE_STATUS:
                    last = f"HTTP {status}"
                    wait = retry_after_seconds(response.headers.get("Retry-After"))
                elif status >= 400:
                    detail = (error_detail(response) if error_detail else None) or _snippet(response)
                    raise SourceError(f"{shown}: HTTP {status}: {detail}")
                else:
                    try:
                        return parse(response)
                    except BadResponse as exc:
                        last = f"HTTP {status} but {exc}"
            if attempt >= self.retries:
                raise SourceError(
                    f"{shown}: gave up after {attempt + 1} attempts; last: {last}")
            if wait is None:
                step = min(_BACKOFF_CAP, self.backoff * 2 ** attempt)
                wait = step / 2 + random.uniform(0, step / 2)  # jitter spreads out retries
            attempt += 1
            time.sleep(wait)

    def _keep_delay(self, url: str) -> None:
        if not self.delay:
            return
        host = urlsplit(url).netloc
        with _last_request_lock:
            now = time.monotonic()
            due = _last_request.get(host, 0.0) + self.delay
            # Reserve the slot before sleeping so concurrent fetchers queue up behind it.
            _last_request[host] = max(now, due)
        if due > now:
            time.sleep(due - now)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds ('120' or an HTTP date), capped; None when absent or unusable."""
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
    return min(max(seconds, 0.0), _RETRY_AFTER_CAP)


def _show(url: str, params: Mapping[str, Any] | None) -> str:
    return str(httpx.URL(url, params=params)) if params else url


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


def _snippet(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text[:200] or response.reason_phrase
