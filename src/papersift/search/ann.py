"""The nearest-neighbour index of paper embeddings: hnswlib, persisted in the data dir, updated in place."""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np
from threadpoolctl import ThreadpoolController

from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, no_progress
from papersift.store import Store

INDEX_VERSION = "1"
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
# The search's candidate list: hnswlib widens it to k when k is larger (a hybrid query asks
# 100), so this sets the width of small searches only (issue 36: 128 cost ~0.3 ms a query).
HNSW_EF_SEARCH = 64
# Up to this many vectors a brute-force dot product is exact and about as fast as the graph.
EXACT_MAX = 20_000
# A filter that leaves fewer papers than this is answered exactly over just those papers.
FILTER_EXACT_MAX = 20_000
_ADD_BATCH = 2_000  # vectors per add (and per progress event)


class VectorIndex:
    """Labels are papers.pk; vectors are unit-length so inner product is cosine similarity."""

    def __init__(self, folder: Path, threads: int = 1) -> None:
        meta = json.loads((folder / "meta.json").read_text())
        self.folder, self.meta, self.threads = folder, meta, max(1, threads)
        self.dim = int(meta["dim"])
        state = np.load(folder / "state.npz")
        self.pks = state["pks"].astype(np.int64)
        self.count = len(self.pks)
        self.index = hnswlib.Index(space="ip", dim=self.dim)
        self.index.load_index(str(folder / "hnsw.bin"), max_elements=max(1, int(meta["capacity"])))
        self.index.set_ef(HNSW_EF_SEARCH)
        self.index.set_num_threads(1)
        self._saved = SavedVectors.open(folder / "hnsw.bin", self.index, self.dim, self.pks)
        self._dense: np.ndarray | None = None
        if 0 < self.count <= EXACT_MAX:
            self._dense = self._items(self.pks)

    def search(self, vector: np.ndarray, k: int,
               allowed: Collection[int] | None = None) -> list[tuple[int, float]]:
        """(pk, cosine) of the k nearest papers, nearest first; only `allowed` pks if given."""
        if self.count == 0 or k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if allowed is not None:
            allowed = [pk for pk in allowed if pk in self._pk_set]
            if not allowed:
                return []
            if len(allowed) <= FILTER_EXACT_MAX:
                labels = np.asarray(allowed, dtype=np.int64)
                return _top(labels, dot(self._items(labels), query), k)
            wanted = set(allowed)
            return self._graph(query, min(k, len(wanted)), lambda label: label in wanted)
        if self._dense is not None:
            return _top(self.pks, dot(self._dense, query), k)
        return self._graph(query, min(k, self.count), None)

    def _graph(self, query: np.ndarray, k: int, keep: Any) -> list[tuple[int, float]]:
        self.index.set_ef(max(HNSW_EF_SEARCH, k))
        while k > 0:
            try:
                labels, distances = self.index.knn_query(query, k=k, filter=keep)
            except RuntimeError:  # fewer than k reachable (deletions, a strict filter): ask less
                k //= 2
                continue
            return list(zip(labels[0].tolist(), (1.0 - distances[0]).tolist(), strict=True))
        return []

    def vectors(self, pks: list[int]) -> tuple[list[int], np.ndarray]:
        """(pks present, their vectors)."""
        known = self._pk_set
        present = [pk for pk in pks if pk in known]
        if not present:
            return [], np.zeros((0, self.dim), dtype=np.float32)
        return present, self._items(np.asarray(present, dtype=np.int64))

    def _items(self, labels: np.ndarray) -> np.ndarray:
        """These labels' vectors (float32), read from the saved file when it could be read."""
        if self._saved is not None:
            return self._saved.get(labels)
        return self.index.get_items(labels, return_type="numpy").astype(np.float32)

    @property
    def _pk_set(self) -> set[int]:
        if not hasattr(self, "_pk_set_cache"):
            self._pk_set_cache = set(self.pks.tolist())
        return self._pk_set_cache


class SavedVectors:
    """The vectors of a saved hnswlib index, read in place from its file.

    hnswlib's get_items makes a Python float of every number it returns: 1.8 ms for the 100
    vectors a hybrid query scores, against ~10 µs from the file (mapped: the pages are the
    page cache's, shared by every worker). The file is hnswlib's level-0 layout: a header of
    96 bytes, then per element its links, its vector at `offsetData_` and its label at
    `label_offset_`; `open` checks sample vectors against get_items and gives None (hnswlib
    is asked then) if the layout is not that one.
    """

    HEADER = 96

    def __init__(self, path: Path, dim: int) -> None:
        head = np.fromfile(path, dtype="<u8", count=6)
        _, _, count, size, label_at, data_at = (int(v) for v in head)
        if label_at + 8 > size or data_at + dim * 4 > size or (
                path.stat().st_size < self.HEADER + count * size):
            raise ValueError("not hnswlib's level-0 layout")
        rows = np.memmap(path, dtype=np.uint8, mode="r", offset=self.HEADER, shape=(count, size))
        labels = np.ascontiguousarray(rows[:, label_at:label_at + 8]).view("<i8").ravel()
        if count and (labels.min() < 0 or len(np.unique(labels)) != count):
            raise ValueError("labels are not distinct pks")
        self.row_of = np.full(int(labels.max()) + 1 if count else 0, -1, dtype=np.int64)
        self.row_of[labels] = np.arange(count)
        self.vectors = rows[:, data_at:data_at + dim * 4]
        self.labels = labels

    @classmethod
    def open(cls, path: Path, index: hnswlib.Index, dim: int, live: np.ndarray
             ) -> SavedVectors | None:
        """The file's vectors, if they read as `index` holds them (checked on 8 of the `live`
        labels: a deleted one is not asked of hnswlib)."""
        try:
            saved = cls(path, dim)
        except (OSError, ValueError):
            return None
        if len(saved.labels) != index.get_current_count():
            return None
        sample = live[np.linspace(0, len(live) - 1, 8).astype(np.int64)] if len(live) else live
        if len(sample) and (sample.max() >= len(saved.row_of) or saved.row_of[sample].min() < 0):
            return None
        if len(sample) and not np.array_equal(
                saved.get(sample), index.get_items(sample, return_type="numpy")):
            return None
        return saved

    def get(self, labels: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self.vectors[self.row_of[labels]]).view("<f4")


_blas: ThreadpoolController | None = None
# Up to this many rows a product skips BLAS: limiting its threads costs more than the product.
SMALL_PRODUCT = 4096


def dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """matrix @ vector (or a few vectors) on one BLAS thread: such a product gains nothing from
    more, and on busy cores the extra thread's wake-ups cost ten times the product itself."""
    global _blas
    if matrix.ndim == 2 and vector.ndim == 1 and matrix.shape[0] <= SMALL_PRODUCT:
        return np.einsum("ij,j->i", matrix, vector)  # no BLAS, so no thread to limit
    if _blas is None:
        _blas = ThreadpoolController()
    with _blas.limit(limits=1, user_api="blas"):
        return matrix @ vector


def _top(labels: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    k = min(k, len(scores))
    if k <= 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return list(zip(labels[best].tolist(), scores[best].tolist(), strict=True))


_cache: dict[Path, tuple[tuple[int, int], VectorIndex]] = {}
_cache_lock = threading.Lock()


def load_index(settings: Settings, model: str) -> VectorIndex | None:
    """The index of this embedder, loaded once and reloaded when `update_index` changed it."""
    folder = settings.paths.vector_index(model)
    meta = folder / "meta.json"
    try:
        stat = meta.stat()
    except FileNotFoundError:
        return None
    stamp = (stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(folder)
        if cached and cached[0] == stamp:
            return cached[1]
        index = VectorIndex(folder, threads=settings.threads)
        _cache[folder] = (stamp, index)
        return index


def update_index(store: Store, settings: Settings, model: str,
                 on_progress: OnProgress = no_progress) -> dict[str, Any]:
    """Bring the index in line with the stored embeddings: add new, replace changed, drop gone.

    Adding reports Progress('search index', vectors added, vectors to add).
    """
    folder = settings.paths.vector_index(model)
    folder.mkdir(parents=True, exist_ok=True)
    # One update of a folder at a time (an `update` from cron beside `serve`'s refresh, two
    # workers): both would write the same temporary files. The second then finds little to do.
    with open(folder / "update.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _update(store, settings, model, folder, on_progress)


def _update(store: Store, settings: Settings, model: str, folder: Path,
            on_progress: OnProgress) -> dict[str, Any]:
    started = time.perf_counter()
    current = store.embeddings.embedding_state(model)
    index, old_state, deleted = _saved(folder, model)
    to_add = [pk for pk, h in current.items() if old_state.get(pk) != h]
    to_drop = [pk for pk in old_state if pk not in current]
    report = {"model": model, "added": len(to_add), "removed": len(to_drop),
              "size": len(current), "seconds": 0.0}
    if not to_add and not to_drop and index is not None:
        report["seconds"] = round(time.perf_counter() - started, 2)  # reading the state
        return report
    if index is None:
        # A fresh build: every deleted label would only waste space.
        deleted, old_state = set(), {}
        to_drop = []
    on_progress(Progress("search index", 0, len(to_add)))
    for start in range(0, len(to_add), _ADD_BATCH):
        chunk = to_add[start:start + _ADD_BATCH]
        pks, vectors = store.embeddings.embedding_vectors(model, chunk)
        if not pks:
            continue
        if index is None:
            index = hnswlib.Index(space="ip", dim=vectors.shape[1])
            index.init_index(max_elements=max(1024, len(to_add)), M=HNSW_M,
                             ef_construction=HNSW_EF_CONSTRUCTION, random_seed=42)
        needed = index.get_current_count() + len(pks)
        if needed > index.get_max_elements():
            index.resize_index(max(needed, int(index.get_max_elements() * 1.5)))
        revived = [pk for pk in pks if pk in deleted]
        for pk in revived:
            index.unmark_deleted(pk)
            deleted.discard(pk)
        index.add_items(vectors, np.asarray(pks, dtype=np.int64), num_threads=max(1, settings.threads))
        on_progress(Progress("search index", start + len(chunk), len(to_add)))
    for pk in to_drop:
        index.mark_deleted(pk)
        deleted.add(pk)
    live = {pk: current[pk] for pk in current}
    if index is None:  # no embeddings at all
        index = hnswlib.Index(space="ip", dim=384)
        index.init_index(max_elements=1024, M=HNSW_M, ef_construction=HNSW_EF_CONSTRUCTION)
    _save(folder, index, model, live, deleted)
    report["seconds"] = round(time.perf_counter() - started, 2)
    return report


def _saved(folder: Path, model: str) -> tuple[hnswlib.Index | None, dict[int, str], set[int]]:
    """The index saved in `folder` for this model (or None), its vectors' hashes by pk and
    its deleted labels."""
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return None, {}, set()
    meta = json.loads(meta_path.read_text())
    if meta.get("version") != INDEX_VERSION or meta.get("model") != model:
        return None, {}, set()
    state = np.load(folder / "state.npz")
    old_state = dict(zip(state["pks"].tolist(), state["hashes"].astype(str).tolist(), strict=True))
    index = hnswlib.Index(space="ip", dim=int(meta["dim"]))
    index.load_index(str(folder / "hnsw.bin"), max_elements=int(meta["capacity"]))
    return index, old_state, set(state["deleted"].tolist())


def _save(folder: Path, index: hnswlib.Index, model: str, live: dict[int, str],
          deleted: set[int]) -> None:
    """Write index, state, then meta, each by rename: a reader sees the old or the new, whole."""
    pks = np.fromiter(live.keys(), dtype=np.int64, count=len(live))
    hashes = np.asarray(list(live.values()), dtype="S32")
    index.save_index(str(folder / "hnsw.bin.tmp"))
    os.replace(folder / "hnsw.bin.tmp", folder / "hnsw.bin")
    with open(folder / "state.tmp.npz", "wb") as handle:
        np.savez(handle, pks=pks, hashes=hashes,
                 deleted=np.fromiter(deleted, dtype=np.int64, count=len(deleted)))
    os.replace(folder / "state.tmp.npz", folder / "state.npz")
    meta = {"version": INDEX_VERSION, "model": model, "dim": index.dim,
            "capacity": index.get_max_elements(), "count": len(pks), "M": HNSW_M,
            "ef_construction": HNSW_EF_CONSTRUCTION}
    (folder / "meta.tmp.json").write_text(json.dumps(meta))
    os.replace(folder / "meta.tmp.json", folder / "meta.json")
