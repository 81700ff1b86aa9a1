"""A reader's delivery choices: the digest's schedule, and the private feed's revocable token."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

from papersift.delivery.digest import WEEKDAYS
from papersift.errors import UsageError
from papersift.readers.accounts import token_hash
from papersift.store import Store

SCHEDULES = ("daily", "weekly", "off")


def set_schedule(store: Store, reader_id: int, schedule: str, days: Sequence[str],
                 paused: bool) -> dict[str, Any]:
    """Daily, weekly on some days, or off; paused keeps the choice but sends nothing."""
    days = [d.strip().lower()[:3] for d in days if d.strip()]
    if schedule not in SCHEDULES:
        raise UsageError(f"a schedule is one of {', '.join(SCHEDULES)}, not {schedule!r}")
    unknown = [d for d in days if d not in WEEKDAYS]
    if unknown:
        raise UsageError(f"days are {', '.join(WEEKDAYS)}, not {', '.join(unknown)}")
    if schedule == "weekly" and not days:
        raise UsageError("a weekly digest needs at least one day")
    store.delivery.set_delivery_settings(reader_id, schedule, days or ["mon"], paused)
    return store.delivery.delivery_settings(reader_id)


def new_feed_token(store: Store, reader_id: int) -> str:
    """A new private feed token (shown once: only its hash is kept); the old one stops working."""
    token = secrets.token_urlsafe(24)
    store.delivery.set_feed_token(reader_id, token_hash(token))
    return token


def revoke_feed_token(store: Store, reader_id: int) -> None:
    store.delivery.set_feed_token(reader_id, None)


def reader_of_feed(store: Store, token: str | None) -> dict[str, Any] | None:
    if not token or len(token) > 200:
        return None
    return store.delivery.reader_of_feed_token(token_hash(token))
