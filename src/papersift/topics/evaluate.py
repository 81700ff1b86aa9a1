"""Measuring topics: agreement with arXiv primary categories (NMI, ARI), the share in
"other", label rules, and stability when one more week of papers arrives."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from threadpoolctl import threadpool_limits

from papersift.search.embed import model_id
from papersift.settings import Settings
from papersift.store import Store
from papersift.topics.phrases import STOPWORDS, phrase_key
from papersift.topics.plan import OTHER_KEY, BuildParams, Say, plan_build
from papersift.topics.stage import TopicsError


def agreement(topics: Sequence[Any], categories: Sequence[str | None]) -> dict[str, float]:
    """NMI and ARI of topic labels against categories (papers without a category left out)."""
    pairs = [(t, c) for t, c in zip(topics, categories, strict=True) if c]
    if len(pairs) < 2:
        return {"nmi": 0.0, "ari": 0.0, "papers": len(pairs)}
    t, c = zip(*pairs, strict=True)
    t = [str(x) for x in t]
    return {"nmi": round(float(normalized_mutual_info_score(c, t)), 4),
            "ari": round(float(adjusted_rand_score(c, t)), 4), "papers": len(pairs)}


def label_checks(topics: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The label rules: 2-5 phrases, no stopword at a phrase's edge, no near-duplicates
    within a topic, no phrase (by stem) shared by two topics, no two equal labels."""
    problems: list[str] = []
    owners: dict[tuple[str, ...], str] = {}
    labels: dict[str, str] = {}
    regular = [t for t in topics if not t["is_other"]]
    for topic in regular:
        phrases = list(topic["key_phrases"])
        if not 2 <= len(phrases) <= 5:
            problems.append(f"{topic['slug']}: {len(phrases)} key phrases")
        keys = []
        for phrase in phrases:
            words = phrase.lower().split()
            if not words or words[0] in STOPWORDS or words[-1] in STOPWORDS:
                problems.append(f"{topic['slug']}: stopword at the edge of {phrase!r}")
            key = phrase_key(phrase.lower())
            for other in keys:
                if set(key) <= set(other) or set(other) <= set(key):
                    problems.append(f"{topic['slug']}: near-duplicate phrases around {phrase!r}")
            keys.append(key)
            for other_key, other_slug in owners.items():
                if other_slug != topic["slug"] and (
                        set(key) <= set(other_key) or set(other_key) <= set(key)):
                    problems.append(f"{topic['slug']}: {phrase!r} overlaps a phrase of "
                                    f"{other_slug}")
                    break
            owners.setdefault(key, topic["slug"])
        # The key-phrase label (a stored topic's `label` may be an LLM's name).
        label = (topic.get("key_label") or topic["label"]).lower()
        if label in labels:
            problems.append(f"{topic['slug']}: same label as {labels[label]}")
        labels[label] = topic["slug"]
    return {"topics": len(regular), "problems": len(problems), "examples": problems[:20],
            "mean_phrases": round(float(np.mean([len(t["key_phrases"]) for t in regular])), 2)
            if regular else 0.0}


def simulate_state(plan: Mapping[str, Any], previous: Mapping[str, Any] | None,
                   first_new_id: int) -> dict[str, Any]:
    """What Store.topic_state() would return after writing this plan (without a store)."""
    ids: dict[Any, int] = {}
    next_id = first_new_id
    topics = []
    for topic in plan["topics"]:
        if topic["id"] is not None:
            ids[topic["key"]] = topic["id"]
        else:
            ids[topic["key"]] = next_id
            next_id += 1
        topics.append(dict(topic, id=ids[topic["key"]]))
    sections = [dict(s, id=i + 1, topic_ids=[ids[t["key"]] for t in plan["topics"]
                                             if t.get("section") == s["key"]])
                for i, s in enumerate(plan["sections"])]
    taken = set(previous["taken_slugs"]) if previous else set()
    taken |= {t["slug"] for t in topics}
    return {"topics": topics, "sections": sections, "taken_slugs": taken,
            "assignments": {pid: ids[key] for pid, key, _ in plan["assignments"]}}


def stability(
    paper_ids: Sequence[str], vectors: np.ndarray, texts: Mapping[str, tuple[str, str]],
    dates: Mapping[str, str | None], params: BuildParams, days: int = 7,
    on_progress: Say | None = None, threads: int = 1,
) -> dict[str, Any]:
    """Hold out the newest `days` of papers, build, add them back, rebuild (mapped onto the
    first build), and count the held-in papers that keep their topic."""
    say = on_progress or (lambda message: None)
    newest = max((d for d in dates.values() if d), default=None)
    if newest is None:
        raise TopicsError("papers have no dates; cannot hold out a week")
    cutoff = (date.fromisoformat(newest[:10]) - timedelta(days=days - 1)).isoformat()
    old_mask = np.array([(dates.get(pid) or "") < cutoff for pid in paper_ids])
    old_ids = [pid for pid, keep in zip(paper_ids, old_mask, strict=True) if keep]
    say(f"stability: build on {len(old_ids):,} papers before {cutoff}")
    started = time.perf_counter()
    first = plan_build(old_ids, vectors[old_mask], texts, None, params, threads=threads)
    first_seconds = time.perf_counter() - started
    state = simulate_state(first, None, first_new_id=1)
    say(f"stability: rebuild on {len(paper_ids):,} papers")
    started = time.perf_counter()
    second = plan_build(paper_ids, vectors, texts, state, params, threads=threads)
    second_seconds = time.perf_counter() - started
    after = simulate_state(second, state, first_new_id=10_000_000)["assignments"]
    before = state["assignments"]
    other_before = {t["id"] for t in state["topics"] if t["is_other"]}
    kept = sum(1 for pid in old_ids if after.get(pid) == before[pid])
    kept_topical = [pid for pid in old_ids if before[pid] not in other_before]
    kept_t = sum(1 for pid in kept_topical if after.get(pid) == before[pid])
    report = second["report"]
    return {
        "held_out_from": cutoff, "held_out": int((~old_mask).sum()), "papers": len(old_ids),
        "stability": round(kept / max(1, len(old_ids)), 4),
        "stability_excluding_other": round(kept_t / max(1, len(kept_topical)), 4),
        "topics_before": first["report"]["topics"], "topics_after": report["topics"],
        "kept_topics": report["kept"], "new_topics": len(report["new"]),
        "retired_topics": len(report["retired"]), "splits": len(report["splits"]),
        "merges": len(report["merges"]),
        "seconds": {"first_build": round(first_seconds, 1), "rebuild": round(second_seconds, 1)},
    }


def baseline_kmeans(vectors: np.ndarray, k: int = 50, seed: int = 0) -> np.ndarray:
    """The plain baseline: k-means with k=50 on the same embeddings, no "other"."""
    return KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(vectors)


def evaluate_topics(store: Store, settings: Settings, with_stability: bool = True,
                    with_baseline: bool = True, params: BuildParams | None = None,
                    on_progress: Say | None = None) -> dict[str, Any]:
    """`papersift eval topics`: measures the store's current topics (build them first)."""
    say = on_progress or (lambda message: None)
    params = params or BuildParams()
    topics = store.topics.list_topics()
    if not topics:
        raise TopicsError("no topics yet; run `papersift topics build` first")
    categories = store.papers.primary_categories()
    assigned = store.topics.topic_assignments()
    topic_of = [tid for _, tid, _ in assigned]
    cats = [categories.get(pid) for pid, _, _ in assigned]
    in_topic = [(tid, c) for (_, tid, other), c in zip(assigned, cats, strict=True) if not other]
    result: dict[str, Any] = {
        "papers": len(assigned),
        "topics": sum(1 for t in topics if not t["is_other"]),
        "sections": len(store.topics.list_sections()),
        "other_share": round(sum(1 for *_, o in assigned if o) / max(1, len(assigned)), 4),
        "vs_primary_category": agreement(topic_of, cats),
        "vs_primary_category_excluding_other": agreement(
            [t for t, _ in in_topic], [c for _, c in in_topic]),
        "labels": label_checks(topics),
    }
    if not (with_stability or with_baseline):
        return result
    model = model_id(settings, store)
    paper_ids, vectors = store.embeddings.embedding_matrix(model)
    with threadpool_limits(limits=max(1, int(settings.threads))):
        if with_baseline:
            say("baseline: k-means k=50")
            labels = baseline_kmeans(vectors)
            result["baseline_kmeans50"] = agreement(
                list(labels), [categories.get(pid) for pid in paper_ids])
        if with_stability:
            texts = store.topics.topic_texts(model)
            result["stability"] = stability(
                paper_ids, vectors, texts, store.papers.paper_dates(paper_ids), params,
                on_progress=say, threads=max(1, int(settings.threads)))
    return result


__all__ = ["OTHER_KEY", "agreement", "evaluate_topics", "label_checks", "stability"]
