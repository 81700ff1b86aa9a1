"""A topic rebuild computed in memory: smooth, cluster, label, group into sections, map onto the previous topics."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from papersift.topics.cluster import choose_k, cluster, normalize, smooth
from papersift.topics.phrases import choose_labels, class_tfidf, doc_terms, surface_forms
from papersift.topics.sections import choose_sections, group_sections, section_label
from papersift.topics.stability import map_clusters, map_sections, unique_slug

STAGE_VERSION = "topics-2"
OTHER_KEY = "other"
OTHER_SLUG = "other"
OTHER_LABEL = "Other papers"
_LABEL_PHRASES = 3
_SURFACE_SAMPLE = 300

Say = Callable[[str], None]  # what a build says it is doing


@dataclass(frozen=True)
class BuildParams:
    """What shapes a build; recorded with it in topic_builds.params."""

    # Each paper is clustered as normalize(x + smoothing * mean of its `neighbours` nearest
    # papers): +0.008 NMI against categories at the same k, on every seed (docs/benchmark-log.md).
    neighbours: int = 10
    smoothing: float = 1.0
    # Measured (docs/benchmark-log.md, Topics): NMI against categories falls as topics get finer;
    # ~45 topics at 98,742 papers beat the k=50 baseline on seeds 0-2 (k=40 lost on seed 0).
    papers_per_topic: int = 2200
    # Cosine (of the smoothed vectors) to the nearest centroid below which a paper fits no
    # topic and goes to "other" (0.7% of the recent corpus). Each 1% moved to "other" costs
    # ~0.002 NMI: 0.55 (1.7%) fell below the baseline on seed 1.
    other_similarity: float = 0.50
    min_topic_size: int = 12
    max_topics: int = 400
    sections: int = 0          # 0: choose from the number of topics
    seed: int = 0
    warm_start: bool = True    # start k-means from the previous build's centroids
    max_iter: int = 100
    # From the previous centroids k-means needs few steps; stopping early keeps topics put.
    warm_max_iter: int = 30
    # A paper stays in its previous topic (or in "other") unless the new best fit is better by
    # more than this cosine margin: hysteresis against papers flipping between near-equal
    # topics on every rebuild.
    stickiness: float = 0.03


def paper_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract}"


def plan_build(
    paper_ids: Sequence[str],
    vectors: np.ndarray,
    texts: Mapping[str, tuple[str, str]],
    previous: Mapping[str, Any] | None,
    params: BuildParams,
    on_progress: Say | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """Everything a rebuild writes (the `build` of store.topics.Topics.replace_topics), in memory.

    previous is Topics.topic_state() (or its in-memory equivalent), or None for a
    first build. Centroids, similarities and the "other" rule are in the space of the
    smoothed vectors.
    """
    say = on_progress or (lambda message: None)
    timings: dict[str, float] = {}
    grouping = _group(paper_ids, vectors, previous, params, say, threads, timings)
    clock = time.perf_counter()
    say(f"labelling {len(grouping.centroids)} topics")
    phrases = _labels(paper_ids, texts, grouping)
    timings["label"] = time.perf_counter() - clock
    clock = time.perf_counter()
    topics, slugs = _topics(grouping, phrases, previous)
    sections = _sections(grouping.centroids, grouping.sizes, phrases, topics, previous, params)
    section_of = {c: s["key"] for s in sections for c in s["members"]}
    for topic in topics:
        topic["section"] = section_of.get(topic["key"])
    timings["map"] = time.perf_counter() - clock
    retired = [dict(r, redirect_to=OTHER_KEY if r["redirect_to"] is None else r["redirect_to"])
               for r in grouping.mapping.retired]
    return {
        "method": "knn-smoothed-spherical-kmeans+other" if params.neighbours > 0
        else "spherical-kmeans+other",
        "params": asdict(params) | {"k": grouping.k, "stage_version": STAGE_VERSION},
        "n_papers": len(paper_ids),
        "report": _plan_report(grouping, sections, slugs, retired, timings),
        "sections": [{k: v for k, v in s.items() if k != "members"} for s in sections],
        "topics": topics,
        "retired": retired,
        "assignments": [
            (pid, int(label) if label >= 0 else OTHER_KEY, float(sim))
            for pid, label, sim in zip(paper_ids, grouping.labels, grouping.similarity,
                                       strict=True)
        ],
    }


@dataclass
class _Grouping:
    """The papers' clusters after smoothing, k-means, mapping onto old topics and stickiness."""

    k: int
    labels: np.ndarray  # cluster of each paper, -1 for "other"
    similarity: np.ndarray  # cosine to its cluster's centroid
    centroids: np.ndarray
    mapping: Any  # stability.Mapping of clusters onto the previous topics
    old_topics: list[dict[str, Any]]
    iterations: int
    warm_start: bool
    kept_by_stickiness: int

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.labels[self.labels >= 0], minlength=len(self.centroids))


def _group(paper_ids: Sequence[str], vectors: np.ndarray, previous: Mapping[str, Any] | None,
           params: BuildParams, say: Say, threads: int, timings: dict[str, float]) -> _Grouping:
    clock = time.perf_counter()
    vectors = normalize(np.asarray(vectors, dtype=np.float32))
    old_topics = list(previous["topics"]) if previous else []
    # Largest first: when fewer topics are wanted than there were, the big ones seed k-means.
    old_regular = sorted(
        (t for t in old_topics if not t["is_other"] and t["centroid"] is not None
         and len(t["centroid"]) == vectors.shape[1]),
        key=lambda t: (-int(t.get("size") or 0), t["id"]))
    warm = np.vstack([t["centroid"] for t in old_regular]) if (
        params.warm_start and old_regular) else None
    k = choose_k(len(paper_ids), params.papers_per_topic, params.min_topic_size,
                 max_k=params.max_topics)
    if params.neighbours > 0:
        say(f"smoothing each paper with its {params.neighbours} nearest papers")
        vectors = smooth(vectors, k=params.neighbours, weight=params.smoothing,
                         seed=params.seed, threads=threads)
        timings["smooth"] = time.perf_counter() - clock
    say(f"clustering {len(paper_ids):,} papers into up to {k} topics")
    clustering = cluster(vectors, k, params.other_similarity, params.min_topic_size,
                         previous=warm, seed=params.seed,
                         max_iter=params.max_iter if warm is None else params.warm_max_iter)
    old_assignment = previous["assignments"] if previous else {}
    mapping = map_clusters(paper_ids, clustering.labels, old_assignment,
                           [t["id"] for t in old_regular])
    labels, similarity, moved_back = clustering.labels, clustering.similarity, 0
    if params.stickiness > 0 and old_assignment:
        labels, similarity, moved_back = _stick(
            paper_ids, vectors, labels, similarity, clustering.centroids, old_assignment,
            {old: c for c, old in mapping.kept.items()},
            {t["id"] for t in old_topics if t["is_other"]}, params)
    timings["cluster"] = time.perf_counter() - clock - timings.get("smooth", 0.0)
    return _Grouping(k=k, labels=labels, similarity=similarity,
                     centroids=clustering.centroids, mapping=mapping, old_topics=old_topics,
                     iterations=clustering.iterations, warm_start=warm is not None,
                     kept_by_stickiness=moved_back)


def _labels(paper_ids: Sequence[str], texts: Mapping[str, tuple[str, str]],
            grouping: _Grouping) -> list[list[str]]:
    """Each cluster's key phrases, as its papers write them."""
    ordered_texts = [paper_text(*texts[pid]) for pid in paper_ids]
    terms = doc_terms(ordered_texts)
    scores = class_tfidf(terms, grouping.labels, len(grouping.centroids))
    phrases = choose_labels(scores, terms.terms, truncated=terms.truncated())
    return _display_forms(phrases, grouping.labels, grouping.similarity, ordered_texts)


def _topics(grouping: _Grouping, phrases: list[list[str]], previous: Mapping[str, Any] | None
            ) -> tuple[list[dict[str, Any]], dict[Any, str]]:
    """The topics to write (clusters, then "other"), keeping the ids and slugs of old ones."""
    old_by_id = {t["id"]: t for t in grouping.old_topics}
    taken = set(previous["taken_slugs"]) if previous else set()
    sizes = grouping.sizes
    topics: list[dict[str, Any]] = []
    slugs: dict[Any, str] = {}
    for c in range(len(grouping.centroids)):
        old = old_by_id.get(grouping.mapping.kept.get(c, -1))
        slug = old["slug"] if old else unique_slug(phrases[c] or [f"topic {c}"], taken)
        slugs[c] = slug
        topics.append({
            "key": c, "id": old["id"] if old else None, "slug": slug,
            "label": ", ".join(phrases[c][:_LABEL_PHRASES]) or slug.replace("-", " "),
            "key_phrases": phrases[c], "llm_label": old["llm_label"] if old and (
                old["key_phrases"] == phrases[c]) else None,
            "is_other": False, "centroid": grouping.centroids[c], "size": int(sizes[c]),
        })
    old_other = next((t for t in grouping.old_topics if t["is_other"]), None)
    other_slug = old_other["slug"] if old_other else unique_slug([OTHER_SLUG], taken)
    slugs[OTHER_KEY] = other_slug
    topics.append({"key": OTHER_KEY, "id": old_other["id"] if old_other else None,
                   "slug": other_slug, "label": OTHER_LABEL, "key_phrases": [],
                   "llm_label": None, "is_other": True, "centroid": None,
                   "size": int((grouping.labels < 0).sum())})
    return topics, slugs


def _plan_report(grouping: _Grouping, sections: list[dict[str, Any]], slugs: dict[Any, str],
                 retired: list[dict[str, Any]], timings: dict[str, float]) -> dict[str, Any]:
    labels, mapping = grouping.labels, grouping.mapping
    n_topics = len(grouping.centroids)
    old_slug = {t["id"]: t["slug"] for t in grouping.old_topics}
    return {
        "topics": n_topics, "sections": len(sections), "papers": len(labels),
        "other": int((labels < 0).sum()),
        "other_share": round(float((labels < 0).mean()), 4) if len(labels) else 0.0,
        "kept": len(mapping.kept),
        "new": sorted(slugs[c] for c in range(n_topics) if c not in mapping.kept),
        "retired": {old_slug[r["id"]]: {"to": slugs[r["redirect_to"]], "reason": r["reason"]}
                    for r in retired},
        "splits": {old_slug[o]: [slugs[c] for c in cs] for o, cs in mapping.splits.items()},
        "merges": {slugs[c]: [old_slug[o] for o in os] for c, os in mapping.merges.items()},
        "kmeans_iterations": grouping.iterations, "warm_start": grouping.warm_start,
        "kept_by_stickiness": grouping.kept_by_stickiness,
        "seconds": {name: round(value, 2) for name, value in timings.items()},
    }


def _stick(
    paper_ids: Sequence[str], vectors: np.ndarray, labels: np.ndarray, similarity: np.ndarray,
    centroids: np.ndarray, old_assignment: Mapping[str, int], kept: Mapping[int, int],
    old_other: set[int], params: BuildParams,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Keep papers where they were when the rebuild's preference is marginal."""
    labels, similarity = labels.copy(), similarity.copy()
    rows, targets = [], []
    for i, pid in enumerate(paper_ids):
        old = old_assignment.get(pid)
        if old is None:
            continue
        if old in old_other:
            # Previously fitting nothing: still "other" unless now clearly fitting a topic.
            if labels[i] >= 0 and similarity[i] < params.other_similarity + params.stickiness:
                labels[i] = -1
            continue
        cluster_of_old = kept.get(old)
        if cluster_of_old is not None and labels[i] != cluster_of_old:
            rows.append(i)
            targets.append(cluster_of_old)
    moved = 0
    if rows:
        index = np.asarray(rows)
        target = np.asarray(targets)
        fit = np.einsum("ij,ij->i", vectors[index], centroids[target])
        stay = (fit >= similarity[index] - params.stickiness) & (
            fit >= params.other_similarity - params.stickiness)
        labels[index[stay]] = target[stay]
        similarity[index[stay]] = fit[stay]
        moved = int(stay.sum())
    return labels, similarity, moved


def _display_forms(phrases: list[list[str]], labels: np.ndarray, similarity: np.ndarray,
                   texts: Sequence[str]) -> list[list[str]]:
    """Key phrases as their topic's papers write them ("LLMs", not "llms")."""
    shown = []
    for c, topic_phrases in enumerate(phrases):
        members = np.flatnonzero(labels == c)
        nearest_first = members[np.argsort(-similarity[members], kind="stable")][:_SURFACE_SAMPLE]
        forms = surface_forms(topic_phrases, [texts[i] for i in nearest_first])
        shown.append([forms[p] for p in topic_phrases])
    return shown


def _sections(centroids: np.ndarray, sizes: np.ndarray, phrases: list[list[str]],
              topics: list[dict[str, Any]], previous: Mapping[str, Any] | None,
              params: BuildParams) -> list[dict[str, Any]]:
    n_sections = params.sections or choose_sections(len(centroids))
    groups = group_sections(centroids, n_sections)
    groups = [sorted(g, key=lambda c: (-sizes[c], c)) for g in groups]
    groups.sort(key=lambda g: (-int(sizes[g].sum()), g[0]))
    old_sections = list(previous["sections"]) if previous else []
    topic_ids = [[topics[c]["id"] for c in g if topics[c]["id"] is not None] for g in groups]
    matched = map_sections(topic_ids, old_sections, {
        t["id"]: t["size"] for t in topics if t["id"] is not None})
    # Section slugs need only be unique among sections (they live under their own path).
    used = {matched[i]["slug"] for i in matched}
    sections = []
    for i, group in enumerate(groups):
        leads = [phrases[c][0] for c in group if phrases[c]]
        # A section of one or two topics is named by more of their phrases ("Channel,
        # communication, wireless" rather than "Channel").
        more = [p for rank in range(1, 5) for c in group for p in phrases[c][rank:rank + 1]]
        label = section_label(leads + more if len(leads) < 3 else leads)
        slug = matched[i]["slug"] if i in matched else unique_slug(leads[:2] or ["section"], used)
        sections.append({"key": f"s{i}", "slug": slug, "label": label, "position": i,
                         "members": group})
    return sections
