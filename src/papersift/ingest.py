"""The ingest stage: stream records from sources into the store in committed batches, and report."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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
            for item in open_source(spec, options, settings, client=client):
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
