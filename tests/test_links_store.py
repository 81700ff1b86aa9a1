"""Links, threads and weekly briefs kept in the store (both backends): the links stage equals the
pure linker, resumes a day range at a time, and the briefs it builds keep the faithfulness rule."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from papersift.briefs.stage import Briefs
from papersift.briefs.weeks import week_of
from papersift.cli.links import brief_violations
from papersift.ingest.stage import Ingest
from papersift.links.evaluate import load_dev
from papersift.links.linker import LinkParams, Paper, build
from papersift.links.stage import Links
from papersift.search.embed import embedding_text, text_hash
from papersift.settings import Settings
from papersift.store import Store
from tests.conftest import shared_file

pytestmark = pytest.mark.backends("sqlite", "postgresql")

# Word-count cosines run lower than a sentence model's (as in test_links.py).
WORDS = LinkParams(min_similarity=0.12, risky_similarity=0.22)
MODEL = "test:hashing"
NAMES = {"BrowseComp", "MOSEv2", "HealthBench"}


@lru_cache(maxsize=1)
def _records() -> tuple[dict[str, Any], ...]:
    """The dev threads' papers of three names, plus the papers of their origins' days."""
    dev = [t for t in load_dev(shared_file("stories/threads-dev.jsonl"))[1] if t["name"] in NAMES]
    ids = {p for t in dev for p in [t["origin"], *t["followups"]]}
    found: dict[str, dict[str, Any]] = {}
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    days = {r["announced"] for r in rows if r["id"] in ids}
    first = sorted(days)[:2]
    for row in rows:
        if row["id"] in ids or (row["announced"] in first and len(found) < 400):
            found.setdefault(row["id"], row)
    return tuple(sorted(found.values(), key=lambda r: (r["announced"], r["id"])))


def _vectors(records: list[dict[str, Any]]) -> np.ndarray:
    hashing = HashingVectorizer(n_features=2**12, stop_words="english", alternate_sign=False)
    matrix = hashing.transform([f"{r['title']}. {r['abstract']}" for r in records]).toarray()
    return (matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9)).astype(np.float32)


def _ingest(store: Store, settings: Settings, records: list[dict[str, Any]], path: Path,
            every: int = 1) -> None:
    """Ingest the records; every `every`-th of them gets a vector (1: all)."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    report = Ingest([f"file:{path}"]).run(store, settings)
    assert not report.failures
    store.embeddings.put_embeddings(MODEL, [
        (r["id"], text_hash(embedding_text(r["title"], r["abstract"])), v)
        for r, v in list(zip(records, _vectors(records), strict=True))[::every]])


def _shown(store: Store) -> set[tuple[str, str, str]]:
    return {(s, t, n) for s, t, n, _, _ in store.links.all_links()}


def test_the_stage_links_as_the_linker_does_and_resumes(store: Store, settings: Settings,
                                                        tmp_path: Path) -> None:
    records = list(_records())
    cut = sorted({r["announced"] for r in records})[len({r["announced"] for r in records}) // 2]
    _ingest(store, settings, [r for r in records if r["announced"] < cut], tmp_path / "a.jsonl")
    first = Links(params=WORDS, batch_papers=50).run(store, settings)
    assert first.ok, first.as_dict()
    _ingest(store, settings, [r for r in records if r["announced"] >= cut], tmp_path / "b.jsonl")
    second = Links(params=WORDS).run(store, settings)
    assert second.ok and second.counts["papers"] == sum(r["announced"] >= cut for r in records)
    # The pure linker over every paper at once gives the same shown links.
    papers = [Paper(r["id"], r["title"], r["abstract"], tuple(r["categories"]), r["announced"])
              for r in records]
    matrix = _vectors(records)
    row = {r["id"]: i for i, r in enumerate(records)}
    _, result = build(papers, lambda ids: matrix[[row[i] for i in ids]], params=WORDS)
    expected = {(k.source, k.target, k.name) for k in result.links if k.status == "linked"}
    assert _shown(store) == expected and expected
    # Nothing left to read: a third run does nothing.
    assert Links(params=WORDS).run(store, settings).counts["papers"] == 0
    # Redo from scratch gives the same again.
    assert Links(params=WORDS, redo=True).run(store, settings).ok
    assert _shown(store) == expected


def test_paper_links_and_threads_for_the_pages(store: Store, settings: Settings,
                                               tmp_path: Path) -> None:
    records = list(_records())
    _ingest(store, settings, records, tmp_path / "all.jsonl")
    before = store.data_version()
    report = Links(params=WORDS).run(store, settings)
    assert report.counts["threads"] >= 1
    assert store.data_version() != before  # cached paper and thread pages are made again
    links = store.links
    source, target, name, _, _ = links.all_links()[0]
    page = links.paper_links(source)
    assert any(b["paper_id"] == target and b["name"] == name for b in page["builds_on"])
    origin = links.paper_links(target)
    assert origin["followed_by"]["count"] >= 1 and name in origin["coined"]
    assert source in {p["paper_id"] for p in origin["followed_by"]["papers"]}
    thread = links.get_thread(f"{name}-{target}")
    assert thread is not None and thread["members"][0]["role"] == "origin"
    assert {m["paper_id"] for m in thread["members"]} >= {source, target}
    assert links.threads_of_papers([source])[source][0]["id"] == thread["id"]


def _topics(store: Store, records: list[dict[str, Any]]) -> None:
    """Two topics by primary category: computer vision, and the rest."""
    store.topics.replace_topics({
        "method": "test", "n_papers": len(records),
        "sections": [{"key": "s", "slug": "ai", "label": "AI", "position": 0}],
        "topics": [{"key": k, "id": None, "slug": k, "label": k.title(), "key_phrases": [],
                    "section": "s", "is_other": False, "centroid": None}
                   for k in ("vision", "language")],
        "assignments": [(r["id"], "vision" if r["categories"][0] == "cs.CV" else "language", 0.5)
                        for r in records]})


def test_weekly_briefs_keep_the_rule_and_are_built_once(store: Store, settings: Settings,
                                                        tmp_path: Path) -> None:
    records = list(_records())
    _ingest(store, settings, records, tmp_path / "all.jsonl")
    _topics(store, records)
    Links(params=WORDS).run(store, settings)
    week = week_of(sorted(r["announced"] for r in records)[0])
    report = Briefs(week=week).run(store, settings)
    assert report.ok and report.counts["built"] == 2, report.as_dict()
    links = store.links
    topic = store.topics.find_topic("vision")
    brief = links.get_brief(topic["id"], week)
    assert brief["week"] == week and brief["growth"]["papers"] == len(brief["paper_ids"])
    assert 3 <= len(brief["brief"]["sentences"]) <= 5 and len(brief["five"]) == 5
    assert all(f["why"] for f in brief["five"])
    assert links.brief_weeks(topic["id"]) == [week]
    assert links.briefs_for_topics([topic["id"]], week)[0]["slug"] == "vision"
    # Unchanged inputs: nothing built again.
    again = Briefs(week=week).run(store, settings)
    assert again.counts["built"] == 0 and again.counts["unchanged"] == 2
    every = Briefs().run(store, settings)
    assert every.ok and every.counts["weeks"] >= 2
    checked = brief_violations(store)
    assert checked["briefs"] >= 3 and checked["violations"] == 0, checked["examples"]


def _llm_reply(request: dict[str, Any], faithful: bool) -> str:
    """Sentences over the picks the prompt lists: their own titles (faithful), or a number
    no abstract holds."""
    import re

    found = re.findall(r"^\[([^\]]+)\] (.*)$", request["messages"][1]["content"], re.M)[:3]
    claim = "the title {title}" if faithful else "an accuracy of 99.7341 percent"
    return json.dumps({"sentences": [
        {"text": f"One paper ({pid}) is about {claim.format(title=title.rstrip('.'))}.",
         "cites": [pid]} for pid, title in found]})


@pytest.mark.parametrize("faithful", [True, False])
def test_an_llm_brief_goes_through_the_same_rule(store: Store, settings: Settings,
                                                 tmp_path: Path, faithful: bool) -> None:
    from tests.openai_server import OpenAIServer

    records = list(_records())
    _ingest(store, settings, records, tmp_path / "all.jsonl")
    _topics(store, records)
    week = week_of(sorted(r["announced"] for r in records)[0])
    with OpenAIServer() as server:
        server.chat_handler = lambda request: _llm_reply(request, faithful)
        llm = settings.replace(writer="llm", llm_url=server.url, llm_model="test-model")
        report = Briefs(week=week).run(store, llm)
    assert report.ok and report.details["writer"].startswith("llm:test-model")
    brief = store.links.get_brief(store.topics.find_topic("vision")["id"], week)
    assert brief["brief"]["writer"] == ("custom" if faithful else "builtin")
    assert brief_violations(store)["violations"] == 0


def test_an_ambiguous_name_is_kept_apart_from_the_links(store: Store, settings: Settings,
                                                        tmp_path: Path) -> None:
    records = list(_records())[:3]
    _ingest(store, settings, records, tmp_path / "three.jsonl")
    a, b, c = (r["id"] for r in records)
    links = store.links
    links.put_link_batch({
        "read": [(r["id"], r["announced"]) for r in records],
        "artefacts": [("SPPO", a, records[0]["announced"], ("cs.LG",), "title", False),
                      ("SPPO", b, records[1]["announced"], ("cs.CL",), "intro", False)],
        "links": [(c, a, "SPPO", records[2]["announced"], 0.7, "ambiguous", (b,))],
        "meta": {"last_day": records[2]["announced"]}})
    page = links.paper_links(c)
    assert page["builds_on"] == [] and page["ambiguous"][0]["name"] == "SPPO"
    assert {x["paper_id"] for x in page["ambiguous"][0]["candidates"]} == {a, b}
    assert links.paper_links(a)["followed_by"]["count"] == 0
    assert links.all_links() == [] and len(links.all_links("ambiguous")) == 1
    # A withdrawn artefact takes its links with it.
    links.put_link_batch({"retracted": [("SPPO", a)]})
    assert links.all_links("ambiguous") == []
    assert [row[1] for row in links.link_state()["artefacts"]] == [b]


def test_a_week_the_embed_stage_has_not_finished_is_grouped_by_words(
        store: Store, settings: Settings, tmp_path: Path) -> None:
    records = list(_records())
    _ingest(store, settings, records, tmp_path / "half.jsonl", every=2)
    _topics(store, records)
    week = week_of(sorted(r["announced"] for r in records)[0])
    report = Briefs(week=week).run(store, settings.replace(links_embed_missing=False))
    assert report.ok and report.counts["built"] == 2
    brief = store.links.get_brief(store.topics.find_topic("language")["id"], week)
    assert len(brief["five"]) == 5 and len({f["subtheme"] for f in brief["five"]}) >= 3
    assert brief_violations(store)["violations"] == 0
