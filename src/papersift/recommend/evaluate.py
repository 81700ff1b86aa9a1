"""`papersift eval recommend`: our ranker beside three public ones on a personal-feed task, in a temporary store.

The task file (recommend/readers-dev.jsonl layout) names a cut date, the candidate papers
announced after it, and readers: the papers each liked before the cut (their profile) and
the candidates they turned out to want. Rankings use the profile papers' title, abstract
and categories only. The store holds just the task's papers (candidates, profiles, and
5,000 random earlier papers the baselines learn against); vectors already computed for the
same text in the configured store are reused, the rest are embedded.
"""

from __future__ import annotations

import gzip
import json
import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from papersift.errors import UsageError
from papersift.recommend import baselines
from papersift.recommend.features import Papers, TextSpace, featurize, paper_text
from papersift.recommend.feedback_eval import feedback_effect
from papersift.recommend.model import ReaderModel, recency_weights
from papersift.recommend.task import Task, Universe
from papersift.records import PaperRecord, Skipped
from papersift.search.embed import default_embedder, embedding_text, model_id, text_hash
from papersift.search.metrics import mrr_at_k, ndcg_at_k, recall_at_k
from papersift.search.stage import Embed
from papersift.settings import Settings
from papersift.sources.files import parse_line
from papersift.stages import OnProgress, Progress, no_progress
from papersift.store import Store, add_records, open_store
from papersift.topics.stage import BuildTopics

NEGATIVES = 5_000
OUR_BACKGROUND = 1_000
SEED = 0


class TaskError(UsageError):
    """The task or papers file is missing or not in the expected layout."""


def load_task(path: Path) -> Task:
    if not path.is_file():
        raise TaskError(f"file not found: {path}")
    with path.open(encoding="utf-8") as handle:
        try:
            head = json.loads(handle.readline())["task"]
            readers = [json.loads(line) for line in handle if line.strip()]
            task = Task(str(head["cut"]), list(head["candidates"]), readers)
        except (ValueError, KeyError, TypeError) as exc:
            raise TaskError(f"{path}: not a recommendation task ({exc})") from None
    for reader in task.readers:
        if not {"reader", "profile", "positives"} <= set(reader):
            raise TaskError(f"{path}: a reader line needs reader, profile and positives")
    return task


def _records(path: Path, task: Task, count: int) -> tuple[dict[str, PaperRecord], list[str]]:
    """The task's papers, and `count` random earlier papers (seeded)."""
    wanted = set(task.candidates) | {p for r in task.readers for p in r["profile"]}
    found: dict[str, PaperRecord] = {}
    earlier: dict[str, PaperRecord] = {}
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            record = parse_line(line, f"{path.name}:{number}")
            if isinstance(record, Skipped):
                continue
            if record.id in wanted:
                found[record.id] = record
            elif (record.announced or "") < task.cut:
                earlier[record.id] = record
    negatives = random.Random(SEED).sample(sorted(earlier), min(count, len(earlier)))
    found.update((pid, earlier[pid]) for pid in negatives)
    return found, negatives


@contextmanager
def task_store(task: Task, papers: Path, settings: Settings, on_progress: OnProgress,
               negatives: int = NEGATIVES) -> Iterator[tuple[Store, list[str]]]:
    """A temporary store with the task's papers embedded and grouped into topics."""
    if not papers.is_file():
        raise TaskError(f"file not found: {papers}")
    records, sampled = _records(papers, task, negatives)
    with tempfile.TemporaryDirectory(prefix="papersift-recommend-") as folder:
        temp = settings.replace(data_dir=folder, database_url="")  # never the real store
        store = open_store(temp)
        try:
            ordered = list(records.values())
            for start in range(0, len(ordered), 5000):
                add_records(store, ordered[start:start + 5000])
            on_progress(Progress("eval", len(ordered), len(ordered), "papers stored"))
            _reuse_vectors(store, settings)
            # The model comes from the configured data dir (exported there once), not the
            # temporary one.
            Embed(default_embedder(settings)).run(store, temp, on_progress)
            BuildTopics().run(store, temp, on_progress)
            yield store, sampled
        finally:
            store.close()


def _reuse_vectors(store: Store, settings: Settings) -> int:
    """Copy vectors of the same text from the configured store (embedding is the slow part)."""
    if not settings.database_url and not settings.paths.database.is_file():
        return 0
    with open_store(settings, readonly=True) as home:
        model = model_id(settings, home)
        ours = {pid: text_hash(embedding_text(t, a)) for batch in
                store.embeddings.iter_embedding_inputs(model) for pid, t, a, _ in batch}
        same = [pid for batch in home.embeddings.iter_embedding_inputs(model)
                for pid, _, _, h in batch if ours.get(pid) == h]
        ids, matrix = home.embeddings.embedding_matrix(model, same)
    store.embeddings.put_embeddings(model, [(pid, ours[pid], v) for pid, v in zip(ids, matrix,
                                                                                 strict=True)])
    return len(ids)


def universe(store: Store, settings: Settings) -> Universe:
    rows = store.readers.ranking_rows()
    texts = [paper_text(r) for r in rows]
    space = TextSpace(texts)
    model = model_id(settings, store)
    ids, matrix = store.embeddings.embedding_matrix(model)
    papers = featurize(rows, space, dict(zip(ids, matrix, strict=True)), matrix.shape[1])
    sanity = baselines.sanity_vectorizer().fit_transform(texts).tocsr()
    topics = {t["id"]: t for t in store.topics.list_topics() if not t["is_other"]}
    return Universe(papers, {r["id"]: i for i, r in enumerate(rows)}, sanity, space, topics)


def _metrics(scores: np.ndarray, candidates: list[str], positives: list[str]) -> list[float]:
    ranked = [candidates[i] for i in np.argsort(-scores, kind="stable")]
    relevance = dict.fromkeys(positives, 1)
    return [ndcg_at_k(ranked, relevance, 10), recall_at_k(ranked, relevance, 50),
            mrr_at_k(ranked, relevance, len(ranked))]


RANKERS = ("papersift", "papersift:words-only", "papersift:meaning-only",
           "baseline:arxiv-sanity-lite", "baseline:zotero-arxiv-daily", "baseline:scholar-inbox")


def rank_reader(world: Universe, task: Task, reader: dict[str, Any], candidates: Papers,
                negatives: list[str]) -> dict[str, np.ndarray]:
    """Every ranker's scores of the candidates for one reader."""
    profile_ids = [p for p in reader["profile"] if p in world.index]
    liked = world.take(profile_ids)
    mine = set(profile_ids)
    others = [n for n in negatives if n not in mine and n in world.index]
    model = ReaderModel(liked, recency_weights([r["sort_date"] for r in liked.rows], task.cut),
                        world.take([]), world.take(others[:OUR_BACKGROUND]), world.space)
    scores = model.score(candidates)
    sanity = world.sanity
    rows_of = [world.index[p] for p in profile_ids]
    neg_rows = [world.index[n] for n in others]
    cand_rows = [world.index[c] for c in candidates.ids]
    return {
        "papersift": scores.total, "papersift:words-only": scores.words,
        "papersift:meaning-only": scores.meaning,
        "baseline:arxiv-sanity-lite": baselines.arxiv_sanity_lite(
            sanity[rows_of], sanity[neg_rows], sanity[cand_rows]),
        "baseline:zotero-arxiv-daily": baselines.zotero_arxiv_daily(
            liked.meaning, [r["sort_date"] for r in liked.rows], candidates.meaning),
        "baseline:scholar-inbox": baselines.scholar_inbox(
            liked.meaning, world.papers.meaning[neg_rows], candidates.meaning),
    }


def evaluate_recommend(readers_path: Path, papers_path: Path, settings: Settings,
                       feedback_readers: int = 100, on_progress: OnProgress = no_progress,
                       negatives: int = NEGATIVES) -> dict[str, Any]:
    """{rows: [{config, ndcg@10, recall@50, mrr, readers}], feedback: {...}, ...}."""
    started = time.perf_counter()
    task = load_task(readers_path)
    with task_store(task, papers_path, settings, on_progress, negatives) as (store, sample):
        world = universe(store, settings)
    candidates = world.take(task.candidates)
    totals = {name: [] for name in RANKERS}
    kept: dict[str, np.ndarray] = {}
    for done, reader in enumerate(task.readers, 1):
        scores = rank_reader(world, task, reader, candidates, sample)
        for name in RANKERS:
            totals[name].append(_metrics(scores[name], candidates.ids, reader["positives"]))
        kept[reader["reader"]] = scores["papersift"]
        on_progress(Progress("eval", done, len(task.readers), "readers ranked"))
    rows = [{"config": name, "ndcg@10": round(float(np.mean([m[0] for m in values])), 4),
             "recall@50": round(float(np.mean([m[1] for m in values])), 4),
             "mrr": round(float(np.mean([m[2] for m in values])), 4), "readers": len(values)}
            for name, values in totals.items()]
    feedback = feedback_effect(world, task, candidates, kept, feedback_readers)
    return {"rows": rows, "feedback": feedback, "candidates": len(candidates.rows),
            "readers": len(task.readers), "papers": len(world.papers.rows),
            "seconds": round(time.perf_counter() - started, 1)}
