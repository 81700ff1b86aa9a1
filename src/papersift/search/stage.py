"""The embed stage: embed papers whose text is new or changed, commit per batch, then update the index."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from papersift.search.embed import Embedder, default_embedder, embedding_text, text_hash
from papersift.settings import Settings
from papersift.store import Store

# Each chunk is one transaction: small enough that a kill loses little, large enough to batch well.
_CHUNK = 256

ProgressFn = Callable[[int, int], None]


def _stale(store: Store, model: str) -> int:
    count = 0
    for rows in store.iter_embedding_inputs(model, batch=2000):
        count += sum(1 for _, t, a, h in rows if h != text_hash(embedding_text(t, a)))
    return count


def embed_papers(
    store: Store, settings: Settings, on_progress: ProgressFn | None = None,
    embedder: Embedder | None = None, update_index: bool = True,
) -> dict[str, Any]:
    """Embed every paper that has no vector for this embedder or whose text changed.

    Returns counts: {'model', 'embedded', 'total', 'seconds', 'per_second', 'index': {...}}.
    Killing it loses at most one chunk; running it again resumes.
    """
    embedder = embedder or default_embedder(settings)
    model = embedder.model_id
    todo = _stale(store, model)
    started = time.perf_counter()
    done = 0
    if on_progress:
        on_progress(0, todo)
    pending: list[tuple[str, str, str]] = []

    def flush() -> None:
        nonlocal done, pending
        if not pending:
            return
        vectors = embedder.embed([text for _, _, text in pending])
        store.put_embeddings(model, [(pid, h, vec) for (pid, h, _), vec in zip(pending, vectors, strict=True)])
        done += len(pending)
        pending = []
        if on_progress:
            on_progress(done, todo)

    for rows in store.iter_embedding_inputs(model, batch=2000):
        for paper_id, title, abstract, stored_hash in rows:
            text = embedding_text(title, abstract)
            digest = text_hash(text)
            if digest != stored_hash:
                pending.append((paper_id, digest, text))
                if len(pending) >= _CHUNK:
                    flush()
    flush()
    seconds = time.perf_counter() - started
    report: dict[str, Any] = {
        "model": model, "embedded": done, "total": store.count_embeddings(model),
        "seconds": round(seconds, 2), "per_second": round(done / seconds, 1) if done and seconds else None,
    }
    if update_index:
        from papersift.search.ann import update_index as _update_index

        report["index"] = _update_index(store, settings, model)
    return report


def export_matrix(store: Store, model: str, npy_path: Path, ids_path: Path) -> int:
    """Write the stored vectors (pk order) to a .npy and their paper ids to a JSON list, each
    atomically (temporary file, then rename), for tools that read embeddings without the store."""
    ids, matrix = store.embedding_matrix(model)
    npy_tmp = npy_path.with_name(npy_path.name + ".tmp")
    with open(npy_tmp, "wb") as handle:
        np.save(handle, matrix)
    ids_tmp = ids_path.with_name(ids_path.name + ".tmp")
    ids_tmp.write_text(json.dumps(ids))
    os.replace(npy_tmp, npy_path)
    os.replace(ids_tmp, ids_path)
    return len(ids)
