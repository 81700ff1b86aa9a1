"""The summaries stage: find papers whose summary is missing, stale or flagged, write, commit per batch."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from papersift.errors import PapersiftError
from papersift.plugins import plugins
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store
from papersift.summarize.writers import SummarizeError, Writer, Written, input_hash

__all__ = ["Summarize", "SummarizeError", "flag_paper", "make_writer"]


class _Tally:
    """What one run of the stage has done so far."""

    def __init__(self, writer: Writer) -> None:
        self.writer, self.identity = writer.name, writer.identity
        self.considered = self.todo = self.written = self.unchanged = 0
        self.fallbacks = self.retry_later = self.gate_failures = self.tokens = 0
        self.flagged = self.flagged_regenerated = self.flagged_hidden = 0
        self.no_abstract = 0  # papers a source gave no abstract: no blurb is made up
        self.error: str | None = None  # the writer's endpoint failed for good; stopped early
        self.notes: list[dict[str, str]] = []  # first few fallbacks, for the CLI
        self.started = time.perf_counter()

    def report(self) -> Report:
        seconds = time.perf_counter() - self.started
        return Report(
            stage="summarize", seconds=seconds, error=self.error,
            counts={"written": self.written, "considered": self.considered,
                    "unchanged": self.unchanged, "fallbacks": self.fallbacks,
                    "gate_failures": self.gate_failures, "retry_later": self.retry_later,
                    "flagged": self.flagged, "flagged_regenerated": self.flagged_regenerated,
                    "flagged_hidden": self.flagged_hidden, "no_abstract": self.no_abstract,
                    "tokens": self.tokens},
            details={"writer": self.writer, "identity": self.identity, "notes": self.notes,
                     "papers_per_second": round(self.written / seconds, 1) if seconds else None})


def make_writer(name: str | None, settings: Settings) -> Writer:
    """The writer of this name (default: settings.writer); SummarizeError if unknown."""
    name = (name or settings.writer or "builtin").strip().lower()
    if name not in plugins().writers:
        raise SummarizeError(f"unknown writer {name!r} ({', '.join(plugins().writers.names())})")
    return plugins().writers.get(name).make(settings)


def _row(written: Written, digest: str, flag_note: str | None = None) -> dict[str, Any]:
    notes = list(written.notes)
    if written.retry_later:
        # A stand-in written while the endpoint was failing: stale on purpose, so the next run
        # asks the endpoint again instead of keeping the stand-in for good.
        digest = "retry:" + digest
    if flag_note:
        notes.append(flag_note)
    return {
        "paper_id": written.paper_id, "tldr": written.summary.tldr, "blurb": written.summary.blurb,
        "writer": written.writer, "model": written.model, "prompt_version": written.prompt_version,
        "input_hash": digest, "notes": "; ".join(notes) or None, "tokens": written.tokens,
        "seconds": round(written.seconds, 4),
        # A summary that fails the gate even after every fallback is kept but not shown.
        "hidden": not written.passed,
    }


class Summarize:
    """Write summaries where missing or stale (or all with `redo`); resolve flagged ones.

    Idempotent and resumable: each batch is committed, and a summary is stale when the hash
    of the paper's title, abstract, authors and the writer's identity differs from the
    stored one. A flagged summary is regenerated; when the writer produces the same text
    again it is hidden. `since` (YYYY-MM-DD) limits the run to papers announced (or
    submitted) on or after it. A writer given by name is made (and closed) by the run.
    """

    name = "summarize"

    def __init__(self, writer: str | Writer | None = None, since: str | None = None,
                 redo: bool = False, batch_size: int | None = None) -> None:
        self.writer, self.since, self.redo, self.batch_size = writer, since, redo, batch_size

    def run(self, store: Store, settings: Settings,
            on_progress: OnProgress = no_progress) -> Report:
        own = self.writer is None or isinstance(self.writer, str)
        active = make_writer(self.writer, settings) if own else self.writer
        try:
            return self._run(store, active, on_progress)
        finally:
            if own:
                active.close()

    def _run(self, store: Store, active: Writer, on_progress: OnProgress) -> Report:
        tally = _Tally(active)
        todo, flagged = self._todo(store, active, tally)
        size = self.batch_size or active.batch_size
        done = 0
        on_progress(Progress(self.name, 0, tally.todo))
        for start in range(0, len(todo), size):
            done += _write_batch(store, active, todo[start:start + size], tally)
            on_progress(Progress(self.name, done, tally.todo))
            if active.failure:
                tally.error = f"{active.name} writer failed, stopped early: {active.failure}"
                break
        for start in range(0, 0 if tally.error else len(flagged), size):
            done += _resolve_flagged(store, active, flagged[start:start + size], tally)
            on_progress(Progress(self.name, done, tally.todo))
        return tally.report()

    def _todo(self, store: Store, active: Writer, tally: _Tally
              ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(papers to write, flagged papers to resolve), each as (paper id, input hash)."""
        todo: list[tuple[str, str]] = []
        flagged: list[tuple[str, str]] = []
        for state in store.summaries.summary_states(since=self.since):
            if not (state["abstract"] or "").strip():
                # A journal record without an abstract (Crossref's often): any blurb would be
                # written from the title alone, an invention; the paper page says so instead.
                tally.no_abstract += 1
                continue
            tally.considered += 1
            digest = input_hash(state, active.identity)
            if self.redo or state["summary_hash"] != digest:
                todo.append((state["id"], digest))
            elif state["flagged"] and not state["hidden"]:
                flagged.append((state["id"], digest))
        tally.todo = len(todo) + len(flagged)
        tally.unchanged = tally.considered - tally.todo
        tally.flagged = len(flagged)
        return todo, flagged


def _papers(store: Store, chunk: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    by_id = {p["id"]: p for p in store.papers.iter_papers(ids=[pid for pid, _ in chunk])}
    return [by_id[paper_id] for paper_id, _ in chunk if paper_id in by_id]


def _account(written: Written, tally: _Tally) -> None:
    tally.tokens += written.tokens or 0
    if not written.passed:
        tally.gate_failures += 1
    if written.notes and len(tally.notes) < 50:
        tally.notes.append({"paper": written.paper_id, "notes": "; ".join(written.notes)})
    if any(n == "replaced by the builtin writer" for n in written.notes):
        tally.fallbacks += 1
    if written.retry_later:
        tally.retry_later += 1


def _write_batch(store: Store, active: Writer, chunk: Sequence[tuple[str, str]],
                 tally: _Tally) -> int:
    hashes = dict(chunk)
    papers = _papers(store, chunk)
    results = active.write_many(papers)
    rows = []
    for written in results:
        _account(written, tally)
        rows.append(_row(written, hashes[written.paper_id]))
    store.summaries.put_summaries(rows)
    tally.written += len(rows)
    return len(chunk)


def _resolve_flagged(store: Store, active: Writer, chunk: Sequence[tuple[str, str]],
                     tally: _Tally) -> int:
    hashes = dict(chunk)
    papers = _papers(store, chunk)
    rows = []
    for written in active.write_many(papers):
        _account(written, tally)
        old = store.summaries.get_summary(written.paper_id) or {}
        if (written.summary.tldr, written.summary.blurb) == (old.get("tldr"), old.get("blurb")):
            # The writer would say the same again: stop showing what a reader reported as wrong.
            store.summaries.hide_summary(written.paper_id,
                                         f"hidden after flag: {old.get('flag_reason')}")
            tally.flagged_hidden += 1
            continue
        rows.append(_row(written, hashes[written.paper_id],
                         flag_note=f"regenerated after flag: {old.get('flag_reason')}"))
        tally.flagged_regenerated += 1
    store.summaries.put_summaries(rows)
    tally.written += len(rows)
    return len(chunk)


def flag_paper(store: Store, settings: Settings, paper_id: str, reason: str,
               writer: str | Writer | None = None) -> dict[str, Any]:
    """Flag a paper's summary as wrong and resolve it now: regenerated if the writer now says
    something different, else hidden."""
    if not store.summaries.flag_summary(paper_id, reason):
        raise PapersiftError(f"no summary for paper {paper_id!r}; run `papersift summarize` first")
    own = writer is None or isinstance(writer, str)
    active = make_writer(writer, settings) if own else writer
    tally = _Tally(active)
    try:
        papers = list(store.papers.iter_papers(ids=[paper_id]))
        if papers:
            _resolve_flagged(store, active, [(paper_id, input_hash(papers[0], active.identity))],
                             tally)
        else:  # a duplicate or vanished paper: nothing to regenerate from
            store.summaries.hide_summary(paper_id, f"hidden after flag: {reason}")
    finally:
        if own:
            active.close()
    summary = store.summaries.get_summary(paper_id) or {}
    return {"paper": paper_id, "regenerated": bool(tally.flagged_regenerated),
            "hidden": bool(summary.get("hidden")), "summary": summary}
