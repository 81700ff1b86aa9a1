"""Work of a request that would hold a web worker's GIL for long (decoding and reading a library import), done in a helper process.

A thread does not keep the event loop free: a thread reading 2 MB of BibTeX holds the GIL,
and the loop waits for it at every step of every other request (/healthz went from 2 ms to
p95 760 ms while four clients posted imports; issue 30's drill). One helper process per web
worker, started from a fork server (which imports nothing of papersift's, so a helper starts
in a fraction of a second) when the worker starts, does that work in turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

import numpy as np

from papersift.errors import PapersiftError

T = TypeVar("T")
_POOL: ProcessPoolExecutor | None = None
_LOCK = threading.Lock()


class OffloadFailed(PapersiftError):
    """The helper process died (killed, out of memory) before it answered."""


def _pool() -> ProcessPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ProcessPoolExecutor(max_workers=1,
                                        mp_context=multiprocessing.get_context("forkserver"))
        return _POOL


def _forget(pool: ProcessPoolExecutor) -> None:
    global _POOL
    with _LOCK:
        if _POOL is pool:
            _POOL = None
    pool.shutdown(wait=False, cancel_futures=True)


def warm(timeout: float = 120) -> None:
    """Start the helper and wait until it answers (when a worker starts, before it takes
    requests: a helper starting under load took seconds, which the first import waited)."""
    # If it fails, the first import starts it again (and says so if that fails too).
    with contextlib.suppress(Exception):
        _pool().submit(decode_form, b"").result(timeout=timeout)


async def run(work: Callable[..., T], *args: Any) -> T:
    """work(*args) in the helper process (work and args must pickle); its exceptions as raised
    there. OffloadFailed if the helper died; the next call starts a new one."""
    pool = _pool()
    try:
        return await asyncio.get_running_loop().run_in_executor(pool, work, *args)
    except BrokenProcessPool:
        _forget(pool)
        raise OffloadFailed("the server could not read that just now; try again") from None


def decode_form(body: bytes) -> dict[str, str]:
    """The url-encoded fields of a body (the last of a repeated name), as parse_qsl reads
    them with keep_blank_values."""
    fields = {}
    for pair in body.split(b"&"):
        if pair:
            name, _, value = pair.partition(b"=")
            fields[_unquote_plus(name)] = _unquote_plus(value)
    return fields


# Each byte's value as a hex digit, or -1.
_HEX = np.full(256, -1, dtype=np.int16)
for _digit in b"0123456789abcdefABCDEF":
    _HEX[_digit] = int(chr(_digit), 16)


def _unquote_plus(raw: bytes) -> str:
    """A form value decoded: '+' is a space, %XX a byte (an invalid escape stays as it is).
    urllib's unquote takes a Python step per escape: a pasted library of braces, every one
    %7B, took 2 s for 1.9 MB; here a long value is decoded by array operations."""
    raw = raw.replace(b"+", b" ")
    if b"%" not in raw:
        return raw.decode("utf-8", "replace")
    if len(raw) < 4096:
        return unquote_to_bytes(raw).decode("utf-8", "replace")
    data = np.frombuffer(raw, dtype=np.uint8)
    marks = np.flatnonzero(data[:-2] == ord("%"))
    high, low = _HEX[data[marks + 1]], _HEX[data[marks + 2]]
    valid = (high >= 0) & (low >= 0)  # valid escapes never overlap: '%' is no hex digit
    marks = marks[valid]
    out = data.copy()
    out[marks] = (high[valid] * 16 + low[valid]).astype(np.uint8)
    keep = np.ones(len(data), dtype=bool)
    keep[marks + 1] = False
    keep[marks + 2] = False
    return out[keep].tobytes().decode("utf-8", "replace")
