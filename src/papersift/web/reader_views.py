"""Page data of a reader's own pages (/me, profile, collections, log in, sign up): one dict, both the template's context and the JSON twin."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from papersift.delivery.digest import WEEKDAYS
from papersift.latex import readable
from papersift.readers.signals import author_paper_ids
from papersift.recommend.feed import build_feed
from papersift.store import Store
from papersift.web import urls
from papersift.web.categories import category_label
from papersift.web.views import NotFound, Site, item

KIND_LABELS = {"topic": "Topic", "section": "Section", "author": "Author",
               "category": "Category", "search": "Search", "thread": "Thread"}


def _base(page: str, title: str, path: str, session: dict[str, Any] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"page": page, "title": title, "path": path, "feed": None,
                            "papers": []}
    if session:
        data["reader"] = {"name": session["reader"]["name"]}
        data["csrf"] = session["csrf_token"]
    return data


def _reactions(store: Store, reader_id: int) -> dict[str, str]:
    return {r["paper_id"]: r["reaction"] for r in store.readers.reactions_of(reader_id)}


def _with_state(entry: dict[str, Any], reactions: dict[str, str]) -> dict[str, Any]:
    entry["reaction"] = reactions.get(entry["id"])
    return entry


def feed_papers(store: Store, feed: Any) -> list[dict[str, Any]]:
    """The feed's items as listed papers, each with its slot, score, reasons and rating."""
    rows = store.pages.listing_by_ids([i["paper_id"] for i in feed.items])
    reactions = {r["paper_id"]: r["reaction"] for r in feed.reactions}
    papers = []
    for entry in feed.items:
        row = rows.get(entry["paper_id"])
        if row is None:
            continue
        paper = _with_state(item(row), reactions)
        paper.update(slot=entry["slot"], score=entry["score"], reasons=[
            dict(r, url=urls.paper(r["paper_id"])) if r.get("paper_id") else r
            for r in entry["reasons"]])
        papers.append(paper)
    return papers


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """'1 paper', '2 papers', '1,204 papers'."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def me(site: Site, session: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """Today's ranked feed with each paper's reasons; marks what it shows as shown."""
    store, reader = site.store, session["reader"]
    feed = build_feed(store, site.settings, reader, now)
    papers = feed_papers(store, feed)
    own_rows = store.pages.listing_by_ids(feed.own)
    own = [item(own_rows[i]) for i in feed.own if i in own_rows]
    store.readers.mark_shown(reader["id"], [p["id"] for p in papers],
                             (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    data = _base("me", f"{reader['name']}’s feed", urls.ME, session)
    window = dict(feed.window)
    window["count_line"] = (f"{plural(len(papers), 'paper')} from "
                            f"{window.get('papers', 0):,} announced since {window.get('start')}")
    data.update(papers=papers, interests=feed.interests, window=window,
                personalized=feed.personalized, entries=feed.entries, own=own,
                follows=[_follow_view(store, f) for f in feed.follows],
                claims=[_claim_view(store, c) for c in feed.claims])
    return data


def _claim_view(store: Store, claim: dict[str, Any]) -> dict[str, Any]:
    author = store.pages.find_author(claim["author_slug"])
    return {"slug": claim["author_slug"], "name": author["name"] if author else
            claim["author_slug"], "url": urls.author(claim["author_slug"]),
            "created_at": claim["created_at"]}


def _follow_view(store: Store, follow: dict[str, Any]) -> dict[str, Any]:
    kind, value = follow["kind"], follow["value"]
    label, url = value, None
    if kind == "topic" and (topic := store.topics.find_topic(value)):
        label, url = topic["label"], urls.topic(topic["slug"])
    elif kind == "section" and (section := store.topics.find_section(value)):
        label, url = section["label"], urls.section(value)
    elif kind == "author" and (author := store.pages.find_author(value)):
        label, url = author["name"], urls.author(value)
    elif kind == "category":
        label, url = f"{category_label(value)} ({value})", urls.category(value)
    elif kind == "search":
        url = urls.with_query(urls.SEARCH, q=value)
    elif kind == "thread":
        url = urls.thread(value)
        label = value.rpartition("-")[0] or value
    return {"kind": kind, "kind_label": KIND_LABELS[kind], "value": value, "label": label,
            "url": url, "target": f"{kind}:{value}"}


def profile(site: Site, session: dict[str, Any]) -> dict[str, Any]:
    """Everything the reader gave, each part editable."""
    store, reader = site.store, session["reader"]
    rid = reader["id"]
    reactions = store.readers.reactions_of(rid)
    rated = store.pages.listing_by_ids([r["paper_id"] for r in reactions[:50]])
    data = _base("profile", "Your profile", urls.ME_PROFILE, session)
    data.update(claims=_claims_with_papers(store, rid, reactions),

        follows=[_follow_view(store, f) for f in store.readers.follows_of(rid)],
        entries=store.readers.profile_entries(rid),
        feedback=store.readers.feedback_of(rid)[:20],
        collections=[dict(c, url=urls.me_collection(c["name"]))
                     for c in store.readers.collections_of(rid)],
        reactions=[dict(r, title=readable(rated[r["paper_id"]]["title"]) if r["paper_id"] in rated
                        else r["paper_id"], url=urls.paper(r["paper_id"])) for r in reactions],
        topics=[{"slug": t["slug"], "label": t["label"]}
                for t in store.topics.list_topics(include_other=False)],
        follow_kinds=list(KIND_LABELS),
        delivery=dict(store.delivery.delivery_settings(rid), email=reader["email"]),
        weekdays=list(WEEKDAYS), feed_url=None)
    return data


def _claims_with_papers(store: Store, rid: int, reactions: list[dict[str, Any]]
                        ) -> list[dict[str, Any]]:
    """Each claim with the papers it liked (the author's, liked since the claim)."""
    claims = []
    for claim in store.readers.claims_of(rid):
        view = _claim_view(store, claim)
        author = store.pages.find_author(claim["author_slug"])
        theirs = set(author_paper_ids(store, author)) if author else set()
        liked = [r["paper_id"] for r in reactions if r["paper_id"] in theirs
                 and r["reaction"] == "up" and r["at"][:19] >= claim["created_at"][:19]]
        rows = store.pages.listing_by_ids(liked)
        view["papers"] = [{"id": pid, "title": rows[pid]["title"] if pid in rows else pid,
                           "url": urls.paper(pid)} for pid in liked]
        claims.append(view)
    return claims


def collection(site: Site, session: dict[str, Any], name: str) -> dict[str, Any]:
    store, reader = site.store, session["reader"]
    ids = store.readers.collection_papers(reader["id"], name)
    if ids is None:
        raise NotFound(f"you have no collection {name!r}")
    rows = store.pages.listing_by_ids(ids)
    reactions = _reactions(store, reader["id"])
    data = _base("collection", name, urls.me_collection(name), session)
    data.update(collection=name,
                papers=[_with_state(item(rows[i]), reactions) for i in ids if i in rows],
                missing=[i for i in ids if i not in rows])
    return data


def login(site: Site, form_token: str, message: str | None = None, next_path: str = "",
          session: dict[str, Any] | None = None) -> dict[str, Any]:
    data = _base("login", "Log in", urls.LOGIN, session)
    data.update(form_token=form_token, message=message, next=next_path,
                signup=site.settings.signup)
    return data


def signup(site: Site, form_token: str, message: str | None = None,
           values: dict[str, str] | None = None) -> dict[str, Any]:
    data = _base("signup", "Sign up", urls.SIGNUP, None)
    data.update(form_token=form_token, message=message, signup=site.settings.signup,
                values={k: v for k, v in (values or {}).items() if k in ("name", "email")})
    return data
