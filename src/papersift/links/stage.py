"""The links stage: new papers read a few days at a time and linked to earlier artefacts, each
batch of days committed, then the threads those links touch built again."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from papersift.links.linker import (
    Artefact,
    Link,
    LinkParams,
    LinkResult,
    LinkState,
    Paper,
    read_paper,
    update,
)
from papersift.links.names import Coined
from papersift.links.stoplist import learn_old_names
from papersift.links.threads import Corpus, ThreadParams, build_threads
from papersift.search.embed import default_embedder, embedding_text, model_id, text_hash
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store

# Papers a committed batch holds at most (whole days: a day is never split).
BATCH_PAPERS = 4000
DIM = 384


def state_from(saved: dict[str, Any]) -> LinkState:
    """The linker's state as store.links.link_state() keeps it (origin vectors are fetched
    again as decisions need them)."""
    state = LinkState()
    for name, origin, day, categories, how, risky in saved["artefacts"]:
        state.artefacts.setdefault(name, []).append(
            Artefact(name, origin, day, tuple(categories), how, bool(risky)))
    counts = saved["counts"]
    state.refs = dict(counts.get("refs", {}))
    state.young = dict(counts.get("young", {}))
    state.old = set(counts.get("old", {}))
    state.last_day = str(saved["meta"].get("last_day", ""))
    state.papers = int(saved["meta"].get("papers", 0) or 0)
    return state


class StoreVectors:
    """The linker's VectorSource over the store's embeddings; a paper the embed stage has
    not reached is embedded here when `embed` is on (its vector kept), else it gets a zero
    vector, which links to nothing."""

    def __init__(self, store: Store, settings: Settings, model: str, embed: bool) -> None:
        self.store, self.settings, self.model, self.embed = store, settings, model, embed
        self.embedded = 0

    def __call__(self, ids: Sequence[str]) -> np.ndarray:
        found_ids, matrix = self.store.embeddings.embedding_matrix(self.model, list(ids))
        rows = dict(zip(found_ids, matrix, strict=True))
        missing = [pid for pid in dict.fromkeys(ids) if pid not in rows]
        if missing and self.embed:
            rows.update(self._embed(missing))
        dim = next(iter(rows.values())).shape[0] if rows else DIM
        zero = np.zeros(dim, np.float32)
        return np.stack([rows.get(pid, zero) for pid in ids]) if ids else np.zeros((0, dim))

    def _embed(self, ids: list[str]) -> dict[str, np.ndarray]:
        embedder = default_embedder(self.settings)
        if str(embedder.model_id) != self.model:
            return {}  # another model's vectors would not compare with the stored ones
        papers = list(self.store.papers.iter_papers(ids=ids))
        texts = [embedding_text(p["title"], p["abstract"]) for p in papers]
        vectors = embedder.embed(texts) if texts else []
        self.store.embeddings.put_embeddings(
            self.model, [(p["id"], text_hash(t), v) for p, t, v in zip(papers, texts, vectors,
                                                                       strict=True)])
        self.embedded += len(papers)
        return {p["id"]: np.asarray(v, np.float32) for p, v in zip(papers, vectors, strict=True)}


def old_names(settings: Settings) -> dict[str, int]:
    """Names common in the older snapshot the settings name (none without one)."""
    if not settings.links_old_papers:
        return {}
    snapshot = Path(settings.links_old_papers)
    cache = settings.paths.root / "cache" / "links" / f"old-names-{snapshot.name.split('.')[0]}.tsv"
    return learn_old_names(snapshot, cache)


def day_batches(days: Sequence[tuple[str, int]], size: int = BATCH_PAPERS
                ) -> list[tuple[str, str, int]]:
    """(first day, last day, papers) runs of whole days holding about `size` papers each."""
    batches: list[tuple[str, str, int]] = []
    for day, count in days:
        if batches and batches[-1][2] + count <= size:
            first, _, held = batches[-1]
            batches[-1] = (first, day, held + count)
        else:
            batches.append((day, day, count))
    return batches


class _Recorder:
    """read_paper that remembers the names read (their counters are the ones to save)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def __call__(self, paper: Paper) -> tuple[list[Coined], set[str]]:
        coined, mentions = read_paper(paper)
        self.names |= mentions | {c.name for c in coined}
        return coined, mentions


def _batch(state: LinkState, rows: list[dict[str, Any]], result: LinkResult,
           names: set[str]) -> dict[str, Any]:
    retracted = [tuple(key.rpartition("@")[::2]) for key in result.retracted]
    return {
        "read": [(r["id"], r["announced"]) for r in rows],
        "artefacts": [(a.name, a.origin, a.day, a.categories, a.how, a.risky)
                      for a in result.artefacts],
        "links": [(k.source, k.target, k.name, k.day, k.similarity, k.status, k.alternatives)
                  for k in result.links],
        "retracted": retracted,
        "counts": {"refs": {n: state.refs[n] for n in names if n in state.refs},
                   "old": {n: 1 for n in state.old}},
        "young": dict(state.young),
        "meta": {"last_day": state.last_day, "papers": state.papers},
    }


class Links:
    """Link new papers to the artefacts they use, then rebuild the threads they touch.

    Resumable: each batch of whole days is one transaction (the papers read, their links and
    the linker's counters), and the threads to rebuild are kept until they are rebuilt. `redo`
    forgets every link first.
    """

    name = "links"

    def __init__(self, redo: bool = False, batch_papers: int = BATCH_PAPERS,
                 params: LinkParams = LinkParams(),
                 thread_params: ThreadParams = ThreadParams()) -> None:
        self.redo, self.batch_papers = redo, batch_papers
        self.params, self.thread_params = params, thread_params

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        started = time.perf_counter()
        links = store.links
        if self.redo:
            links.reset_links()
        model = model_id(settings, store)
        vectors = StoreVectors(store, settings, model, bool(settings.links_embed_missing))
        old = old_names(settings)
        saved = links.link_state()
        state = state_from(saved)
        todo = {tuple(k) for k in json.loads(saved["meta"].get("threads_todo") or "[]")}
        days = links.pending_link_days()
        total = sum(n for _, n in days)
        counts = {"papers": 0, "artefacts": 0, "links": 0, "ambiguous": 0, "retracted": 0}
        on_progress(Progress(self.name, 0, total))
        for first, last, _ in day_batches(days, self.batch_papers):
            rows = links.link_inputs(first, last)
            papers = [Paper(r["id"], r["title"] or "", r["abstract"] or "", r["categories"],
                            r["announced"]) for r in rows]
            recorder = _Recorder()
            result = update(state, papers, vectors, old, self.params, recorder)
            batch = _batch(state, rows, result, recorder.names)
            todo |= _threads_todo(links, result, first, last, self.thread_params.close_days)
            batch["meta"]["threads_todo"] = json.dumps(sorted(todo))
            links.put_link_batch(batch)
            counts["papers"] += len(rows)
            counts["artefacts"] += len(result.artefacts) - len(result.retracted)
            counts["links"] += sum(k.status == "linked" for k in result.links)
            counts["ambiguous"] += sum(k.status == "ambiguous" for k in result.links)
            counts["retracted"] += len(result.retracted)
            on_progress(Progress(self.name, counts["papers"], total, f"to {last}"))
        threads = build_store_threads(store, model, self.thread_params, full=self.redo)
        counts |= threads
        return Report(stage=self.name, counts=counts, seconds=time.perf_counter() - started,
                      details={"model": model, "embedded": vectors.embedded,
                               "last_day": state.last_day})


def _threads_todo(links: Any, result: LinkResult, first: str, last: str, days: int
                  ) -> set[tuple[str, str]]:
    """Threads this batch may change: the artefacts of new or withdrawn links, and threads
    with a member near the new days."""
    todo = {(k.name, k.target) for k in result.links if k.status == "linked"}
    todo |= {tuple(key.rpartition("@")[::2]) for key in result.retracted}
    todo |= set(links.threads_near(_shift(first, -days), _shift(last, days)))
    return todo  # type: ignore[return-value]


def _shift(day: str, days: int) -> str:
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()


def build_store_threads(store: Store, model: str, params: ThreadParams = ThreadParams(),
                        full: bool = False) -> dict[str, int]:
    """Build again the threads the links batches left to do (all of them with `full` or when
    the store has none yet), and clear the list."""
    links = store.links
    meta = links.link_state()["meta"]
    saved = meta.get("threads_todo")
    keys = [tuple(k) for k in json.loads(saved)] if saved else []
    everything = full or not links.list_threads(1)
    if not keys and not everything:
        return {"threads": 0}
    artefact_rows, link_rows = links.thread_inputs(None if everything else keys)
    artefacts = [Artefact(n, o, d, tuple(c), h, r) for n, o, d, c, h, r in artefact_rows]
    found = [Link(s, t, n, d, float(sim)) for s, t, n, d, sim in link_rows]
    corpus = _corpus(store, model, artefacts, found, params, everything)
    threads = build_threads(artefacts, found, corpus, params)
    built = {t.id for t in threads}
    gone = [] if everything else [f"{n}-{o}" for n, o in keys if f"{n}-{o}" not in built]
    if everything:
        gone = [t["id"] for t in _all_threads(links)]
    links.put_threads([{"id": t.id, "name": t.name, "origin": t.origin, "day": t.day,
                        "members": t.members} for t in threads], gone)
    links.put_link_batch({"meta": {"threads_todo": "[]"}})
    return {"threads": len(threads)}


def _all_threads(links: Any) -> list[dict[str, Any]]:
    found, offset = [], 0
    while page := links.list_threads(5000, offset):
        found += page
        offset += len(page)
    return found


def _corpus(store: Store, model: str, artefacts: Sequence[Artefact], found: Sequence[Link],
            params: ThreadParams, everything: bool) -> Corpus:
    """The papers (with vectors) a thread's close members may come from: all of them, or
    those announced within close_days of a member."""
    links = store.links
    if everything:
        pairs = links.paper_days()
    else:
        member_days = {a.day for a in artefacts} | {k.day for k in found}
        near = {_shift(d, n) for d in member_days
                for n in range(-params.close_days, params.close_days + 1)}
        pairs = links.paper_days(sorted(near)) if near else []
    day_of = dict(pairs)
    if not day_of:
        return Corpus([], [], np.zeros((0, DIM), np.float32))
    # Every vector is one read; a few days' papers are looked up by id.
    ids, matrix = store.embeddings.embedding_matrix(model, None if everything else list(day_of))
    keep = [i for i, pid in enumerate(ids) if pid in day_of]
    return Corpus([ids[i] for i in keep], [day_of[ids[i]] for i in keep],
                  np.asarray(matrix, np.float32)[keep] if keep else np.zeros((0, DIM), np.float32))


