"""The weekly digest's "this week in the topics you follow": each followed topic's brief of the
week (its count against the weeks before, its brief, its first picks), linked to the week's page."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from papersift.briefs.weeks import week_of
from papersift.settings import Settings
from papersift.store import Store
from papersift.web import urls
from papersift.web.urls import absolute

PICKS = 3


def _growth(growth: dict[str, Any]) -> str:
    papers, mean = growth["papers"], growth["mean_before"]
    if not mean:
        return f"{papers} papers, none in the four weeks before"
    return f"{papers} papers, {papers / mean:.1f}x the mean of the four weeks before ({mean:g})"


def week_section(store: Store, settings: Settings, reader_id: int, day: date
                 ) -> list[dict[str, Any]]:
    """The briefs of the topics the reader follows, of the week of `day` (or, before any brief
    of it is built, of the week before), most papers first; [] for a daily digest."""
    if store.delivery.delivery_settings(reader_id)["schedule"] != "weekly":
        return []
    topics = [t for f in store.readers.follows_of(reader_id) if f["kind"] == "topic"
              and (t := store.topics.find_topic(f["value"])) is not None]
    if not topics:
        return []
    ids = sorted({int(t["id"]) for t in topics})
    links = store.links
    for week in (week_of(day.isoformat()), week_of((day - timedelta(days=7)).isoformat())):
        briefs = links.briefs_for_topics(ids, week)
        if briefs:
            break
    return [{
        "label": b.get("label") or b.get("slug"), "week": b["week"],
        "url": absolute(settings, urls.topic_week(str(b["slug"]), b["week"])),
        "growth": _growth(b["growth"]),
        "brief": " ".join(s["text"] for s in b["brief"]["sentences"]),
        "picks": [{"title": f["title"], "why": f["why"],
                   "url": absolute(settings, urls.paper(f["id"]))} for f in b["five"][:PICKS]],
    } for b in briefs]
