"""Trends: papers per week per topic and the fastest-growing topics of the newest week."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import numpy as np
import pytest

from papersift.topics import BuildTopics, trending, weekly_series
from tests.test_topics_build import FIELDS, PARAMS, abstract_for, add_papers, field_centers, noisy

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_weekly_counts_and_trending(store, settings) -> None:
    rng = np.random.default_rng(5)
    centers = field_centers()
    end = date(2026, 6, 30)
    rows, n = [], 0
    # Steady fields: 5 papers a week for five weeks; "speech" jumps from 2 to 14 this week.
    for week in range(5):
        for field in FIELDS:
            count = 5 if field != "speech" else (14 if week == 4 else 2)
            for i in range(count):
                day = end - timedelta(days=7 * (4 - week) + i % 7)
                title, abstract = abstract_for(field, rng)
                rows.append((f"2606.{n:05d}", day.isoformat(), title, abstract,
                             noisy(centers[field], rng)))
                n += 1
    add_papers(store, settings, rows)
    BuildTopics(params=replace(PARAMS, papers_per_topic=24)).run(store, settings)
    ranked = trending(store, weeks=4, limit=3)
    speech = store.topics.paper_topic(rows[-1][0])
    assert ranked[0]["id"] == speech["id"]
    assert ranked[0]["this_week"] == 14 and ranked[0]["weekly_mean_before"] == 2.0
    assert ranked[0]["growth"] == round(15 / 3, 3)
    assert all(t["growth"] <= ranked[0]["growth"] for t in ranked)
    assert ranked[0]["window"] == {"start": "2026-06-24", "end": "2026-06-30"}
    series = weekly_series(store, speech["id"])
    assert sum(w["papers"] for w in series) == speech["size"] == 22
    weeks = [date.fromisoformat(w["week"]) for w in series]
    assert all(w.weekday() == 0 for w in weeks)  # weeks start on Monday
    assert all((b - a).days == 7 for a, b in zip(weeks, weeks[1:], strict=False))
    # Nothing this week reaches min_papers: no trending topics.
    assert trending(store, as_of="2027-01-01") == []
