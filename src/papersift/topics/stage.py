"""The topics stage: a full rebuild (topics.plan) or cheap assignment of new papers to the nearest topic."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from papersift.errors import PapersiftError
from papersift.plugins import plugins
from papersift.search.embed import model_id
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store
from papersift.topics.assign import CHUNK, assign_job
from papersift.topics.cluster import EXACT_BLOCK
from papersift.topics.naming import name_topics
from papersift.topics.plan import BuildParams, plan_build

# A store whose last build is older than this is rebuilt by the pipeline (else assigned).
REBUILD_AFTER = timedelta(days=7)


class TopicsError(PapersiftError):
    """The topics stage cannot run (no embeddings, no topics yet)."""


def _space(params: Mapping[str, Any]) -> tuple[int, float]:
    """What decides the space centroids live in: (neighbours, smoothing); (0, 0.0) is raw."""
    neighbours, weight = int(params.get("neighbours", 0)), float(params.get("smoothing", 0.0))
    return (neighbours, weight) if neighbours > 0 and weight > 0 else (0, 0.0)


class BuildTopics:
    """Re-cluster every embedded paper and replace the topics, keeping the ids and slugs of
    topics that stay substantially the same (then name them with the LLM if one is set)."""

    name = "topics"

    def __init__(self, params: BuildParams | None = None) -> None:
        self.params = params or BuildParams()

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        steps = [0]
        # read, smooth, cluster, label, write (and name): a bar of steps, not a spinner.
        planned = [5 + bool(settings.llm_url)]

        def say(message: str) -> None:
            steps[0] += 1
            planned[0] = max(planned[0], steps[0])
            on_progress(Progress(self.name, steps[0] - 1, planned[0], message, unit="steps"))

        started = time.perf_counter()
        model = model_id(settings, store)
        say(f"reading embeddings ({model})")
        paper_ids, vectors = store.embeddings.embedding_matrix(model)
        if not paper_ids:
            raise TopicsError(
                f"no embeddings of model {model!r} in the store; run `papersift embed`")
        params = self._params(store, say)
        threads = max(1, int(settings.threads))
        with threadpool_limits(limits=threads):
            plan = plan_build(paper_ids, vectors, store.topics.topic_texts(model),
                              store.topics.topic_state(), params, on_progress=say,
                              threads=threads)
        say("writing topics")
        plan["params"]["model"] = model
        written = store.topics.replace_topics(plan)
        details = dict(plan["report"], action="build", build_id=written["build_id"],
                       model=model)
        if settings.llm_url:
            say("naming topics with the LLM")
            details["naming"] = name_topics(store, settings)
        on_progress(Progress(self.name, planned[0], planned[0], "done", unit="steps"))
        return Report(stage=self.name, seconds=time.perf_counter() - started,
                      counts={key: details[key] for key in ("topics", "sections", "papers",
                                                            "other", "kept")},
                      details=details)

    def _params(self, store: Store, say: Callable[[str], None]) -> BuildParams:
        last = store.topics.latest_topic_build()
        if (last is not None and self.params.warm_start
                and _space(last["params"]) != _space(asdict(self.params))):
            # The previous centroids live in another space (raw vectors, or other smoothing):
            # start k-means afresh; ids and slugs are still mapped by membership overlap.
            say("previous topics were clustered differently: clustering afresh")
            return replace(self.params, warm_start=False)
        return self.params


class AssignTopics:
    """Give every embedded paper without a topic the nearest topic (or "other" when it is not
    similar enough to any), without re-clustering.

    A paper is smoothed as the build smoothed its papers (with its nearest embedded papers),
    so it is compared with the centroids in their own space. The new papers go in chunks
    through an engine (`engine`, else the topics_engine setting: this process, or Ray
    actors), each chunk written as it comes back: a run killed midway keeps what it wrote
    and the next assigns the rest; a chunk run twice is written once, by paper id.
    """

    name = "topics"

    def __init__(self, engine: str | None = None, chunk: int = CHUNK) -> None:
        if chunk <= 0 or chunk % EXACT_BLOCK:
            raise ValueError(f"chunk must be a positive multiple of {EXACT_BLOCK}")
        self.engine = engine
        self.chunk = chunk

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        started = time.perf_counter()
        model = model_id(settings, store)
        topic_ids, centroids, other_id = store.topics.topic_centroids()
        build = store.topics.latest_topic_build()
        if build is None or other_id is None:
            raise TopicsError("no topics yet; run `papersift topics build` first")
        engine = plugins().engines.get(self.engine or settings.topics_engine)
        # The whole matrix is read once: it gives the new papers' vectors and their neighbours.
        paper_ids, corpus = store.embeddings.embedding_matrix(model)
        assigned = store.topics.assigned_paper_ids()
        rows = np.asarray([i for i, pid in enumerate(paper_ids) if pid not in assigned],
                          dtype=np.int64)
        on_progress(Progress(self.name, 0, len(rows)))
        threshold = float(build["params"].get("other_similarity", BuildParams.other_similarity))
        done = to_other = 0
        if len(rows):  # (nothing new: no engine to start, no graph to build)
            job = assign_job(settings, corpus, len(rows), centroids,
                             (*_space(build["params"]), int(build["params"].get("seed", 0))))
            chunks = (rows[start:start + self.chunk] for start in range(0, len(rows), self.chunk))
            for chunk, (index, cosine) in engine.run(settings, job, chunks):
                written = [(paper_ids[row], topic_ids[i] if len(topic_ids) and sim >= threshold
                            else other_id, float(sim))
                           for row, i, sim in zip(chunk, index, cosine, strict=True)]
                store.topics.assign_papers(written)
                done += len(written)
                to_other += sum(1 for _, tid, _ in written if tid == other_id)
                on_progress(Progress(self.name, done, len(rows)))
        seconds = time.perf_counter() - started
        return Report(stage=self.name, seconds=seconds,
                      counts={"assigned": done, "to_other": to_other},
                      details={"action": "assign", "model": model, "engine": engine.name,
                               "per_second": round(done / seconds, 1) if done and seconds
                               else None})


class Topics:
    """What the pipeline runs: a rebuild when there are no topics yet or the last build is
    older than REBUILD_AFTER, else the assignment of new papers (through `engine`, else the
    topics_engine setting)."""

    name = "topics"

    def __init__(self, engine: str | None = None) -> None:
        self.engine = engine

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        stage = BuildTopics() if needs_build(store) else AssignTopics(engine=self.engine)
        return stage.run(store, settings, on_progress)


def needs_build(store: Store) -> bool:
    if not store.topics.has_topics():
        return True
    last = store.topics.latest_topic_build()
    if last is None:
        return True
    built = datetime.fromisoformat(last["created_at"].replace("Z", "+00:00"))
    if built.tzinfo is None:
        built = built.replace(tzinfo=UTC)
    return datetime.now(UTC) - built > REBUILD_AFTER
