"""The embed stage: embed papers whose text is new or changed, commit per batch, then update the index."""

from __future__ import annotations

import time

from papersift.search.ann import update_index
from papersift.search.embed import Embedder, default_embedder, embedding_text, text_hash
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store

# Each chunk is one transaction: small enough that a kill loses little, large enough to batch well.
_CHUNK = 256


def _stale(store: Store, model: str) -> int:
    count = 0
    for rows in store.embeddings.iter_embedding_inputs(model, batch=2000):
        count += sum(1 for _, t, a, h in rows if h != text_hash(embedding_text(t, a)))
    return count


class Embed:
    """Embed every paper that has no vector for this embedder or whose text changed.

    Killing it loses at most one chunk; running it again resumes. Then the nearest-neighbour
    index is brought up to date (unless `update_index` is False).
    """

    name = "embed"

    def __init__(self, embedder: Embedder | None = None, update_index: bool = True) -> None:
        self.embedder = embedder
        self.update_index = update_index

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        embedder = self.embedder or default_embedder(settings)
        prepare = getattr(embedder, "prepare", None)
        if prepare is not None:  # the local model may need exporting first: show it
            prepare(on_progress)
        model = embedder.model_id
        todo = _stale(store, model)
        started = time.perf_counter()
        done = 0
        on_progress(Progress(self.name, 0, todo))
        pending: list[tuple[str, str, str]] = []

        def flush() -> None:
            nonlocal done, pending
            if not pending:
                return
            vectors = embedder.embed([text for _, _, text in pending])
            store.embeddings.put_embeddings(
                model, [(pid, h, vec) for (pid, h, _), vec in zip(pending, vectors, strict=True)])
            done += len(pending)
            pending = []
            on_progress(Progress(self.name, done, todo))

        for rows in store.embeddings.iter_embedding_inputs(model, batch=2000):
            for paper_id, title, abstract, stored_hash in rows:
                text = embedding_text(title, abstract)
                digest = text_hash(text)
                if digest != stored_hash:
                    pending.append((paper_id, digest, text))
                    if len(pending) >= _CHUNK:
                        flush()
        flush()
        release = getattr(embedder, "release", None)
        if done and release is not None:
            # A bulk embed leaves ONNX Runtime holding its largest batches' memory: a process
            # that goes on to serve needs none of it (queries load the model again, small).
            release()
        seconds = time.perf_counter() - started
        report = Report(
            stage=self.name, seconds=seconds,
            counts={"embedded": done, "total": store.embeddings.count_embeddings(model)},
            details={"model": model,
                     "per_second": round(done / seconds, 1) if done and seconds else None})
        if self.update_index:
            report.details["index"] = update_index(store, settings, model, on_progress)
        return report
