"""Page data of threads and weekly briefs: one dict per page, the template's context and the JSON twin (the Atom twin lists its `papers`)."""

from __future__ import annotations

import re
from typing import Any

from papersift.web import urls
from papersift.web.text import readable
from papersift.web.views import NotFound, Site, item

_WEEK = re.compile(r"^\d{4}-W\d{2}$")
FEED_BRIEFS = 20


def _items(site: Site, ids: list[str]) -> dict[str, dict[str, Any]]:
    rows = site.store.pages.listing_by_ids(ids)
    return {pid: item(rows[pid]) for pid in ids if pid in rows}


def thread(site: Site, thread_id: str) -> dict[str, Any]:
    """A thread's timeline: its origin, the papers that follow it up and the papers close to
    them, day by day (the feed: newest first)."""
    found = site.store.links.get_thread(thread_id)
    if found is None:
        raise NotFound(f"no thread {thread_id!r}")
    members = found["members"]
    cards = _items(site, [m["paper_id"] for m in members])
    days: list[dict[str, Any]] = []
    for member in members:
        card = cards.get(member["paper_id"])
        if card is None:
            continue
        if not days or days[-1]["day"] != member["day"]:
            days.append({"day": member["day"], "entries": []})
        days[-1]["entries"].append({"role": member["role"], "score": round(member["score"], 3),
                                    "paper": card})
    origin = cards.get(found["origin_id"])
    path = urls.thread(thread_id)
    roles = [m["role"] for m in members]
    return {
        "page": "thread", "title": f"{found['name']}: the thread", "path": path,
        "feed": urls.feed(path),
        "thread": {"id": found["id"], "name": found["name"], "follow": f"thread:{found['id']}",
                   "origin": origin, "day": found["day"], "last_day": found["last_day"],
                   "size": found["size"], "followups": roles.count("followup"),
                   "close": roles.count("close")},
        "timeline": days,
        "papers": [e["paper"] for d in reversed(days) for e in reversed(d["entries"])],
    }


def _topic(site: Site, slug: str) -> dict[str, Any]:
    found = site.store.topics.find_topic(slug)
    if found is None or found.get("redirected_from"):
        raise NotFound(f"no topic {slug!r}")
    return found


def _growth_line(growth: dict[str, Any]) -> str:
    papers, mean = growth["papers"], growth["mean_before"]
    noun = "paper" if papers == 1 else "papers"
    if not mean:
        return f"{papers} {noun} this week; none in the four weeks before"
    change = (papers - mean) / mean
    trend = "about as many as" if abs(change) < 0.05 else \
        f"{abs(change):.0%} {'more' if change > 0 else 'fewer'} than"
    return f"{papers} {noun} this week, {trend} the mean of the four weeks before ({mean:g})"


def _cited_sentence(text: str, cites: list[dict[str, Any]]) -> dict[str, Any]:
    """A brief sentence split into parts, where an id the sentence names is its citation link:
    "Zhang et al. (2601.01234) show ..." links the id in place instead of repeating it as
    "[2601.01234]" at the end; cites the text does not name are appended (`after`)."""
    by_id = {c["id"]: c for c in cites}
    named = [c for c in by_id if c in text]
    parts: list[dict[str, Any]] = []
    if named:
        pattern = "|".join(re.escape(c) for c in sorted(named, key=len, reverse=True))
        at = 0
        for match in re.finditer(pattern, text):
            parts += [{"text": text[at:match.start()]}, {"cite": by_id[match.group()]}]
            at = match.end()
        parts.append({"text": text[at:]})
    else:
        parts.append({"text": text})
    return {"text": text, "cites": cites, "parts": [p for p in parts if p.get("text") != ""],
            "after": [c for c in cites if c["id"] not in named]}


def _brief_page(site: Site, topic: dict[str, Any], brief: dict[str, Any],
                path: str) -> dict[str, Any]:
    slug, week = topic["slug"], brief["week"]
    five_ids = [f["id"] for f in brief["five"]]
    cards = _items(site, five_ids)
    weeks = site.store.links.brief_weeks(topic["id"])
    at = weeks.index(week) if week in weeks else -1
    older = weeks[at + 1] if 0 <= at < len(weeks) - 1 else None
    newer = weeks[at - 1] if at > 0 else None
    sentences = [_cited_sentence(s["text"], [
        {"id": c, "url": urls.paper(c), "title": cards[c]["title"] if c in cards else c}
        for c in s["cites"]]) for s in brief["brief"]["sentences"]]
    return {
        "page": "brief", "title": f"{topic['label']}: the week {week}", "path": path,
        "feed": urls.feed(urls.topic_weeks(slug)),
        "topic": {"slug": slug, "label": topic["label"], "url": urls.topic(slug),
                  "weeks_url": urls.topic_weeks(slug)},
        "follow": f"topic:{slug}",
        "week": week, "start": brief["start"], "end": brief["end"],
        "canonical": urls.topic_week(slug, week),
        "growth": dict(brief["growth"], line=_growth_line(brief["growth"])),
        "threads": [dict(t, url=urls.thread(t["id"]),
                         origin_url=urls.paper(t["origin"])) for t in brief["threads"]],
        "five": [dict(cards[f["id"]], why=f["why"], subtheme=f["subtheme"],
                      thread=f.get("thread"),
                      thread_url=urls.thread(f["thread"]) if f.get("thread") else None)
                 for f in brief["five"] if f["id"] in cards],
        "brief": {"sentences": sentences, "writer": brief["brief"]["writer"],
                  "note": "Written only from the abstracts of the papers each sentence cites; "
                          "every number in it is found in a cited abstract."},
        "paper_count": len(brief["paper_ids"]),
        "older": {"week": older, "url": urls.topic_week(slug, older)} if older else None,
        "newer": {"week": newer, "url": urls.topic_week(slug, newer)} if newer else None,
    }


def topic_week(site: Site, slug: str, week: str) -> dict[str, Any]:
    """A topic's brief of one ISO week."""
    if not _WEEK.match(week):
        raise NotFound(f"{week!r} is not a week like 2026-W07")
    topic = _topic(site, slug)
    brief = site.store.links.get_brief(topic["id"], week)
    if brief is None:
        raise NotFound(f"no brief of {slug!r} for the week {week}")
    return _brief_page(site, topic, brief, urls.topic_week(slug, week))


def topic_latest_week(site: Site, slug: str) -> dict[str, Any]:
    """The topic's latest brief, at its own address (the week's page is the canonical one)."""
    topic = _topic(site, slug)
    brief = site.store.links.get_brief(topic["id"])
    if brief is None:
        raise NotFound(f"no weekly brief of {slug!r} yet")
    return _brief_page(site, topic, brief, urls.topic_latest_week(slug))


def topic_weeks(site: Site, slug: str) -> dict[str, Any]:
    """Every weekly brief of a topic, newest first; the Atom twin has one entry a brief."""
    topic = _topic(site, slug)
    briefs = site.store.links.briefs_of_topic(topic["id"], 1000)
    path = urls.topic_weeks(slug)
    entries = [{
        "id": f"{slug}/{b['week']}", "url": urls.topic_week(slug, b["week"]),
        "title": f"{topic['label']}: the week {b['week']} ({len(b['paper_ids'])} papers)",
        "date": b["end"], "authors": [], "n_authors": 0, "topic": None,
        "blurb": readable(" ".join(s["text"] for s in b["brief"]["sentences"])),
    } for b in briefs]
    return {
        "page": "briefs", "title": f"{topic['label']}: weekly briefs", "path": path,
        "feed": urls.feed(path),
        "topic": {"slug": slug, "label": topic["label"], "url": urls.topic(slug)},
        "weeks": [{"week": b["week"], "url": urls.topic_week(slug, b["week"]),
                   "papers": len(b["paper_ids"]), "growth": b["growth"]["growth"],
                   "first": b["brief"]["sentences"][0]["text"] if b["brief"]["sentences"]
                   else ""} for b in briefs],
        "papers": entries[:FEED_BRIEFS],
    }
