"""The ingest stage: stream records from sources into the store in committed batches, and report."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from papersift.records import PaperRecord, Skipped, SourceError
from papersift.settings import Settings
from papersift.sources import SourceOptions, open_source
from papersift.store import Store
from papersift.store.db import utc_now

# Commit at least this often so a slow network source loses little when killed.
_FLUSH_SECONDS = 5.0


@dataclass
class IngestReport:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    failed_sources: list[dict[str, str]] = field(default_factory=list)
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
    batch_size: int = 2000,
    on_batch: Callable[[IngestReport], None] | None = None,
) -> IngestReport:
    """Ingest every SOURCE spec in order. A failing source is reported and the next one runs.

    Each batch is one transaction, and a record that its source already gave unchanged is
    recognised by its hash, so an interrupted run resumes by simply running it again.
    """
    report = IngestReport()
    started, started_at = time.perf_counter(), utc_now()
    for spec in specs:
        batch: list[PaperRecord] = []
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal batch, last_flush
            if batch:
                result = store.upsert_papers(batch)
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
            for item in _prefetched(open_source(spec, options, settings, client=client)):
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
    report.seconds = time.perf_counter() - started
    store.record_ingest_run(list(specs), started_at, report.as_dict())
    return report


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
