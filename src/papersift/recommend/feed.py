"""A reader's feed: the window's papers ranked by their model, follows and profile entries, with slots to explore and for what is trending, each with the facts behind it."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

import numpy as np

from papersift.readers.signals import saved_search_filters, search_words
from papersift.recommend.entries import apply_entries
from papersift.recommend.model import ReaderModel, Scores
from papersift.recommend.reasons import item_reasons, name_interests
from papersift.recommend.window import Window, reader_model, window
from papersift.settings import Settings
from papersift.store import SearchFilters, Store

# Standardized-score units a follow adds: an author a reader follows outranks a near miss.
FOLLOW_BOOST = {"author": 3.0, "topic": 2.0, "search": 2.0, "section": 1.5, "category": 1.0,
                "thread": 2.5}
EXPLORE_SHARE, TRENDING_SLOTS = 0.1, 2
EXPLORE_BAND = 100  # exploration picks come from the papers ranked just below the feed


@dataclass
class Feed:
    """The ranked items: {paper_id, score, slot ('ranked', 'exploring', 'trending'), reasons}."""

    items: list[dict[str, Any]] = field(default_factory=list)
    interests: list[dict[str, Any]] = field(default_factory=list)
    window: dict[str, Any] = field(default_factory=dict)
    personalized: bool = False  # the reader gave signals the ranking used
    # The reader's reactions and profile entries as the ranking read them (pages show them
    # too, without reading them again).
    reactions: list[dict[str, Any]] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    # New papers by an author the reader claimed ("This is me"): theirs, not recommendations.
    own: list[str] = field(default_factory=list)
    follows: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Reader:
    reader: dict[str, Any]
    reactions: list[dict[str, Any]]
    follows: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    liked: list[str]
    liked_dates: list[str]
    disliked: list[str]
    hidden: set[str]  # reacted to, or shown on an earlier day
    claims: list[dict[str, Any]] = field(default_factory=list)


def _signals(store: Store, reader: dict[str, Any], today: str) -> _Reader:
    reactions = store.readers.reactions_of(reader["id"])
    saved = {pid: c["created_at"] for c in store.readers.collections_of(reader["id"])
             for pid in store.readers.collection_papers(reader["id"], c["name"]) or []}
    liked = {r["paper_id"]: r["at"] for r in reactions if r["reaction"] == "up"}
    for pid, at in saved.items():
        liked.setdefault(pid, at)
    return _Reader(reader, reactions, store.readers.follows_of(reader["id"]),
                   store.readers.profile_entries(reader["id"]), list(liked),
                   list(liked.values()),
                   [r["paper_id"] for r in reactions if r["reaction"] != "up"],
                   {r["paper_id"] for r in reactions}
                   | store.readers.shown_before(reader["id"], today),
                   store.readers.claims_of(reader["id"]))


def build_feed(store: Store, settings: Settings, reader: dict[str, Any],
               now: datetime | None = None, exclude: frozenset[str] = frozenset()) -> Feed:
    """The reader's feed for today (the same all day, until their signals change), without
    the papers in `exclude` (a digest's: those sent before)."""
    today = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
    win = window(store, settings)
    who = _signals(store, reader, today)
    mine = {c["author_slug"] for c in who.claims}
    own = [i for i, row in enumerate(win.candidates.rows)
           if mine and mine.intersection(row["author_slugs"]) and row["id"] not in who.hidden]
    theirs = set(own)
    keep = [i for i, pid in enumerate(win.candidates.ids)
            if pid not in who.hidden and pid not in exclude and i not in theirs]
    candidates = win.candidates.subset(keep)
    model = reader_model(store, win, reader, who.liked, who.liked_dates, who.disliked, today)
    scores = model.score(candidates)
    follow_boost, follow_facts = _follows(store, who.follows, candidates)
    effect = apply_entries(who.entries, candidates, win.topics)
    total = scores.total + follow_boost + effect.adjustment
    total[effect.excluded] = -np.inf
    feed = Feed(window={"start": win.start, "papers": len(win.candidates.rows),
                        "candidates": int(np.isfinite(total).sum()), "days": win.days,
                        "widened": win.widened, "feed_days": int(settings.feed_days)},
                personalized=bool(who.liked or who.follows or who.entries or who.claims),
                reactions=who.reactions, entries=who.entries,
                own=[win.candidates.rows[i]["id"] for i in own], follows=who.follows,
                claims=who.claims)
    labels = name_interests(model, win)
    feed.interests = [{"interest": k, "label": v, "likes": int((model.interest == k).sum())}
                      for k, v in labels.items()]
    slate = _slate(total, scores, model, settings, store, candidates, win)
    feed.items = [{"paper_id": candidates.rows[i]["id"], "score": round(float(total[i]), 3),
                   "slot": slot,
                   "reasons": item_reasons(i, slot, candidates, scores, model, labels,
                                           follow_facts[i], effect.matched[i], slot_note)}
                  for i, slot, slot_note in slate]
    return feed


def _follows(store: Store, follows: list[dict[str, Any]], candidates: Any
             ) -> tuple[np.ndarray, list[list[dict[str, str]]]]:
    """The boost each candidate gets from the reader's follows, and which follows matched."""
    rows = candidates.rows
    boost = np.zeros(len(rows))
    facts: list[list[dict[str, str]]] = [[] for _ in rows]
    for follow in follows:
        kind, value = follow["kind"], follow["value"]
        found = (store.topics.find_topic(value) if kind == "topic" else
                 store.topics.find_section(value) if kind == "section" else
                 store.links.get_thread(value) if kind == "thread" else None)
        label = (found or {}).get("name" if kind == "thread" else "label", value)
        for i in _matching(store, kind, value, found, candidates):
            boost[i] += FOLLOW_BOOST[kind]
            facts[i].append({"kind": kind, "value": value, "label":
                             _author_name(rows[i], value) if kind == "author" else label})
    return boost, facts


def _matching(store: Store, kind: str, value: str, found: dict[str, Any] | None,
              candidates: Any) -> list[int]:
    """The candidates a follow matches (a topic's or section's by their id column)."""
    rows = candidates.rows
    if kind in ("topic", "section"):
        if found is None:
            return []
        return np.flatnonzero(candidates.ints(f"{kind}_id") == found["id"]).tolist()
    if kind == "author":
        return [i for i, row in enumerate(rows) if value in row["author_slugs"]]
    if kind == "category":
        return [i for i, row in enumerate(rows) if value in row["categories"]]
    if kind == "thread":  # a thread's papers, as it stands now
        members = {m["paper_id"] for m in found["members"]} if found else set()
        return [i for i, row in enumerate(rows) if row["id"] in members]
    wanted, unwanted = search_words(value)
    within = _search_filter(store, saved_search_filters(value)[1])

    def matches(row: dict[str, Any]) -> bool:
        if not within(row):
            return False
        text = f"{row['title']} {row['abstract']}".lower()
        return all(w in text for w in wanted) and not any(w in text for w in unwanted)

    return [i for i, row in enumerate(rows) if matches(row)]


def _search_filter(store: Store, filters: SearchFilters):  # noqa: ANN202 (a row predicate)
    """Whether a candidate passes a saved search's filters, as the search page applies them:
    every category (an archive, cs, takes its categories), every author (their words as a
    phrase), the dates (inclusive, at the precision written) and the topic."""
    if filters.is_empty():
        return lambda row: True
    topic = store.topics.find_topic(filters.topic) if filters.topic else None
    names = [" ".join(_name_words(a)) for a in filters.authors]
    names = [n for n in names if n]

    def passes(row: dict[str, Any]) -> bool:
        date = row["sort_date"] or ""
        if filters.since and date < filters.since:
            return False
        if filters.until and date[:len(filters.until)] > filters.until:
            return False
        if filters.topic and (topic is None or row["topic_id"] != topic["id"]):
            return False
        cats = [c.lower() for c in row["categories"]]
        for wanted in (c.lower() for c in filters.categories):
            if not any(c == wanted or ("." not in wanted and c.startswith(wanted + "."))
                       for c in cats):
                return False
        authors = f" {' '.join(_name_words(', '.join(row['authors'])))} "
        return all(f" {name} " in authors for name in names)

    return passes


def _name_words(text: str) -> list[str]:
    return [w for w in re.split(r"[^\w]+|_", text.lower()) if w]


def _author_name(row: dict[str, Any], slug: str) -> str:
    names = dict(zip(row["author_slugs"], row["authors"], strict=False))
    return names.get(slug, slug)


def _slate(total: np.ndarray, scores: Scores, model: ReaderModel, settings: Settings,
           store: Store, candidates: Any, win: Window) -> list[tuple[int, str, str]]:
    """(candidate, slot, note) in feed order: ranked papers, some to explore, what trends."""
    size = max(1, int(settings.feed_size))
    explore = max(1, round(size * EXPLORE_SHARE)) if model.liked.rows else 0
    ranking = np.argsort(-total, kind="stable")
    order = ranking[np.isfinite(total[ranking])].tolist()
    ranked = _balanced(order, scores, model, size - explore - TRENDING_SLOTS)
    taken = set(ranked)
    slate = [(i, "ranked", "") for i in ranked]
    band = list(islice((i for i in order if i not in taken), EXPLORE_BAND))
    if explore and band:
        # Near the edge of what the model knows: well ranked, yet far from every liked paper.
        edge = sorted(band, key=lambda i: scores.nearest_cosine[i])[:explore]
        slate += [(i, "exploring", "") for i in edge]
        taken |= set(edge)
    for i, note in _trending(win.trending, candidates, order, taken):
        slate.append((i, "trending", note))
        taken.add(i)
    # Slots no exploration or trend filled go to the next best papers, after the ranked ones.
    more = [(i, "ranked", "") for i in
            islice((i for i in order if i not in taken), max(0, size - len(slate)))]
    return slate[:len(ranked)] + more + slate[len(ranked):]


def _balanced(order: list[int], scores: Scores, model: ReaderModel, slots: int) -> list[int]:
    """The best papers, no interest taking more than its share of the likes (plus two): a
    reader of two fields gets both, not a blend of neither."""
    shares = Counter(model.interest.tolist())
    likes = max(1, len(model.interest))
    cap = {k: math.ceil(slots * n / likes) + 2 for k, n in shares.items()}
    used: Counter[int] = Counter()
    picked: list[int] = []
    # Each candidate's interest (that of its nearest liked paper; -1 without likes).
    nearest = scores.nearest.astype(np.int64)
    of = (np.where(nearest >= 0, model.interest[np.maximum(nearest, 0)], -1)
          if len(model.interest) else np.full(len(nearest), -1)).tolist()
    for i in order:
        interest = of[i]
        if interest >= 0 and used[interest] >= cap[interest]:
            continue
        used[interest] += 1
        picked.append(i)
        if len(picked) >= slots:
            return picked
    chosen = set(picked)
    return picked + list(islice((i for i in order if i not in chosen), slots - len(picked)))


def _trending(topics: list[dict[str, Any]], candidates: Any, order: list[int], taken: set[int]
              ) -> list[tuple[int, str]]:
    """The reader's best-ranked paper of each of the fastest-growing topics."""
    picks: list[tuple[int, str]] = []
    position = np.full(len(candidates.rows), len(order), dtype=np.int64)  # unranked: after all
    position[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    topic_ids = candidates.ints("topic_id")
    for topic in topics:
        members = [i for i in np.flatnonzero(topic_ids == topic["id"]).tolist()
                   if position[i] < len(order) and i not in taken]
        if not members:
            continue
        best = min(members, key=lambda i: position[i])
        taken.add(best)
        picks.append((best, f"{topic['label']}: {topic['this_week']} papers this week, "
                            f"{topic['growth']:.1f}x its weekly mean before"))
        if len(picks) >= TRENDING_SLOTS:
            break
    return picks
