"""The papers a feed ranks (the last `feed_days` days), featurized once per process and kept until new papers arrive."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from papersift.recommend.features import Papers, TextSpace, featurize, paper_text
from papersift.recommend.model import ReaderModel, recency_weights
from papersift.search.embed import model_id
from papersift.settings import Settings
from papersift.store import Store
from papersift.topics.trends import trending

BACKGROUND = 1_000  # store papers a reader's word model learns against
MIN_BACKGROUND = 50
TRENDING_TOPICS = 6
CHECK_SECONDS = 30.0  # how often a worker asks whether new papers arrived
# Reader models kept per process: a model holds a weight per term (~0.4 MB), and refitting
# one costs ~15 ms, so a busy worker keeps the active readers' and refits the rest.
_MODELS = 64


@dataclass
class Window:
    """The candidates of the feeds, and what every reader's model is fitted in."""

    key: tuple[Any, ...]
    start: str  # the first day of the window
    candidates: Papers
    background: Papers
    space: TextSpace
    vectors_model: str
    dim: int
    topics: dict[int, dict[str, Any]]
    trending: list[dict[str, Any]]  # the fastest-growing topics, when the window was made

    def featurize(self, store: Store, ids: list[str]) -> Papers:
        """Papers outside the window (a reader's likes) in the window's spaces."""
        rows = store.readers.ranking_rows(ids=ids)
        _, matrix = store.embeddings.embedding_matrix(self.vectors_model, [r["id"] for r in rows])
        got = dict(zip((r["id"] for r in rows), matrix, strict=False)) if len(matrix) else {}
        return featurize(rows, self.space, got, self.dim)


_windows: dict[str, tuple[float, Window]] = {}
_models: OrderedDict[tuple[Any, ...], ReaderModel] = OrderedDict()
_lock = threading.Lock()


def _key(store: Store, settings: Settings) -> tuple[Any, ...]:
    latest = store.pages.latest_day()
    return (latest, store.papers.count_papers(), model_id(settings, store), settings.feed_days)


def window(store: Store, settings: Settings) -> Window:
    """The current window of this store, built again when papers or their vectors changed."""
    now = time.monotonic()
    with _lock:
        cached = _windows.get(store.location)
        if cached and now - cached[0] < CHECK_SECONDS:
            return cached[1]
    key = _key(store, settings)
    if cached and cached[1].key == key:
        with _lock:
            _windows[store.location] = (now, cached[1])
        return cached[1]
    built = _build(store, settings, key)
    with _lock:
        _windows[store.location] = (now, built)
    return built


def _build(store: Store, settings: Settings, key: tuple[Any, ...]) -> Window:
    latest = key[0] or date.today().isoformat()
    start = (date.fromisoformat(latest[:10]) - timedelta(days=max(1, int(settings.feed_days)) - 1))
    rows = store.readers.ranking_rows(since=start.isoformat())
    background = store.readers.background_rows(BACKGROUND, start.isoformat())
    if len(background) < MIN_BACKGROUND:  # a young store: learn against all its papers
        background = store.readers.background_rows(BACKGROUND, "9999-12-31")
    model = key[2]
    ids, matrix = store.embeddings.embedding_matrix(model, [r["id"] for r in rows + background])
    vectors = dict(zip(ids, matrix, strict=True))
    dim = matrix.shape[1] if len(matrix) else 384
    space = TextSpace([paper_text(r) for r in rows + background])
    topics = {t["id"]: t for t in store.topics.list_topics() if not t["is_other"]}
    return Window(key, start.isoformat(), featurize(rows, space, vectors, dim),
                  featurize(background, space, vectors, dim), space, model, dim, topics,
                  trending(store, limit=TRENDING_TOPICS))


def reader_model(store: Store, win: Window, reader: dict[str, Any], liked: list[str],
                 liked_dates: list[str], disliked: list[str], today: str) -> ReaderModel:
    """The reader's model in this window, fitted again whenever their signals change."""
    key = (store.location, win.key, reader["id"], reader["signals_version"])
    with _lock:
        if key in _models:
            _models.move_to_end(key)
            return _models[key]
    liked_papers = win.featurize(store, liked)
    when = dict(zip(liked, liked_dates, strict=True))
    weights = recency_weights([when.get(r["id"]) for r in liked_papers.rows], today)
    fitted = ReaderModel(liked_papers, weights, win.featurize(store, disliked), win.background,
                         win.space)
    with _lock:
        _models[key] = fitted
        while len(_models) > _MODELS:
            _models.popitem(last=False)
    return fitted


def clear() -> None:
    """Forget every cached window and model (tests, and after a store is replaced)."""
    with _lock:
        _windows.clear()
        _models.clear()

