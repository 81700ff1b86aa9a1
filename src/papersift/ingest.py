"""The ingest stage: stream records from sources into the store in committed batches, and report."""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from papersift.ingest_worker import CachedLine, file_items
from papersift.records import Skipped, SourceError
from papersift.settings import Settings
from papersift.sources import SourceOptions, open_source, parse_spec
from papersift.sources.files import file_path, parse_line
from papersift.store import Store
from papersift.store.db import utc_now
from papersift.store.papers import PreparedRecord, prepare_record

# Commit at least this often so a slow network source loses little when killed.
_FLUSH_SECONDS = 5.0
# Below this much file data, starting a helper process for the full-text index gains nothing.
_PARALLEL_INDEX_MIN_BYTES = 1 << 20


@dataclass
class IngestReport:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    failed_sources: list[dict[str, str]] = field(default_factory=list)
    parallel_index: bool = False  # the full-text index was built by a helper process
    seconds: float = 0.0

    @property
    def seen(self) -> int:
        return self.new + self.updated + self.unchanged

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seen"] = self.seen
        data["papers_per_second"] = round(self.seen / self.seconds, 1) if self.seconds else None
        return data


def ingest(
    store: Store,
    specs: Sequence[str],
    settings: Settings,
    options: SourceOptions = SourceOptions(),
    client: httpx.Client | None = None,
    batch_size: int = 10_000,
    on_batch: Callable[[IngestReport], None] | None = None,
    parallel_index: bool | None = None,
) -> IngestReport:
    """Ingest every SOURCE spec in order. A failing source is reported and the next one runs.

    Each batch is one transaction, and a record that its source already gave unchanged is
    recognised by its hash, so an interrupted run resumes by simply running it again.
    Into a store with no papers, the full-text index is built on the other core and other
    indexes at the end (Store.bulk_load): by default when the files to read are big enough
    to gain.
    """
    if parallel_index is None:
        parallel_index = _file_bytes(specs) >= _PARALLEL_INDEX_MIN_BYTES
    report = IngestReport()
    started, started_at = time.perf_counter(), utc_now()
    with _collector_paused(), store.bulk_load(parallel_index) as report.parallel_index:
        _ingest(store, specs, settings, options, client, batch_size, on_batch, report, started)
    report.seconds = time.perf_counter() - started
    store.record_ingest_run(list(specs), started_at, report.as_dict())
    return report


def _file_bytes(specs: Sequence[str]) -> int:
    total = 0
    for spec in specs:
        kind, arg = parse_spec(spec)
        if kind == "file":
            with contextlib.suppress(SourceError, OSError):  # reported when the source is read
                total += file_path(arg).stat().st_size
    return total


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: ingesting makes no cycles worth collecting, but
    millions of short-lived rows whose creation keeps triggering collections (~10% of the
    writer's CPU on a bulk file)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _ingest(
    store: Store,
    specs: Sequence[str],
    settings: Settings,
    options: SourceOptions,
    client: httpx.Client | None,
    batch_size: int,
    on_batch: Callable[[IngestReport], None] | None,
    report: IngestReport,
    started: float,
) -> None:
    for spec in specs:
        batch: list[PreparedRecord | CachedLine] = []
        last_flush = time.monotonic()

        def flush(spec: str = spec) -> None:
            nonlocal batch, last_flush
            if batch:
                items = _confirm_cached(store, spec, batch, report)
                result = store.upsert_prepared(items)
                report.new += len(result.new)
                report.updated += len(result.updated)
                report.unchanged += result.unchanged
                report.duplicates += [{"id": a, "duplicate_of": b} for a, b in result.duplicates]
                batch = []
            last_flush = time.monotonic()
            report.seconds = time.perf_counter() - started
            if on_batch:
                on_batch(report)

        try:
            for item in _prepared_items(store, spec, options, settings, client):
                if isinstance(item, Skipped):
                    report.skipped.append({"source": spec, "where": item.where, "reason": item.reason})
                    continue
                batch.append(item)
                if len(batch) >= batch_size or time.monotonic() - last_flush > _FLUSH_SECONDS:
                    flush()
        except SourceError as exc:
            report.failed_sources.append({"source": spec, "error": str(exc)})
        # Not in `finally`: after a crash or an interrupt the partial batch is simply redone.
        flush()


def _prepared_items(
    store: Store, spec: str, options: SourceOptions, settings: Settings,
    client: httpx.Client | None,
) -> Iterator[PreparedRecord | CachedLine | Skipped]:
    """The items of one source, prepared for the store off the writing thread."""
    if parse_spec(spec)[0] == "file":
        # Bulk files: parse and prepare in a helper process, so that this process only runs
        # SQL (a thread would share the GIL with the writer's Python work).
        yield from file_items(file_path(parse_spec(spec)[1]), options, store.path)
        return
    for item in _prefetched(open_source(spec, options, settings, client=client)):
        yield item if isinstance(item, Skipped) else prepare_record(item)  # type: ignore[arg-type]


def _confirm_cached(
    store: Store, spec: str, batch: list[PreparedRecord | CachedLine], report: IngestReport
) -> list[PreparedRecord]:
    """Count the lines still known unchanged; parse the few that no longer are.

    The helper process looked the lines up before this batch was written, so the check is
    repeated here, where it sees exactly what the batch's own hash checks see.
    """
    cached = [item.key for item in batch if isinstance(item, CachedLine)]
    if not cached:
        return batch  # type: ignore[return-value]
    still = store.current_lines(cached)
    items: list[PreparedRecord] = []
    for item in batch:
        if not isinstance(item, CachedLine):
            items.append(item)
        elif item.key in still:
            report.unchanged += 1
        else:
            record = parse_line(item.line, item.where)
            if isinstance(record, Skipped):
                report.skipped.append({"source": spec, "where": record.where, "reason": record.reason})
            else:
                items.append(prepare_record(record, item.key))
    return items


_DONE = object()


def _prefetched(items: Iterable[object], depth: int = 4096) -> Iterator[object]:
    """Iterate `items` in a background thread, so parsing overlaps with SQLite writes.

    sqlite3 releases the GIL while a statement runs, so on two cores this nearly hides the
    cost of decompressing and parsing. Errors of the producer are re-raised here.
    """
    buffer: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        buffer.put(item, timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except BaseException as exc:  # noqa: BLE001 (handed to the consumer)
            failure.append(exc)
        finally:
            while not stop.is_set():
                try:
                    buffer.put(_DONE, timeout=0.1)
                    break
                except queue.Full:
                    continue

    thread = threading.Thread(target=produce, name="ingest-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                break
            yield item
        if failure:
            raise failure[0]
    finally:
        # The producer sees the flag within 0.1 s (or when its current read returns) and ends.
        stop.set()
