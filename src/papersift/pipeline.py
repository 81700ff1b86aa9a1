"""The whole pipeline as a list of stages: ingest the configured sources, keep the keyword postings, embed, group into topics, summarize, link papers into threads, write weekly briefs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Protocol

from papersift.briefs.stage import Briefs
from papersift.ingest.stage import Ingest
from papersift.links.stage import Links
from papersift.search.keywords_stage import Keywords
from papersift.search.stage import Embed
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.stages import OnProgress, Report, no_progress
from papersift.store import Store
from papersift.summarize.stage import Summarize
from papersift.topics.stage import Topics


class Stage(Protocol):
    """A step of the pipeline; its options are given when it is made."""

    name: str

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report: ...


def stages(settings: Settings, sources: Sequence[str] | None = None,
           limit: int | None = None) -> list[Stage]:
    """The stages of `papersift update`, in order."""
    specs = list(sources) if sources is not None else settings.sources.split()
    # A file is ingested whole; network sources only ask for the last few days.
    live = any(not spec.startswith("file:") for spec in specs)
    since = date.today() - timedelta(days=max(0, int(settings.since_days)))
    options = SourceOptions(since=since if live else None, limit=limit)
    return [Ingest(specs, options), Keywords(), Embed(), Topics(), Summarize(), Links(), Briefs()]


def update(store: Store, settings: Settings, on_progress: OnProgress = no_progress,
           sources: Sequence[str] | None = None, limit: int | None = None) -> list[Report]:
    """Run every stage once, incrementally; one Report per stage.

    A stage that fails is reported (its Report's `error`) and the next one still runs: cron
    keeps going. With no papers in the store after ingesting, the later stages are not run.
    Safe while the site serves: each stage commits in small transactions.
    """
    reports = []
    for stage in stages(settings, sources, limit):
        if stage.name != "ingest" and not store.papers.count_papers():
            reports.append(Report(stage=stage.name, details={"not_run": "no papers in the store"}))
            continue
        reports.append(run_stage(stage, store, settings, on_progress))
    return reports


def run_stage(stage: Stage, store: Store, settings: Settings,
              on_progress: OnProgress = no_progress) -> Report:
    """Run one stage; an exception becomes its Report's error (the pipeline goes on)."""
    started = time.perf_counter()
    try:
        return stage.run(store, settings, on_progress)
    except Exception as exc:  # one broken stage must not stop the others
        return Report(stage=stage.name, error=f"{type(exc).__name__}: {exc}",
                      seconds=time.perf_counter() - started)


def every_source_failed(reports: Sequence[Report]) -> bool:
    """Whether the ingest stage read nothing because every source failed (no network?)."""
    for report in reports:
        if report.stage == "ingest":
            sources = report.details.get("sources") or []
            return bool(sources) and len(report.failures) == len(sources)
    return False
