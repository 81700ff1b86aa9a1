"""Which core a thread runs on, and work run off a given core: a search's helper kept off the model's core."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def _sched_getcpu() -> Callable[[], int] | None:
    """glibc's (and musl's) sched_getcpu, or None where there is none or threads cannot be
    moved between cores (os.sched_setaffinity is Linux's)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        found = ctypes.CDLL(None).sched_getcpu
    except (AttributeError, OSError):
        return None
    found.restype, found.argtypes = ctypes.c_int, []
    return found


_GETCPU = _sched_getcpu()


def current_core() -> int | None:
    """The core this thread runs on at this instant (a hint: it may move), or None if unknown."""
    if _GETCPU is None:
        return None
    core = _GETCPU()
    return core if core >= 0 else None


def off_core(core: int | None, work: Callable[..., T], *args: object) -> T:
    """work(*args) on this thread, kept off `core` meanwhile (when another core is allowed
    and the system lets threads choose), then free to run anywhere it could before."""
    if core is None:
        return work(*args)
    try:
        allowed = os.sched_getaffinity(0)
        moved = bool(allowed - {core})
        if moved:
            os.sched_setaffinity(0, allowed - {core})
    except OSError:  # a sandbox that refuses (EPERM, EINVAL): run wherever the thread is
        moved = False
    if not moved:
        return work(*args)
    try:
        return work(*args)
    finally:
        os.sched_setaffinity(0, allowed)
