"""Topics build and assign on a real store: labels, the "other" bucket, slug stability across
rebuilds, the redirect of a merged topic, and assign agreeing with build."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from papersift.records import PaperRecord
from papersift.store import Store, add_records
from papersift.topics import AssignTopics, BuildParams, BuildTopics
from papersift.topics.evaluate import label_checks
from papersift.topics.phrases import STOPWORDS

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")

DIM = 32
# Each synthetic field: the phrases its abstracts are written from.
FIELDS = {
    "rl": ["reward modelling", "preference optimisation", "policy gradient", "reward hacking",
           "offline reinforcement learning"],
    "graphs": ["graph neural networks", "node classification", "message passing",
               "link prediction", "graph transformers"],
    "vision": ["semantic segmentation", "object detection", "point clouds", "depth estimation",
               "bounding boxes"],
    "speech": ["speech recognition", "acoustic features", "speaker verification",
               "spoken language", "audio tokenizers"],
}
FILLER = ["We study", "This paper proposes", "We present", "Our method improves"]
MODEL = "local:all-MiniLM-L6-v2:int8"
PARAMS = BuildParams(papers_per_topic=40, min_topic_size=15, other_similarity=0.5)


def field_centers(seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    return {name: basis[i].astype(np.float32) for i, name in enumerate(FIELDS)}


def noisy(center: np.ndarray, rng: np.random.Generator, spread: float = 0.12) -> np.ndarray:
    vector = center + rng.normal(scale=spread / np.sqrt(DIM), size=DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def abstract_for(field: str, rng: np.random.Generator) -> tuple[str, str]:
    phrases = FIELDS[field]
    picks = [phrases[i] for i in rng.choice(len(phrases), size=3, replace=False)]
    title = f"{picks[0].capitalize()} with {picks[1]} for large language models"
    abstract = (f"{FILLER[int(rng.integers(len(FILLER)))]} {picks[0]} and {picks[1]}. "
                f"The results show that {picks[2]} helps large language models, and the "
                f"approach achieves state-of-the-art performance on {picks[1]}.")
    return title, abstract


def add_papers(store: Store, settings, papers: list[tuple[str, str, str, str, np.ndarray]]) -> None:
    """(id, date, title, abstract, vector) rows into the store, with their embeddings."""
    add_records(store, [
        PaperRecord(id=pid, title=title, abstract=abstract, authors=[f"Ada {pid}"],
                    categories=["cs.LG"], source="file", announced=day)
        for pid, day, title, abstract, _ in papers])
    store.embeddings.put_embeddings(MODEL, [(pid, "h", vec) for pid, _, _, _, vec in papers])


def make_corpus(n_per_field: int = 40, noise: int = 8, seed: int = 1, start: int = 0,
                day: str = "2026-06-01", centers: dict[str, np.ndarray] | None = None):
    """Papers of the four fields plus `noise` papers that belong to none of them."""
    rng = np.random.default_rng(seed)
    centers = centers or field_centers()
    rows = []
    n = start
    for field in FIELDS:
        for _ in range(n_per_field):
            title, abstract = abstract_for(field, rng)
            rows.append((f"2606.{n:05d}", day, title, abstract, noisy(centers[field], rng)))
            n += 1
    taken = np.vstack(list(centers.values()))
    for _ in range(noise):
        vector = rng.normal(size=DIM)
        vector -= taken.T @ (taken @ vector)  # orthogonal to every field
        vector /= np.linalg.norm(vector)
        rows.append((f"2606.{n:05d}", day, f"Noise paper {n} on quilting",
                     "Knitting patterns and embroidery stitches.", vector.astype(np.float32)))
        n += 1
    return rows


def topic_of(store: Store) -> dict[str, str]:
    slugs = {t["id"]: t["slug"] for t in store.topics.list_topics()}
    return {pid: slugs[tid] for pid, tid, _ in store.topics.topic_assignments()}


def test_build_labels_topics_and_sends_misfits_to_other(store, settings) -> None:
    rows = make_corpus()
    add_papers(store, settings, rows)
    report = BuildTopics(params=PARAMS).run(store, settings)
    assert report.counts["topics"] == 4 and report.counts["papers"] == len(rows)
    topics = store.topics.list_topics()
    regular = [t for t in topics if not t["is_other"]]
    assert len(regular) == 4
    assert label_checks(topics)["problems"] == 0
    # Each topic's phrases come from exactly one field's vocabulary.
    for topic in regular:
        fields = {f for f, phrases in FIELDS.items() for p in topic["key_phrases"]
                  if any(p.lower() in fp or fp in p.lower() for fp in phrases)}
        assert len(fields) == 1, topic["key_phrases"]
        assert 2 <= len(topic["key_phrases"]) <= 5
        for phrase in topic["key_phrases"]:
            words = phrase.lower().split()
            assert words[0] not in STOPWORDS and words[-1] not in STOPWORDS
            assert "language models" not in phrase.lower()  # shared by every field
    # The noise papers fit nothing: they are in "other", never in a field's topic.
    assigned = topic_of(store)
    noise_ids = [r[0] for r in rows[-8:]]
    assert {assigned[pid] for pid in noise_ids} == {"other"}
    other = store.topics.find_topic("other")
    assert other["is_other"] and other["size"] == 8
    # A field's papers share one topic.
    for i in range(4):
        assert len({assigned[r[0]] for r in rows[i * 40:(i + 1) * 40]}) == 1
    sections = store.topics.list_sections()
    assert sum(len(s["topics"]) for s in sections) == 4
    assert all(s["label"] and s["slug"] for s in sections)


def test_rebuild_keeps_ids_and_slugs_and_assign_matches_build(store, settings) -> None:
    rows = make_corpus()
    add_papers(store, settings, rows)
    BuildTopics(params=PARAMS).run(store, settings)
    before = topic_of(store)
    ids_before = {t["slug"]: t["id"] for t in store.topics.list_topics()}
    # A new week of papers arrives: assign places them without re-clustering.
    week = make_corpus(n_per_field=6, noise=2, seed=2, start=500, day="2026-06-08")
    add_papers(store, settings, week)
    result = AssignTopics().run(store, settings)
    assert result.counts["assigned"] == len(week) and result.counts["to_other"] == 2
    assigned = topic_of(store)
    for i, field_rows in enumerate(week[j * 6:(j + 1) * 6] for j in range(4)):
        field_slug = before[rows[i * 40][0]]
        assert {assigned[r[0]] for r in field_rows} == {field_slug}
    assert AssignTopics().run(store, settings).counts["assigned"] == 0  # nothing left to do
    # A full rebuild maps every topic onto itself: same ids, same slugs, same papers.
    report = BuildTopics(params=replace(PARAMS, warm_start=False)).run(store, settings)
    assert report.counts["kept"] == 4 and report.details["new"] == [] and report.details["retired"] == {}
    after = topic_of(store)
    assert all(after[pid] == assigned[pid] for pid in assigned)
    assert {t["slug"]: t["id"] for t in store.topics.list_topics()} == ids_before
    assert store.topics.latest_topic_build()["report"]["kept"] == 4


def test_merged_topic_redirects_to_where_its_papers_went(store, settings) -> None:
    centers = field_centers()
    rows = make_corpus(centers=centers)
    add_papers(store, settings, rows)
    BuildTopics(params=PARAMS).run(store, settings)
    before = topic_of(store)
    speech_slug = before[rows[3 * 40][0]]
    vision_slug = before[rows[2 * 40][0]]
    # Speech papers drift onto vision: re-embed them near the vision centre.
    rng = np.random.default_rng(3)
    moved = [(r[0], "h2", noisy(centers["vision"], rng)) for r in rows[3 * 40:4 * 40]]
    store.embeddings.put_embeddings(MODEL, moved)
    report = BuildTopics(params=replace(PARAMS, papers_per_topic=56)).run(store, settings)
    assert report.counts["topics"] == 3
    merged_into = store.topics.find_topic(speech_slug)
    survivor = store.topics.find_topic(vision_slug)
    assert survivor.get("redirected_from") is None
    assert merged_into["id"] == survivor["id"]
    assert merged_into["redirected_from"] == speech_slug
    assert report.details["retired"][speech_slug] == {"to": vision_slug, "reason": "merge"}
    assert report.details["merges"] == {vision_slug: sorted([vision_slug, speech_slug])} or (
        set(report.details["merges"][vision_slug]) == {vision_slug, speech_slug})
    assert all(t["slug"] != speech_slug for t in store.topics.list_topics())
    # The merged topic's papers are listed newest first under the survivor.
    _, papers = store.pages.topic_papers_page(survivor["id"], 500, 0)
    assert len(papers) == 80
    assert [p["sort_date"] for p in papers] == sorted((p["sort_date"] for p in papers),
                                                      reverse=True)


def test_build_without_embeddings_is_a_clear_error(store, settings) -> None:
    from papersift.topics import TopicsError

    with pytest.raises(TopicsError, match="no embeddings"):
        BuildTopics().run(store, settings)
    with pytest.raises(TopicsError, match="topics build"):
        AssignTopics().run(store, settings)


def test_eval_stability_holds_out_the_newest_week(store, settings) -> None:
    from papersift.topics.evaluate import evaluate_topics

    add_papers(store, settings, make_corpus())
    add_papers(store, settings, make_corpus(n_per_field=5, noise=1, seed=4, start=700,
                                            day="2026-06-10"))
    BuildTopics(params=PARAMS).run(store, settings)
    result = evaluate_topics(store, settings, params=PARAMS, with_baseline=False)
    s = result["stability"]
    assert s["held_out"] == 21 and s["held_out_from"] == "2026-06-04"
    assert s["stability"] == 1.0 and s["kept_topics"] == 4 and s["new_topics"] == 0
    assert result["labels"]["problems"] == 0
    assert result["vs_primary_category"]["papers"] == 168 + 21
