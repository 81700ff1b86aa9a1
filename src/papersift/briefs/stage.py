"""The briefs stage: every topic's weekly brief, built again only where what it is made of
(the week's papers, the weeks before, the threads they belong to) changed; one week a commit."""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

from papersift.briefs.llm import LLMBriefWriter
from papersift.briefs.week import Writer, build_brief
from papersift.briefs.weeks import parse_week, week_of
from papersift.links.threads import Thread
from papersift.search.embed import model_id
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store

# Changes to how a brief is made, so that every brief is made again.
BRIEF_VERSION = "1"


def _input_hash(week: str, ids: Sequence[str], counts: Sequence[Any],
                threads: Mapping[str, Sequence[tuple[str, int]]], writer: str) -> str:
    text = json.dumps([BRIEF_VERSION, writer, week, sorted(ids), list(counts),
                       sorted((pid, sorted(threads.get(pid, ()))) for pid in ids)])
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def word_vectors(papers: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Unit vectors of the papers' words (title and abstract), for weeks without embeddings."""
    hashing = HashingVectorizer(n_features=2**12, stop_words="english", alternate_sign=False,
                                norm="l2")
    return hashing.transform([f"{p['title']}. {p['abstract']}" for p in papers]).toarray() \
        .astype(np.float32)


def store_threads(store: Store, ids: Sequence[str]) -> list[Thread]:
    """The threads these papers belong to, with all their members."""
    links = store.links
    thread_ids = sorted({t["id"] for found in links.threads_of_papers(ids).values()
                         for t in found})
    threads = []
    for thread_id in thread_ids:
        row = links.get_thread(thread_id)
        if row is not None:
            threads.append(Thread(row["id"], row["name"], row["origin_id"], row["day"], [
                {"paper": m["paper_id"], "day": m["day"], "role": m["role"], "score": m["score"]}
                for m in row["members"]]))
    return threads


class Briefs:
    """Build the briefs of `week` (YYYY-Www), or of every week with papers; a brief is built
    again only when its input hash changed (or with `redo`)."""

    name = "briefs"
    writer: Writer | None = None
    identity = "builtin"

    def __init__(self, week: str | None = None, redo: bool = False) -> None:
        if week is not None:
            parse_week(week)  # UsageError now, not halfway
        self.week, self.redo = week, redo

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        topics = store.topics.list_topics(include_other=False)
        if not topics:
            return Report(stage=self.name, details={"not_run": "no topics yet"})
        # The LLM writes when the summaries do (writer = llm and an endpoint); its briefs go
        # through the same rule as the built-in writer's.
        self.writer = LLMBriefWriter(settings) \
            if settings.writer == "llm" and settings.llm_url else None
        self.identity = self.writer.identity if self.writer else "builtin"
        try:
            return self._run(store, settings, topics, on_progress)
        finally:
            if self.writer is not None:
                self.writer.close()

    def _run(self, store: Store, settings: Settings, topics: list[dict[str, Any]],
             on_progress: OnProgress) -> Report:
        started = time.perf_counter()
        links = store.links
        weeks = [self.week] if self.week else sorted({week_of(d) for _, d in links.paper_days()})
        model = model_id(settings, store)
        counts = {"built": 0, "unchanged": 0, "weeks": 0}
        on_progress(Progress(self.name, 0, len(weeks), unit="weeks"))
        for n, week in enumerate(weeks, 1):
            built, same = self._week(store, topics, week, model)
            counts["built"] += built
            counts["unchanged"] += same
            counts["weeks"] += 1
            on_progress(Progress(self.name, n, len(weeks), week, unit="weeks"))
        return Report(stage=self.name, counts=counts, seconds=time.perf_counter() - started,
                      details={"model": model, "writer": self.identity,
                               "writer_failures": getattr(self.writer, "failures", 0)})

    def _week(self, store: Store, topics: Sequence[dict[str, Any]], week: str, model: str
              ) -> tuple[int, int]:
        """(briefs built, unchanged) of one week, committed together."""
        links = store.links
        monday, sunday = parse_week(week)
        rows = links.brief_inputs((monday - timedelta(days=28)).isoformat(), sunday.isoformat())
        by_topic: dict[int, list[tuple[str, str]]] = defaultdict(list)
        for pid, topic_id, day in rows:
            by_topic[topic_id].append((pid, day))
        week_ids = [pid for pid, _, day in rows if week_of(day) == week]
        membership = {pid: [(t["id"], t["size"]) for t in found]
                      for pid, found in links.threads_of_papers(week_ids).items()}
        stored = links.brief_hashes(week)
        todo: dict[int, str] = {}
        live = []
        for topic in topics:
            mine = by_topic.get(topic["id"], [])
            ids = [pid for pid, day in mine if week_of(day) == week]
            if not ids:
                continue
            live.append(topic["id"])
            per_week = defaultdict(int)
            for _, day in mine:
                per_week[week_of(day)] += 1
            digest = _input_hash(week, ids, sorted(per_week.items()), membership,
                                 self.identity)
            if self.redo or stored.get(topic["id"]) != digest:
                todo[topic["id"]] = digest
        briefs = self._build(store, topics, week, by_topic, todo, model) if todo else []
        if briefs or set(stored) - set(live):
            links.put_briefs(week, briefs, keep=live)
        return len(briefs), len(live) - len(briefs)

    def _build(self, store: Store, topics: Sequence[dict[str, Any]], week: str,
               by_topic: Mapping[int, list[tuple[str, str]]], todo: Mapping[int, str],
               model: str) -> list[dict[str, Any]]:
        week_ids = sorted({pid for t in todo for pid, day in by_topic[t] if week_of(day) == week})
        full = {p["id"]: p for p in store.papers.iter_papers(ids=week_ids)}
        for paper in full.values():
            paper["announced"] = str(paper.get("announced") or paper.get("sort_date"))[:10]
        ids, matrix = store.embeddings.embedding_matrix(model, week_ids)
        if len(ids) < len(full):
            # The embed stage has not reached every paper of the week: the whole week is
            # grouped by its words instead (one space for all, never two mixed).
            ids, matrix = list(full), word_vectors([full[pid] for pid in full])
        rows = dict(zip(ids, np.asarray(matrix, np.float32), strict=True))
        dim = matrix.shape[1] if len(ids) else 384

        def vectors(wanted: Sequence[str]) -> np.ndarray:
            zero = np.zeros(dim, np.float32)
            return np.stack([rows.get(pid, zero) for pid in wanted])

        threads = store_threads(store, week_ids)
        out = []
        for topic in topics:
            if topic["id"] not in todo:
                continue
            papers = [full.get(pid) or {"id": pid, "announced": day}
                      for pid, day in by_topic[topic["id"]]
                      if week_of(day) != week or pid in full]
            brief = build_brief(topic, week, papers, vectors, threads, self.writer)
            out.append({"topic": topic["id"], "payload": brief, "input_hash": todo[topic["id"]],
                        "writer": brief["brief"]["writer"]})
        return out
