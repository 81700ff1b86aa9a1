"""A signed-in reader's state laid over a page everyone shares (ratings, saves, follows and claims of what it shows) and the front page's "For you" strip."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from papersift.recommend.feed import build_feed
from papersift.web import reader_views
from papersift.web.views import Site

FOR_YOU = 5
FOR_YOU_SECONDS = 60.0
FOR_YOU_READERS = 1024  # strips kept (one per reader, the least recently used dropped)
_strips: OrderedDict[tuple[int, int], tuple[Any, float, list[dict[str, Any]]]] = OrderedDict()
_lock = threading.Lock()


def page_ids(data: dict[str, Any]) -> list[str]:
    """The papers a page shows as cards (and a paper page's own paper)."""
    ids = [p["id"] for key in ("papers", "similar", "results") for p in data.get(key) or []]
    if data.get("paper"):
        ids.append(data["paper"]["id"])
    return list(dict.fromkeys(ids))


def personalize(site: Site, data: dict[str, Any], session: dict[str, Any],
                here: str) -> dict[str, Any]:
    """The page's dict (shared: left as it is) with the reader's state of what it shows under
    `me`: the template draws the controls from it. `here` is where a form sends the browser
    back to (the page's path and query)."""
    store, reader = site.store, session["reader"]
    rid = reader["id"]
    strip = for_you(site, session) if data.get("page") == "front" and data.get("day") else None
    ids = page_ids(data) + [p["id"] for p in strip or []]
    reactions = {r["paper_id"]: r["reaction"] for r in store.readers.reactions_of(rid)}
    me = {
        "here": here,
        "reactions": {pid: reactions[pid] for pid in ids if pid in reactions},
        "saved": store.readers.saved_in(rid, ids),
        "follows": [f"{f['kind']}:{f['value']}" for f in store.readers.follows_of(rid)],
        "claims": [c["author_slug"] for c in store.readers.claims_of(rid)],
        "collections": [c["name"] for c in store.readers.collections_of(rid)],
    }
    out = dict(data, me=me, reader={"name": reader["name"]}, csrf=session["csrf_token"])
    if strip is not None:
        out["for_you"] = strip
    return out


def for_you(site: Site, session: dict[str, Any]) -> list[dict[str, Any]]:
    """The reader's top papers of /me, with their reasons (not marked shown: /me shows them).
    Kept a minute per reader until their signals change: the front page is where a reader
    comes back to most, and ranking the window is most of its cost."""
    reader = session["reader"]
    key = (id(site), reader["id"])
    version = (reader["signals_version"], site.store.pages.latest_day())
    now = time.monotonic()
    with _lock:
        hit = _strips.get(key)
        if hit and hit[0] == version and now - hit[1] < FOR_YOU_SECONDS:
            _strips.move_to_end(key)
            return hit[2]
    strip = _for_you(site, session)
    with _lock:
        _strips[key] = (version, now, strip)
        while len(_strips) > FOR_YOU_READERS:
            _strips.popitem(last=False)
    return strip


def _for_you(site: Site, session: dict[str, Any]) -> list[dict[str, Any]]:
    feed = build_feed(site.store, site.settings, session["reader"])
    ranked = [i for i in feed.items if i["slot"] == "ranked"]
    # A paper the reader saved is theirs already: the strip suggests others.
    saved = site.store.readers.saved_in(session["reader"]["id"], [i["paper_id"] for i in ranked])
    feed.items = [i for i in ranked if i["paper_id"] not in saved][:FOR_YOU]
    # The strip's cards are anchored apart from the same papers' cards further down.
    return [dict(p, card_prefix="fy-") for p in reader_views.feed_papers(site.store, feed)]
