"""The whole pipeline in order: ingest the configured sources, embed, group into topics, summarize."""

from __future__ import annotations

import dataclasses
import importlib
import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from papersift.settings import Settings
from papersift.store import Store

REBUILD_AFTER = timedelta(days=7)

# on_progress(stage, done, total): total is None while unknown.
ProgressFn = Callable[[str, int, int | None], None]


class StageMissing(RuntimeError):
    """A stage's package is not installed or lacks the function the pipeline calls."""


def _stage(module: str, name: str) -> Callable[..., Any]:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise StageMissing(f"{module}.{name} is not available ({exc})") from None


def _plain(result: Any) -> Any:
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = result.as_dict() if hasattr(result, "as_dict") else dataclasses.asdict(result)
    elif hasattr(result, "as_dict"):
        result = result.as_dict()
    return result


def _stage_progress(on_progress: ProgressFn | None, stage: str) -> Callable[..., None] | None:
    if on_progress is None:
        return None

    def report(done: Any = 0, total: Any = None, *_: Any) -> None:
        on_progress(stage, int(done or 0), int(total) if isinstance(total, int) else None)

    return report


def _needs_topic_build(store: Store) -> bool:
    if not store.has_topics():
        return True
    last = store.last_topic_build_at()
    if not last:
        return True
    built = datetime.fromisoformat(last.replace("Z", "+00:00"))
    if built.tzinfo is None:
        built = built.replace(tzinfo=UTC)
    return datetime.now(UTC) - built > REBUILD_AFTER


def update(
    store: Store,
    settings: Settings,
    on_progress: ProgressFn | None = None,
    sources: Sequence[str] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Run every stage once, incrementally; a failing stage is reported and the next one still runs.

    Returns {'stages': {name: {'ok', 'seconds', 'result' | 'error'}}, 'ok': bool,
    'ingest_failed': bool (every source failed: no network?)}. Safe to run while the site
    serves: each stage commits in small transactions and the site only reads.
    """
    from papersift.ingest import ingest
    from papersift.sources import SourceOptions

    specs = list(sources) if sources is not None else settings.sources.split()
    report: dict[str, Any] = {"stages": {}, "sources": specs, "ok": True, "ingest_failed": False}

    def run(name: str, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        entry: dict[str, Any] = {"ok": True}
        try:
            entry["result"] = _plain(call())
        except StageMissing as exc:
            entry.update(ok=False, error=str(exc), missing=True)
        except Exception as exc:  # one broken stage must not stop the others (cron keeps going)
            entry.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        entry["seconds"] = round(time.perf_counter() - started, 2)
        report["stages"][name] = entry
        if not entry["ok"]:
            report["ok"] = False
        return entry.get("result")

    since = date.today() - timedelta(days=max(0, int(settings.since_days)))
    # A file is ingested whole; network sources only ask for the last few days.
    live = any(not spec.startswith("file:") for spec in specs)
    options = SourceOptions(since=since if live else None, limit=limit)

    def do_ingest() -> Any:
        if on_progress:
            on_progress("ingest", 0, None)
        result = ingest(store, specs, settings, options=options,
                        on_batch=(lambda r: on_progress("ingest", r.seen, None))
                        if on_progress else None)
        return result

    ingested = run("ingest", do_ingest)
    if ingested and specs and len(ingested.get("failed_sources", [])) == len(specs):
        report["ingest_failed"] = True
        report["ok"] = False

    if not store.count_papers():
        for name in ("embed", "topics", "summarize"):
            report["stages"][name] = {"ok": True, "skipped": "no papers in the store",
                                      "seconds": 0.0}
        report["papers"] = 0
        return report

    run("embed", lambda: _stage("papersift.search", "embed_papers")(
        store, settings, on_progress=_stage_progress(on_progress, "embed")))

    def do_topics() -> Any:
        if _needs_topic_build(store):
            result = _stage("papersift.topics", "build_topics")(store, settings)
            return {"action": "build", "report": _plain(result)}
        result = _stage("papersift.topics", "assign_topics")(store, settings)
        return {"action": "assign", "report": _plain(result)}

    run("topics", do_topics)
    run("summarize", lambda: _stage("papersift.summarize", "summarize_papers")(
        store, settings, on_progress=_stage_progress(on_progress, "summarize")))
    report["papers"] = store.count_papers()
    return report
