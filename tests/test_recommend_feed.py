"""A reader's feed on a small store of two fields: both interests served (not their blend), ratings, entries and follows at work, nothing shown twice, every reason a fact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from papersift.readers import accounts, signals
from papersift.recommend.feed import build_feed
from papersift.store import Store
from tests.reader_helpers import make_world

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.fixture
def world(store: Store) -> dict[str, list[str]]:
    return make_world(store)


def _reader(store: Store) -> dict:
    reader_id = accounts.add_reader(store, "ada", "correct horse battery")
    return store.readers.get_reader(reader_id)


def _ids(feed) -> list[str]:  # noqa: ANN001
    return [item["paper_id"] for item in feed.items]


def test_two_interests_are_both_served_not_their_blend(store, settings, world) -> None:
    reader = _reader(store)
    for pid in world["old-graphs"][:4] + world["old-rl"][:4]:
        signals.react(store, reader["id"], pid, "up")
    feed = build_feed(store, settings.replace(feed_size=10), store.readers.get_reader(reader["id"]))
    ranked = [i["paper_id"] for i in feed.items if i["slot"] == "ranked"]
    assert set(ranked) & set(world["graphs"]) and set(ranked) & set(world["rl"])
    assert not set(ranked[:6]) & set(world["blend"]), "the top is a blend of both fields"
    assert len(feed.interests) == 2
    first = feed.items[0]
    closest = next(r for r in first["reasons"] if r["kind"] == "closest")
    assert closest["paper_id"] in world["old-graphs"] + world["old-rl"]
    assert any(r["kind"] == "words" for r in first["reasons"])


def test_a_rating_changes_the_next_feed_and_rated_papers_never_return(store, settings,
                                                                      world) -> None:
    reader = _reader(store)
    for pid in world["old-graphs"][:4]:
        signals.react(store, reader["id"], pid, "up")
    before = build_feed(store, settings, store.readers.get_reader(reader["id"]))
    top = before.items[0]["paper_id"]
    signals.react(store, reader["id"], top, "down")
    signals.react(store, reader["id"], before.items[1]["paper_id"], "not_interested")
    after = build_feed(store, settings, store.readers.get_reader(reader["id"]))
    assert top not in _ids(after) and before.items[1]["paper_id"] not in _ids(after)


def test_what_was_shown_on_an_earlier_day_is_not_shown_again(store, settings, world) -> None:
    reader = _reader(store)
    signals.react(store, reader["id"], world["old-rl"][0], "up")
    first = build_feed(store, settings, reader)
    assert _ids(build_feed(store, settings, reader)) == _ids(first)  # stable within a day
    yesterday = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.readers.mark_shown(reader["id"], _ids(first)[:5], yesterday)
    assert not set(_ids(build_feed(store, settings, reader))) & set(_ids(first)[:5])


def test_entries_lift_lower_and_exclude(store, settings, world) -> None:
    reader = _reader(store)
    for pid in world["old-graphs"][:4]:
        signals.react(store, reader["id"], pid, "up")
    size = settings.replace(feed_size=10)

    def with_reward(feed) -> int:  # noqa: ANN001
        rows = store.readers.ranking_rows(ids=_ids(feed))
        return sum("reward" in f"{r['title']} {r['abstract']}".split() for r in rows)

    base = build_feed(store, size, store.readers.get_reader(reader["id"]))
    signals.add_entry(store, reader["id"], "more", "reward")
    lifted = build_feed(store, size, store.readers.get_reader(reader["id"]))
    assert with_reward(lifted) >= with_reward(base) + 3
    assert any(r["text"] == "you asked for more: reward"
               for i in lifted.items for r in i["reasons"])
    signals.add_entry(store, reader["id"], "less", "reward")  # both: they cancel out
    assert with_reward(build_feed(store, size, store.readers.get_reader(reader["id"]))) < \
        with_reward(lifted)
    signals.add_entry(store, reader["id"], "exclude", "molecule")
    excluded = build_feed(store, size, store.readers.get_reader(reader["id"]))
    texts = {r["id"]: f"{r['title']} {r['abstract']}".lower()
             for r in store.readers.ranking_rows(ids=_ids(excluded))}
    assert not any("molecule" in t.split() for t in texts.values())


def test_a_followed_author_is_in_the_feed_and_says_so(store, settings, world) -> None:
    reader = _reader(store)
    signals.follow(store, reader["id"], "author:grace-hopper")
    feed = build_feed(store, settings, store.readers.get_reader(reader["id"]))
    by_grace = [i for i in feed.items if any(r["kind"] == "follow:author" for r in i["reasons"])]
    assert by_grace and feed.items[0] in by_grace
    assert all(r["author_slugs"].count("grace-hopper") for r in store.readers.ranking_rows(
        ids=[i["paper_id"] for i in by_grace]))


def test_a_followed_search_keeps_its_filters_in_the_feed(store, settings, world) -> None:
    reader = _reader(store)

    def matched(target: str) -> set[str]:
        signals.follow(store, reader["id"], target)
        feed = build_feed(store, settings, store.readers.get_reader(reader["id"]))
        signals.unfollow(store, reader["id"], target)
        return {i["paper_id"] for i in feed.items
                if any(r["kind"] == "follow:search" for r in i["reasons"])}

    rows = {r["id"]: r for r in store.readers.ranking_rows(ids=world["rl"] + world["graphs"])}
    anyone = matched("search:reward")
    by_grace = matched('search:reward au:"Grace Hopper"')
    assert by_grace and by_grace < anyone
    assert all("grace-hopper" in rows[pid]["author_slugs"] for pid in by_grace)
    assert matched("search:reward cat:cs") == anyone  # an archive takes its categories
    assert matched("search:reward cat:cs.CV") == set()
    assert matched("search:reward since:2099-01-01") == set()
    assert matched(f"search:reward until:{rows[world['rl'][0]]['sort_date'][:7]}") == anyone


def test_a_reader_with_no_signals_gets_new_papers_and_is_told_how_to_rank(store, settings,
                                                                          world) -> None:
    feed = build_feed(store, settings, _reader(store))
    assert feed.items and not feed.personalized
    assert feed.items[0]["reasons"][0]["kind"] == "new"
