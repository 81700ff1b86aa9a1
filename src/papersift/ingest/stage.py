"""The ingest stage: stream records from sources into the store in committed batches, and report."""

from __future__ import annotations

import contextlib
import gc
import queue
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import httpx

from papersift.clock import utc_now
from papersift.ingest.files import file_items
from papersift.plugins import plugins
from papersift.records import PaperRecord, RecordLimits, Skipped, SourceError, check_record, shown
from papersift.records.prepare import PreparedRecord, prepare_record
from papersift.settings import Settings
from papersift.sources import SourceOptions, open_parsed, parse_spec
from papersift.sources.files import KnownLine, parse_line
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store

# Commit at least this often so a slow network source loses little when killed.
_FLUSH_SECONDS = 5.0
# Below this much file data, starting a helper process for the full-text index gains nothing.
_PARALLEL_INDEX_MIN_BYTES = 1 << 20


class Ingest:
    """The ingest stage: every SOURCE spec in order, into the store in committed batches.

    A failing source is reported and the next one runs. Each batch is one transaction, and a
    record its source already gave unchanged is recognised by its hash, so an interrupted
    run resumes by simply running it again. Into a store with no papers, the indexes are
    built beside and after the load (Papers.bulk_load): by default when the files to
    read are big enough to gain.
    """

    name = "ingest"

    def __init__(self, sources: Sequence[str], options: SourceOptions = SourceOptions(),
                 client: httpx.Client | None = None, batch_size: int = 10_000,
                 parallel_index: bool | None = None) -> None:
        self.sources = list(sources)
        self.options = options
        self.client = client
        self.batch_size = batch_size
        self.parallel_index = parallel_index

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        sources = [_parsed(spec) for spec in self.sources]
        wanted = self.parallel_index
        if wanted is None:
            wanted = _file_bytes(s.local_file for s in sources) >= _PARALLEL_INDEX_MIN_BYTES
        # With --limit the most there can be is known: a bar with time left, not a counter.
        most = self.options.limit * len(self.sources) if self.options.limit else None
        tally = _Tally(store, on_progress, RecordLimits.from_settings(settings), most)
        started_at = utc_now()
        on_progress(Progress(self.name, 0, most))
        with _collector_paused(), store.papers.bulk_load(wanted) as tally.parallel_index:
            for source in sources:
                self._source(store, settings, source, tally)
        report = tally.report(self.sources)
        store.papers.record_ingest_run(self.sources, started_at, report.as_dict())
        return report

    def _source(self, store: Store, settings: Settings, source: _Source, tally: _Tally) -> None:
        spec = source.spec
        batch: list[PreparedRecord | KnownLine] = []
        last_flush = time.monotonic()
        items = _prepared_items(store, source, self.options, settings, self.client, tally.limits)
        try:
            for item in items:
                if isinstance(item, Skipped):
                    tally.skipped.append({"source": spec, "where": item.where,
                                          "reason": item.reason})
                    continue
                batch.append(item)
                if len(batch) >= self.batch_size or time.monotonic() - last_flush > _FLUSH_SECONDS:
                    tally.flush(spec, batch)
                    batch, last_flush = [], time.monotonic()
        except SourceError as exc:
            tally.failures.append({"source": spec, "error": str(exc)})
        except Exception as exc:  # noqa: BLE001 (one source's bug must not cost the others)
            tally.failures.append({"source": spec, "error": f"stopped by an unexpected "
                                   f"{type(exc).__name__}: {str(exc)[:300]}"})
        # Not in `finally`: after a crash or an interrupt the partial batch is simply redone.
        tally.flush(spec, batch)


class _Tally:
    """What an ingest run has done so far."""

    def __init__(self, store: Store, on_progress: OnProgress, limits: RecordLimits,
                 most: int | None = None) -> None:
        self.store, self.on_progress, self.limits, self.most = store, on_progress, limits, most
        self.started = time.perf_counter()
        self.new = self.updated = self.unchanged = 0
        self.duplicates: list[dict[str, str]] = []
        self.skipped: list[dict[str, str]] = []
        self.failures: list[dict[str, str]] = []
        self.parallel_index = False  # the full-text index was built beside the load

    def flush(self, spec: str, batch: list[PreparedRecord | KnownLine]) -> None:
        if batch:
            result = self.store.papers.upsert_papers(self.confirm_cached(spec, batch))
            self.new += len(result.new)
            self.updated += len(result.updated)
            self.unchanged += result.unchanged
            self.duplicates += [{"id": a, "duplicate_of": b} for a, b in result.duplicates]
        self.on_progress(Progress("ingest", self.new + self.updated + self.unchanged, self.most))

    def confirm_cached(self, spec: str, batch: list[PreparedRecord | KnownLine]
                       ) -> list[PreparedRecord]:
        """Count the lines still known unchanged; parse the few that no longer are.

        The helper process looked the lines up before this batch was written, so the check
        is repeated here, where it sees exactly what the batch's own hash checks see.
        """
        cached = [item.key for item in batch if isinstance(item, KnownLine)]
        if not cached:
            return batch  # type: ignore[return-value]
        still = self.store.papers.current_lines(cached)
        items: list[PreparedRecord] = []
        for item in batch:
            if not isinstance(item, KnownLine):
                items.append(item)
            elif item.key in still:
                self.unchanged += 1
            else:
                record = parse_line(item.line, item.where, self.limits)
                if isinstance(record, Skipped):
                    self.skipped.append({"source": spec, "where": record.where,
                                         "reason": record.reason})
                else:
                    items.append(prepare_record(record, item.key))
        return items

    def report(self, sources: list[str]) -> Report:
        seconds = time.perf_counter() - self.started
        seen = self.new + self.updated + self.unchanged
        return Report(
            stage="ingest", seconds=seconds,
            counts={"new": self.new, "updated": self.updated, "unchanged": self.unchanged,
                    "duplicates": len(self.duplicates), "skipped": len(self.skipped)},
            skipped=self.skipped, failures=self.failures,
            details={"sources": sources, "duplicates": self.duplicates,
                     "parallel_index": self.parallel_index,
                     "papers_per_second": round(seen / seconds, 1) if seconds else None})


class _Source(NamedTuple):
    spec: str
    kind: str
    arg: str
    local_file: Path | None  # the file a local source reads (None: remote, or missing)


def _parsed(spec: str) -> _Source:
    """A spec read once; a missing file is reported when its source is read."""
    kind, arg = parse_spec(spec)
    local_file, path = plugins().sources.get(kind).local_file, None
    if local_file is not None:
        with contextlib.suppress(SourceError):
            path = local_file(arg)
    return _Source(spec, kind, arg, path)


def _file_bytes(files: Iterable[Path | None]) -> int:
    total = 0
    for path in files:
        if path is not None:
            with contextlib.suppress(OSError):
                total += path.stat().st_size
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


def _prepared_items(
    store: Store, source: _Source, options: SourceOptions, settings: Settings,
    client: httpx.Client | None, limits: RecordLimits,
) -> Iterator[PreparedRecord | KnownLine | Skipped]:
    """The items of one source, checked and prepared for the store off the writing thread."""
    if source.local_file is not None:
        # Bulk files: parse and prepare in a helper process, so that this process only runs
        # SQL (a thread would share the GIL with the writer's Python work).
        yield from file_items(source.local_file, options, store.location, limits)
        return
    records = _checked(open_parsed(source.kind, source.arg, options, settings, client=client),
                       limits)
    for item in _prefetched(records):
        yield item if isinstance(item, Skipped) else prepare_record(item)  # type: ignore[arg-type]


def _checked(items: Iterable[PaperRecord | Skipped], limits: RecordLimits
             ) -> Iterator[PaperRecord | Skipped]:
    """Every record of a source through records.check_record: the edge of the store."""
    for item in items:
        if isinstance(item, Skipped):
            yield item
            continue
        try:
            yield check_record(item, limits)
        except ValueError as exc:
            yield Skipped(item.source, f"{item.source} record {shown(item.id)}", str(exc))


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
