"""Work of a request that would hold a web worker's GIL for long (decoding and reading a library import), done in a helper process.

A thread does not keep the event loop free: a thread reading 2 MB of BibTeX holds the GIL,
and the loop waits for it at every step of every other request (/healthz went from 2 ms to
p95 760 ms while four clients posted imports; issue 30's drill). One helper process per web
worker, started from a fork server (which imports nothing of papersift's, so a helper starts
in a fraction of a second) when the worker starts, does that work in turn.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar
from urllib.parse import parse_qsl

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


def warm() -> None:
    """Start the helper now (a worker's start), so the first import does not wait for it."""
    _pool().submit(decode_form, b"")


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
    """The url-encoded fields of a body (the last of a repeated name)."""
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
