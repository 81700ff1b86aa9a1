"""The topics stage: full rebuild (cluster, label, group, map onto the previous topics) and
cheap incremental assignment of new papers to the nearest topic."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from papersift.settings import Settings
from papersift.topics.cluster import choose_k, cluster, nearest, normalize, smooth
from papersift.topics.phrases import choose_labels, class_tfidf, doc_terms, surface_forms
from papersift.topics.sections import choose_sections, group_sections, section_label
from papersift.topics.stability import map_clusters, map_sections, unique_slug

STAGE_VERSION = "topics-2"
FALLBACK_MODEL_ID = "local:all-MiniLM-L6-v2:int8"
OTHER_KEY = "other"
OTHER_SLUG = "other"
OTHER_LABEL = "Other papers"
_LABEL_PHRASES = 3
_SURFACE_SAMPLE = 300

Progress = Callable[[str], None]


class TopicsError(RuntimeError):
    """The topics stage cannot run (no embeddings, no topics yet)."""


@dataclass(frozen=True)
class BuildParams:
    """What shapes a build; recorded with it in topic_builds.params."""

    # Each paper is clustered as normalize(x + smoothing * mean of its `neighbours` nearest
    # papers): +0.008 NMI against categories at the same k, on every seed (docs/benchmarks.md).
    neighbours: int = 10
    smoothing: float = 1.0
    # Measured (docs/benchmarks.md, Topics): NMI against categories falls as topics get finer;
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


def model_id(settings: Settings, store: Any | None = None) -> str:
    """The embedder identity whose vectors the stage reads.

    Read from the store when it settles the question (one model, or one matching the
    configured embedder kind), since building the local embedder to ask it means loading
    and possibly exporting the ONNX model; otherwise ask the search stage's embedder.
    """
    kind_prefix = {"local": "local:", "sentence-transformers": "st:",
                   "openai": f"openai:{settings.embed_model}"}.get(settings.embedder, "")
    if store is not None:
        models = list(store.embedding_models())
        if not models:  # nothing to read whichever model it is: don't load one to ask
            return FALLBACK_MODEL_ID
        if len(models) == 1:
            return models[0]
        matching = [m for m in models if kind_prefix and m.startswith(kind_prefix)]
        if len(matching) == 1:
            return matching[0]
    try:
        from papersift.search import default_embedder
    except ImportError:
        return FALLBACK_MODEL_ID
    return str(default_embedder(settings).model_id)


def paper_text(title: str, abstract: str) -> str:
    return f"{title}. {abstract}"


def plan_build(
    paper_ids: Sequence[str],
    vectors: np.ndarray,
    texts: Mapping[str, tuple[str, str]],
    previous: Mapping[str, Any] | None,
    params: BuildParams,
    on_progress: Progress | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """Everything a rebuild writes (the `build` of Store.replace_topics), computed in memory.

    previous is Store.topic_state() (or its in-memory equivalent), or None for a first build.
    Centroids, similarities and the "other" rule are in the space of the smoothed vectors.
    """
    say = on_progress or (lambda message: None)
    timings: dict[str, float] = {}
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
    labels, centroids = clustering.labels, clustering.centroids
    n_topics = len(centroids)
    old_assignment = previous["assignments"] if previous else {}
    mapping = map_clusters(paper_ids, labels, old_assignment, [t["id"] for t in old_regular])
    moved_back = 0
    if params.stickiness > 0 and old_assignment:
        labels, similarity, moved_back = _stick(
            paper_ids, vectors, labels, clustering.similarity, centroids, old_assignment,
            {old: c for c, old in mapping.kept.items()},
            {t["id"] for t in old_topics if t["is_other"]}, params)
        clustering.labels, clustering.similarity = labels, similarity
    timings["cluster"] = time.perf_counter() - clock - timings.get("smooth", 0.0)

    clock = time.perf_counter()
    say(f"labelling {n_topics} topics")
    ordered_texts = [paper_text(*texts[pid]) for pid in paper_ids]
    terms = doc_terms(ordered_texts)
    scores = class_tfidf(terms, labels, n_topics)
    phrases = choose_labels(scores, terms.terms, truncated=terms.truncated())
    phrases = _display_forms(phrases, labels, clustering.similarity, ordered_texts)
    timings["label"] = time.perf_counter() - clock

    clock = time.perf_counter()
    old_by_id = {t["id"]: t for t in old_topics}
    taken = set(previous["taken_slugs"]) if previous else set()
    sizes = np.bincount(labels[labels >= 0], minlength=n_topics)
    topics: list[dict[str, Any]] = []
    slugs: dict[Any, str] = {}
    for c in range(n_topics):
        old = old_by_id.get(mapping.kept.get(c, -1))
        slug = old["slug"] if old else unique_slug(phrases[c] or [f"topic {c}"], taken)
        slugs[c] = slug
        topics.append({
            "key": c, "id": old["id"] if old else None, "slug": slug,
            "label": ", ".join(phrases[c][:_LABEL_PHRASES]) or slug.replace("-", " "),
            "key_phrases": phrases[c], "llm_label": old["llm_label"] if old and (
                old["key_phrases"] == phrases[c]) else None,
            "is_other": False, "centroid": centroids[c], "size": int(sizes[c]),
        })
    old_other = next((t for t in old_topics if t["is_other"]), None)
    other_slug = old_other["slug"] if old_other else unique_slug([OTHER_SLUG], taken)
    slugs[OTHER_KEY] = other_slug
    topics.append({"key": OTHER_KEY, "id": old_other["id"] if old_other else None,
                   "slug": other_slug, "label": OTHER_LABEL, "key_phrases": [],
                   "llm_label": None, "is_other": True, "centroid": None,
                   "size": int((labels < 0).sum())})

    sections = _sections(centroids, sizes, phrases, topics, previous, params)
    section_of = {c: s["key"] for s in sections for c in s["members"]}
    for topic in topics:
        topic["section"] = section_of.get(topic["key"])
    timings["map"] = time.perf_counter() - clock

    retired = [dict(r, redirect_to=OTHER_KEY if r["redirect_to"] is None else r["redirect_to"])
               for r in mapping.retired]
    old_slug = {t["id"]: t["slug"] for t in old_topics}
    report = {
        "topics": n_topics, "sections": len(sections), "papers": len(paper_ids),
        "other": int((labels < 0).sum()),
        "other_share": round(float((labels < 0).mean()), 4) if len(labels) else 0.0,
        "kept": len(mapping.kept),
        "new": sorted(slugs[c] for c in range(n_topics) if c not in mapping.kept),
        "retired": {old_slug[r["id"]]: {"to": slugs[r["redirect_to"]], "reason": r["reason"]}
                    for r in retired},
        "splits": {old_slug[o]: [slugs[c] for c in cs] for o, cs in mapping.splits.items()},
        "merges": {slugs[c]: [old_slug[o] for o in os] for c, os in mapping.merges.items()},
        "kmeans_iterations": clustering.iterations, "warm_start": warm is not None,
        "kept_by_stickiness": moved_back,
        "seconds": {name: round(value, 2) for name, value in timings.items()},
    }
    return {
        "method": "knn-smoothed-spherical-kmeans+other" if params.neighbours > 0
        else "spherical-kmeans+other",
        "params": asdict(params) | {"k": k, "stage_version": STAGE_VERSION},
        "n_papers": len(paper_ids),
        "report": report,
        "sections": [{k: v for k, v in s.items() if k != "members"} for s in sections],
        "topics": topics,
        "retired": retired,
        "assignments": [
            (pid, int(label) if label >= 0 else OTHER_KEY, float(sim))
            for pid, label, sim in zip(paper_ids, labels, clustering.similarity, strict=True)
        ],
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


def build_topics(store: Any, settings: Settings, on_progress: Progress | None = None,
                 params: BuildParams | None = None) -> dict[str, Any]:
    """Re-cluster every embedded paper and replace the topics, keeping ids and slugs of topics
    that stay substantially the same. Returns the build report."""
    params = params or BuildParams()
    say = on_progress or (lambda message: None)
    started = time.perf_counter()
    model = model_id(settings, store)
    say(f"reading embeddings ({model})")
    paper_ids, vectors = store.embedding_matrix(model)
    if not paper_ids:
        raise TopicsError(f"no embeddings of model {model!r} in the store; run `papersift embed`")
    texts = store.topic_texts(model)
    previous = store.topic_state()
    last = store.latest_topic_build()
    if last is not None and params.warm_start and _space(last["params"]) != _space(asdict(params)):
        # The previous centroids live in another space (raw vectors, or other smoothing):
        # start k-means afresh; ids and slugs are still mapped by membership overlap.
        say("previous topics were clustered differently: clustering afresh")
        params = replace(params, warm_start=False)
    with threadpool_limits(limits=max(1, int(settings.threads))):
        plan = plan_build(paper_ids, vectors, texts, previous, params, on_progress=say,
                          threads=max(1, int(settings.threads)))
    say("writing topics")
    plan["params"]["model"] = model
    written = store.replace_topics(plan)
    report = dict(plan["report"], build_id=written["build_id"], model=model,
                  seconds_total=round(time.perf_counter() - started, 2))
    if getattr(settings, "llm_url", ""):
        from papersift.topics.naming import name_topics

        say("naming topics with the LLM")
        report["naming"] = name_topics(store, settings)
    return report


def _space(params: Mapping[str, Any]) -> tuple[int, float]:
    """What decides the space centroids live in: (neighbours, smoothing); (0, 0.0) is raw."""
    neighbours, weight = int(params.get("neighbours", 0)), float(params.get("smoothing", 0.0))
    return (neighbours, weight) if neighbours > 0 and weight > 0 else (0, 0.0)


def assign_topics(store: Any, settings: Settings) -> dict[str, Any]:
    """Give every embedded paper without a topic the nearest topic (or "other" when it is not
    similar enough to any), without re-clustering.

    A paper is smoothed as the build smoothed its papers (with its nearest embedded papers),
    so it is compared with the centroids in their own space.
    """
    started = time.perf_counter()
    model = model_id(settings, store)
    topic_ids, centroids, other_id = store.topic_centroids()
    build = store.latest_topic_build()
    if build is None or other_id is None:
        raise TopicsError("no topics yet; run `papersift topics build` first")
    params = build["params"]
    threshold = float(params.get("other_similarity", BuildParams.other_similarity))
    # Builds before smoothing existed recorded no `neighbours`: their centroids are raw.
    k, weight = _space(params)
    threads = max(1, int(settings.threads))
    # The whole matrix is read once: it gives the new papers' vectors and their neighbours.
    paper_ids, corpus = store.embedding_matrix(model)
    assigned = store.assigned_paper_ids()
    rows = np.asarray([i for i, pid in enumerate(paper_ids) if pid not in assigned],
                      dtype=np.int64)
    new_ids = [paper_ids[i] for i in rows]
    if not new_ids:
        return {"assigned": 0, "to_other": 0, "seconds": round(time.perf_counter() - started, 3)}
    with threadpool_limits(limits=threads):
        # Embedders store unit vectors; checking is ~10x cheaper than normalizing again.
        if not np.allclose(np.einsum("ij,ij->i", corpus, corpus), 1.0, atol=1e-3):
            corpus = normalize(corpus)
        vectors = smooth(corpus, rows, k=k, weight=weight, seed=int(params.get("seed", 0)),
                         threads=threads)
        if len(topic_ids):
            index, cosine = nearest(vectors, centroids)
        else:
            index, cosine = np.zeros(len(new_ids), np.int64), np.zeros(len(new_ids), np.float32)
    rows_out = [
        (pid, topic_ids[i] if len(topic_ids) and sim >= threshold else other_id, float(sim))
        for pid, i, sim in zip(new_ids, index, cosine, strict=True)
    ]
    store.assign_papers(rows_out)
    to_other = sum(1 for _, tid, _ in rows_out if tid == other_id)
    return {"assigned": len(rows_out), "to_other": to_other, "model": model,
            "seconds": round(time.perf_counter() - started, 3)}
