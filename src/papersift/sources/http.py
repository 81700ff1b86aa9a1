"""A polite HTTP fetcher for network sources: per-host delay, retries with backoff, fast offline failure."""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from papersift import __version__
from papersift.records import SourceError
from papersift.retries import backoff_seconds, retry_after_seconds
from papersift.settings import Settings

T = TypeVar("T")

USER_AGENT = f"papersift/{__version__} (research-paper news; +https://github.com/papersift)"
OFFLINE_HINT = (
    "no network? To ingest the local snapshot instead run: "
    "papersift ingest file:../shared/data/arxiv-2025-2026.jsonl.gz"
)
_RETRY_AFTER_CAP = 300.0  # seconds: one answer must not stall a run for hours
_RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 520, 522, 524})

# When each host was last asked, shared by every fetcher of the process, so two sources
# talking to the same host (arXiv API then RSS in one run) still keep the delay.
_last_request: dict[str, float] = {}
_last_request_lock = threading.Lock()


class BadResponse(ValueError):
    """A response body that is cut off or cannot be parsed: worth asking again."""


class Fetcher:
    """GET with a per-host delay, retries, and bounds on what one answer may cost; one per
    source run.

    `get(url, params, parse)` returns `parse(response)` for a 2xx response. `parse` raises
    BadResponse for a body worth fetching again (truncated, unparseable, arXiv's spurious
    empty page) and SourceError for a permanent problem. Non-retryable 4xx responses become a
    SourceError whose detail comes from `error_detail(response)` when given.

    Bounds (settings): `http_timeout` for connecting, for each read and for the whole answer
    (a server that drips bytes is cut off); `http_max_mb` of body after decompression (a
    gzip bomb is stopped at the limit, not inflated); `http_max_redirects`. An answer that
    breaks a bound fails the source at once: asking again would cost as much.
    """

    def __init__(self, settings: Settings, client: httpx.Client | None = None) -> None:
        self.delay = max(0.0, float(settings.request_delay))
        self.retries = max(0, int(settings.http_retries))
        self.backoff = max(0.0, float(settings.http_backoff))
        self.timeout = max(0.1, float(settings.http_timeout))
        self.max_bytes = max(1, int(settings.http_max_mb)) << 20
        self.max_redirects = max(0, int(settings.http_max_redirects))
        self._own_client = client is None
        self.client = client or httpx.Client(
            timeout=self.timeout, headers={"User-Agent": USER_AGENT})

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
                response = self.fetch(url, params)
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
            except OverLimit as exc:
                raise SourceError(f"{shown}: {exc}") from None
            except httpx.TimeoutException:
                last = "timed out"
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.DecodingError) as exc:
                last = f"body cut off ({_reason(exc)})"
            else:
                status = response.status_code
                if status in _RETRYABLE_STATUS:
                    last = f"HTTP {status}"
                    wait = retry_after_seconds(response.headers.get("Retry-After"),
                                               cap=_RETRY_AFTER_CAP)
                elif status >= 400:
                    detail = (error_detail(response) if error_detail else None) or _snippet(response)
                    raise SourceError(f"{shown}: HTTP {status}: {detail}")
                else:
                    try:
                        return parse(response)
                    except BadResponse as exc:
                        last = f"HTTP {status} but {exc}"
                    except RecursionError:
                        raise SourceError(f"{shown}: the answer nests too deeply to read") from None
            if attempt >= self.retries:
                raise SourceError(
                    f"{shown}: gave up after {attempt + 1} attempts; last: {last}")
            if wait is None:
                step = backoff_seconds(self.backoff, attempt)
                wait = step / 2 + random.uniform(0, step / 2)  # jitter spreads out retries
            attempt += 1
            time.sleep(wait)

    def fetch(self, url: str, params: Mapping[str, Any] | None = None) -> httpx.Response:
        """One GET within the bounds, redirects followed by hand (counted, loops refused);
        the answer comes with its whole body, decompressed. OverLimit when a bound is broken."""
        with _Watchdog(self.timeout) as watchdog:
            request = self._request("GET", url, params, watchdog)
            seen = [str(request.url)]
            while True:
                try:
                    response = self.client.send(request, stream=True, follow_redirects=False)
                except httpx.TransportError:
                    watchdog.check(0)  # cut off while the headers dripped in: say so
                    raise
                try:
                    if response.next_request is None:
                        return _with_body(response, self._body(response, watchdog))
                    request = self._request("GET", str(response.next_request.url), None, watchdog)
                finally:
                    response.close()
                _check_redirect(seen, str(request.url), self.max_redirects)

    def _request(self, method: str, url: str, params: Mapping[str, Any] | None,
                 watchdog: _Watchdog) -> httpx.Request:
        # A fresh connection per request (Connection: close), so the watchdog knows the
        # socket to cut; arXiv asks for seconds between requests, so reuse would gain little.
        remaining = max(0.05, watchdog.remaining())
        return self.client.build_request(
            method, url, params=params, timeout=httpx.Timeout(min(self.timeout, remaining)),
            headers={"Accept-Encoding": "gzip, deflate", "Connection": "close"},
            extensions={"trace": watchdog.trace})

    def _body(self, response: httpx.Response, watchdog: _Watchdog) -> bytes:
        """The decompressed body, stopped at max_bytes or at the deadline."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and response.headers.get("content-encoding", "identity") in (
                "identity", "") and int(declared) > self.max_bytes:
            raise OverLimit(f"the answer is {int(declared):,} bytes, over the limit of "
                            f"{self.max_bytes >> 20} MB (http_max_mb)")
        decoder = _Decoder(response.headers.get("content-encoding", ""))
        parts: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_raw():
                piece = decoder.feed(chunk, self.max_bytes - size)
                size += len(piece)
                if size > self.max_bytes:
                    inflated = " once decompressed" if decoder.inflates else ""
                    raise OverLimit(f"the answer is over the limit of {self.max_bytes >> 20} MB"
                                    f"{inflated} (http_max_mb)")
                parts.append(piece)
                watchdog.check(size)
        except httpx.TransportError:
            watchdog.check(size)  # the watchdog cut it: say so, not "cut off"
            raise
        return b"".join(parts)

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


class OverLimit(Exception):  # noqa: N818 (reported as the source's failure, with its reason)
    """An answer broke a bound (size, total time, redirects): not worth asking again."""


class _Watchdog:
    """Cuts a request's connection when its deadline passes.

    The per-read timeout cannot stop a server that sends a byte now and then, and nothing in
    httpx bounds a whole request; shutting the socket down from a timer thread wakes the
    blocked read at once. The socket is learnt from httpx's trace of the connection.

    It fires a little after `seconds` (a tenth more, at least half a second): a server that
    sends nothing at all is the per-read timeout's to report, as a timeout worth retrying.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        grace = max(0.5, 0.1 * seconds)
        self.deadline = time.monotonic() + seconds + grace
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds + grace, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock)
                if self.fired:
                    _shut(sock)

    def check(self, received: int) -> None:
        if self.fired or self.remaining() < 0:
            got = f"{received:,} bytes of its body had come" if received else "its body had not begun"
            raise OverLimit(f"the answer took longer than {self.seconds:g} s in all "
                            f"(http_timeout); {got}")

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Decoder:
    """Content-Encoding gzip or deflate undone a bounded piece at a time (identity passes)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding.strip().lower()
        if self.encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise OverLimit(f"the answer is encoded as {self.encoding!r}, which was not asked for")
        self.inflates = self.encoding not in ("", "identity")
        # wbits 47: a gzip or a zlib header, whichever the stream starts with.
        self._inflate = zlib.decompressobj(47) if self.inflates else None

    def feed(self, data: bytes, room: int) -> bytes:
        """Up to room + 1 bytes of output (one more than room means: over the limit)."""
        if self._inflate is None:
            return data
        try:
            out = self._inflate.decompress(data, room + 1)
            # Several gzip members one after another: each gets a new decompressor.
            while self._inflate.eof and self._inflate.unused_data and len(out) <= room:
                rest = self._inflate.unused_data
                self._inflate = zlib.decompressobj(47)
                out += self._inflate.decompress(rest, room + 1 - len(out))
        except zlib.error as exc:
            raise httpx.DecodingError(f"the {self.encoding} body does not inflate ({exc})") from None
        return out


def _with_body(response: httpx.Response, body: bytes) -> httpx.Response:
    """The response as if read whole: decoded body, no Content-Encoding left to undo."""
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=body,
                          request=response.request)


def _check_redirect(seen: list[str], target: str, limit: int) -> None:
    if target in seen:
        chain = " -> ".join([*seen[seen.index(target):], target])
        raise OverLimit(f"redirect loop: {chain[:300]}")
    seen.append(target)
    if len(seen) - 1 > limit:
        raise OverLimit(f"more than {limit} redirects (http_max_redirects), the last to "
                        f"{target[:200]}")
