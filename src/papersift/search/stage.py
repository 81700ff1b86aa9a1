"""The embed stage: embed papers whose text is new or changed, commit per batch, then update the index."""

from __future__ import annotations

import time
from collections.abc import Iterator

from papersift.plugins import plugins
from papersift.search.ann import update_index
from papersift.search.embed import Embedder, default_embedder, embedding_text, text_hash
from papersift.search.engines import embed_job
from papersift.search.neighbours import searches_locally
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store

# Each chunk is one transaction: small enough that a kill loses little, large enough to batch well.
_CHUNK = 256
# Texts read ahead and sorted by length before they are cut into chunks: a chunk of texts of
# like length wastes little on padding (about 4% more work in unsorted chunks of 256).
_WINDOW = 2048


def _stale(store: Store, model: str) -> int:
    count = 0
    for rows in store.embeddings.iter_embedding_inputs(model, batch=2000):
        count += sum(1 for _, t, a, h in rows if h != text_hash(embedding_text(t, a)))
    return count


def _cut(window: list[tuple[str, str, str]]) -> Iterator[list[tuple[str, str, str]]]:
    window.sort(key=lambda row: len(row[2]))
    for start in range(0, len(window), _CHUNK):
        yield window[start:start + _CHUNK]


class Embed:
    """Embed every paper that has no vector for this embedder or whose text changed.

    Killing it loses at most one chunk; running it again resumes. Then the local
    nearest-neighbour index is brought up to date (unless `update_index` is False, or the
    store keeps its own index, as PostgreSQL does, and search does not walk the local file:
    neighbours.searches_locally).

    A backfill (millions of vectors into a store that keeps its own index) drops that index
    first and builds it once at the end; every run builds it if it is missing, so a killed
    backfill is mended by the next run.
    """

    name = "embed"

    def __init__(self, embedder: Embedder | None = None, update_index: bool = True,
                 engine: str | None = None, backfill: bool = False) -> None:
        self.embedder = embedder
        self.update_index = update_index
        self.engine = engine  # an engine's name (plugins); None: the setting's
        self.backfill = backfill

    @staticmethod
    def _chunks(store: Store, model: str) -> Iterator[list[tuple[str, str, str]]]:
        """(paper id, hash, text) of the papers to embed, in chunks of texts of like length
        (each window sorted shortest first, then cut)."""
        window: list[tuple[str, str, str]] = []
        for rows in store.embeddings.iter_embedding_inputs(model, batch=2000):
            for paper_id, title, abstract, stored_hash in rows:
                text = embedding_text(title, abstract)
                digest = text_hash(text)
                if digest != stored_hash:
                    window.append((paper_id, digest, text))
            if len(window) >= _WINDOW:
                yield from _cut(window)
                window = []
        yield from _cut(window)

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        started = time.perf_counter()  # the stage's time includes a first export of the model
        embedder = self.embedder or default_embedder(settings)
        prepare = getattr(embedder, "prepare", None)
        if prepare is not None:  # the local model may need exporting first: show it
            prepare(on_progress)
        model = embedder.model_id
        todo = _stale(store, model)
        done = 0
        on_progress(Progress(self.name, 0, todo))
        engine = plugins().engines.get(self.engine or settings.embed_engine)
        dropped = bool(todo) and self.backfill and store.embeddings.drop_vector_index()
        # Each chunk is one transaction, written as it comes back: kill the stage (or lose a
        # Ray worker) and the chunk is embedded again and written once, keyed by paper id.
        for chunk, vectors in engine.run(settings, embed_job(embedder), self._chunks(store, model)):
            store.embeddings.put_embeddings(model, [
                (pid, digest, vector) for (pid, digest, _), vector in zip(chunk, vectors,
                                                                          strict=True)])
            done += len(chunk)
            on_progress(Progress(self.name, done, todo))
        release = getattr(embedder, "release", None)
        if done and release is not None:
            # A bulk embed leaves ONNX Runtime holding its largest batches' memory: a process
            # that goes on to serve needs none of it (queries load the model again, small).
            release()
        seconds = time.perf_counter() - started
        report = Report(
            stage=self.name, seconds=seconds,
            counts={"embedded": done, "total": store.embeddings.count_embeddings(model)},
            details={"model": model, "engine": engine.name,
                     "per_second": round(done / seconds, 1) if done and seconds else None})
        if store.embeddings.indexes_vectors():
            # The store keeps its own index (PostgreSQL's HNSW), current as each batch commits
            # unless this is a backfill (or mends one that was stopped): then built now.
            report.details["index"] = self._build_store_index(store, settings, model, dropped,
                                                              on_progress)
        if self.update_index and searches_locally(store, settings, model):
            # This machine's own file (the SQLite store's only index; PostgreSQL's copy
            # when its search walks it, searches_locally): new vectors added, changed ones
            # replaced.
            key = "local_index" if "index" in report.details else "index"
            report.details[key] = update_index(store, settings, model, on_progress)
        return report

    def _build_store_index(self, store: Store, settings: Settings, model: str, dropped: bool,
                           on_progress: OnProgress) -> dict[str, object]:
        """The store's index built if it is missing (after a backfill: minutes at a million
        papers, shown as one step), unless the run was asked not to touch the index."""
        seconds = None
        if self.update_index:
            on_progress(Progress("vector index", 0, 1, note="building", unit="steps"))
            seconds = store.embeddings.build_vector_index(settings.vector_index_memory_mb,
                                                          settings.threads)
            on_progress(Progress("vector index", 1, 1, unit="steps"))
        return {"model": model, "in_store": True, "dropped_for_backfill": dropped,
                "built_seconds": None if seconds is None else round(seconds, 1)}
