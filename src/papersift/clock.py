"""The one way papersift writes the current time: an ISO-8601 UTC timestamp to the second."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """'2026-11-30T22:31:05Z'."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
