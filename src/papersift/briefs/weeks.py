"""ISO weeks ("2026-W07") of announcement days, their bounds, and a topic's growth against the
four weeks before."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

from papersift.errors import UsageError

_RE_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
WEEKS_BEFORE = 4


def week_of(day: str) -> str:
    """'2026-02-12' -> '2026-W07' (ISO week: Monday to Sunday, week 1 holds the first Thursday)."""
    year, week, _ = date.fromisoformat(day[:10]).isocalendar()
    return f"{year}-W{week:02d}"


def parse_week(week: str) -> tuple[date, date]:
    """The Monday and Sunday of an ISO week; UsageError for anything else."""
    match = _RE_WEEK.match(week.strip())
    if not match:
        raise UsageError(f"not an ISO week: {week!r} (write it like 2026-W07)")
    try:
        monday = date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        raise UsageError(f"no such week: {week!r}") from None
    return monday, monday + timedelta(days=6)


def weeks_before(week: str, count: int = WEEKS_BEFORE) -> list[str]:
    """The `count` weeks before `week`, oldest first."""
    monday, _ = parse_week(week)
    return [week_of((monday - timedelta(weeks=n)).isoformat()) for n in range(count, 0, -1)]


def growth(days: Iterable[str], week: str, count: int = WEEKS_BEFORE) -> dict[str, Any]:
    """Papers of the week against the mean of the `count` weeks before: {papers, before (per
    week, oldest first), mean_before, growth (ratio; None when the weeks before had none),
    change (papers more or fewer than the mean)}."""
    per_week = Counter(week_of(day) for day in days)
    before = [per_week.get(w, 0) for w in weeks_before(week, count)]
    mean = sum(before) / len(before) if before else 0.0
    papers = per_week.get(week, 0)
    return {"papers": papers, "before": before, "weeks_before": weeks_before(week, count),
            "mean_before": round(mean, 2),
            "growth": round(papers / mean, 3) if mean else None,
            "change": round(papers - mean, 2)}
