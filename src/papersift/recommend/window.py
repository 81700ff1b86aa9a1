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
# Fewer new papers than this in `feed_days` (a thin week, a young store) and the window widens,
# up to MAX_DAYS, until it holds them: a feed is never empty by accident.
MIN_CANDIDATES, MAX_DAYS = 20, 30
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
    days: int = 0  # the days the window spans
    widened: bool = False  # more than feed_days: they held too few papers

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
    latest = date.fromisoformat((key[0] or date.today().isoformat())[:10])
    days = max(1, int(settings.feed_days))
    start = latest - timedelta(days=days - 1)
    rows = store.readers.ranking_rows(since=start.isoformat())
    if len(rows) < MIN_CANDIDATES and days < MAX_DAYS:
        start, rows = _widened(store, latest, start, len(rows))
    widened = (latest - start).days + 1 > days
    background = store.readers.background_rows(BACKGROUND, start.isoformat())
    if len(background) < MIN_BACKGROUND:  # a young store: learn against all its papers
        background = store.readers.background_rows(BACKGROUND, "9999-12-31")
    model = key[2]
    ids, matrix = store.embeddings.embedding_matrix(model, [r["id"] for r in rows + background])
    vectors = dict(zip(ids, matrix, strict=True))
    dim = matrix.shape[1] if len(matrix) else 384
    space = TextSpace([paper_text(r) for r in rows + background])
    topics = {t["id"]: t for t in store.topics.list_topics() if not t["is_other"]}
    candidates = featurize(rows, space, vectors, dim)
    # The columns every feed reads, made once here: each feed's subset of the window slices them.
    candidates.ints("topic_id"), candidates.ints("section_id"), candidates.categories()
    return Window(key, start.isoformat(), candidates,
                  featurize(background, space, vectors, dim), space, model, dim, topics,
                  trending(store, limit=TRENDING_TOPICS), (latest - start).days + 1, widened)


def _widened(store: Store, latest: date, start: date, have: int
             ) -> tuple[date, list[dict[str, Any]]]:
    """The latest start within MAX_DAYS whose window holds MIN_CANDIDATES papers (or the
    earliest, when even MAX_DAYS hold fewer), and the window's rows."""
    rows = store.readers.ranking_rows(since=(latest - timedelta(days=MAX_DAYS - 1)).isoformat())
    if len(rows) <= have:
        return start, [r for r in rows if (r["sort_date"] or "") >= start.isoformat()]
    dates = sorted(((r["sort_date"] or "")[:10] for r in rows), reverse=True)
    first = date.fromisoformat(dates[min(len(dates), MIN_CANDIDATES) - 1])
    start = min(start, first)
    return start, [r for r in rows if (r["sort_date"] or "")[:10] >= start.isoformat()]


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

