"""Trends: papers per topic per week, and the topics growing fastest this week against
their previous weeks."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from papersift.store import Store


def weekly_series(store: Store, topic_id: int) -> list[dict[str, Any]]:
    """Papers per week for one topic, oldest first, with empty weeks filled in as 0."""
    by_week = store.topics.weekly_topic_counts(topic_id=topic_id).get(topic_id)
    if not by_week:
        return []
    week = date.fromisoformat(min(by_week))
    last = date.fromisoformat(max(by_week))
    series = []
    while week <= last:
        series.append({"week": week.isoformat(), "papers": by_week.get(week.isoformat(), 0)})
        week += timedelta(days=7)
    return series


def trending(
    store: Store, weeks: int = 4, limit: int = 10, min_papers: int = 3, as_of: str | None = None
) -> list[dict[str, Any]]:
    """Topics ranked by growth: papers in the 7 days ending at as_of (default: the newest
    paper's date) against their weekly mean over the `weeks` weeks before.

    Rolling 7-day windows rather than calendar weeks, so a week that has just begun is not
    compared with full ones. growth = (this week + 1) / (weekly mean before + 1).
    """
    end_day = as_of or store.pages.latest_day()
    if not end_day:
        return []
    end = date.fromisoformat(end_day[:10]) + timedelta(days=1)
    this_start = end - timedelta(days=7)
    before_start = this_start - timedelta(days=7 * weeks)
    this_week = store.topics.topic_counts_between(this_start.isoformat(), end.isoformat())
    before = store.topics.topic_counts_between(before_start.isoformat(), this_start.isoformat())
    ranked = []
    for topic in store.topics.list_topics(include_other=False):
        n = this_week.get(topic["id"], 0)
        if n < min_papers:
            continue
        mean_before = before.get(topic["id"], 0) / weeks
        ranked.append(topic | {
            "this_week": n, "weekly_mean_before": round(mean_before, 2),
            "growth": round((n + 1) / (mean_before + 1), 3),
            "window": {"start": this_start.isoformat(), "end": (end - timedelta(days=1)).isoformat()},
        })
    ranked.sort(key=lambda t: (-t["growth"], -t["this_week"], t["slug"]))
    return ranked[:limit]
