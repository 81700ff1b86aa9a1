"""The summaries stage: find papers whose summary is missing, stale or flagged, write, commit per batch."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from papersift.summarize.writers import BuiltinWriter, Writer, Written, input_hash


class SummarizeError(ValueError):
    """Bad arguments to the stage (unknown writer, unusable settings)."""


@dataclass
class SummarizeReport:
    """What one run of the stage did."""

    writer: str = ""
    identity: str = ""
    considered: int = 0
    todo: int = 0
    written: int = 0
    unchanged: int = 0
    fallbacks: int = 0
    retry_later: int = 0
    gate_failures: int = 0
    flagged: int = 0
    flagged_regenerated: int = 0
    flagged_hidden: int = 0
    tokens: int = 0
    seconds: float = 0.0
    error: str | None = None  # the writer's endpoint failed for good; the run stopped early
    notes: list[dict[str, str]] = field(default_factory=list)  # first few fallbacks, for the CLI

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["papers_per_second"] = round(self.written / self.seconds, 1) if self.seconds else None
        return data


def make_writer(name: str | None, settings: Any) -> Writer:
    """The writer of this name (default: settings.writer)."""
    name = (name or settings.writer or "builtin").strip().lower()
    if name == "builtin":
        return BuiltinWriter()
    if name == "llm":
        from papersift.summarize.llm import LLMError, LLMWriter

        try:
            return LLMWriter(settings)
        except LLMError as exc:
            raise SummarizeError(str(exc)) from None
    raise SummarizeError(f"unknown writer {name!r} (builtin or llm)")


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


def summarize_papers(
    store: Any, settings: Any, writer: str | Writer | None = None, since: str | None = None,
    redo: bool = False, on_progress: Callable[[int, int, SummarizeReport], None] | None = None,
    batch_size: int | None = None,
) -> dict[str, Any]:
    """Write summaries where missing or stale (or all with `redo`); resolve flagged ones.

    Idempotent and resumable: each batch is committed, and a summary is stale when the hash of
    the paper's title, abstract, authors and the writer's identity differs from the stored one.
    A flagged summary is regenerated; when the writer produces the same text again it is hidden.
    `since` (YYYY-MM-DD) limits the run to papers announced (or submitted) on or after it.
    Returns SummarizeReport.as_dict().
    """
    active = make_writer(writer, settings) if writer is None or isinstance(writer, str) else writer
    report = SummarizeReport(writer=active.name, identity=active.identity)
    started = time.perf_counter()
    todo: list[tuple[str, str]] = []      # (paper id, input hash)
    flagged: list[tuple[str, str]] = []
    for state in store.summary_states(since=since):
        report.considered += 1
        digest = input_hash(state, active.identity)
        if redo or state["summary_hash"] != digest:
            todo.append((state["id"], digest))
        elif state["flagged"] and not state["hidden"]:
            flagged.append((state["id"], digest))
    report.todo = len(todo) + len(flagged)
    report.unchanged = report.considered - report.todo
    report.flagged = len(flagged)
    size = batch_size or getattr(active, "batch_size", 200)
    done = 0
    try:
        if on_progress:
            on_progress(0, report.todo, report)
        for start in range(0, len(todo), size):
            chunk = todo[start:start + size]
            done += _write_batch(store, active, chunk, report)
            report.seconds = time.perf_counter() - started
            if on_progress:
                on_progress(done, report.todo, report)
            if getattr(active, "failure", None):
                report.error = f"{active.name} writer failed, stopped early: {active.failure}"
                break
        for start in range(0, 0 if report.error else len(flagged), size):
            chunk = flagged[start:start + size]
            done += _resolve_flagged(store, active, chunk, report)
            report.seconds = time.perf_counter() - started
            if on_progress:
                on_progress(done, report.todo, report)
    finally:
        close = getattr(active, "close", None)
        if close and (writer is None or isinstance(writer, str)):
            close()
    report.seconds = time.perf_counter() - started
    return report.as_dict()


def _papers(store: Any, chunk: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    by_id = {p["id"]: p for p in store.iter_papers(ids=[paper_id for paper_id, _ in chunk])}
    return [by_id[paper_id] for paper_id, _ in chunk if paper_id in by_id]


def _account(written: Written, report: SummarizeReport) -> None:
    report.tokens += written.tokens or 0
    if not written.passed:
        report.gate_failures += 1
    if written.notes and len(report.notes) < 50:
        report.notes.append({"paper": written.paper_id, "notes": "; ".join(written.notes)})
    if any(n == "replaced by the builtin writer" for n in written.notes):
        report.fallbacks += 1
    if written.retry_later:
        report.retry_later += 1


def _write_batch(store: Any, active: Writer, chunk: Sequence[tuple[str, str]],
                 report: SummarizeReport) -> int:
    hashes = dict(chunk)
    papers = _papers(store, chunk)
    results = active.write_many(papers)
    rows = []
    for written in results:
        _account(written, report)
        rows.append(_row(written, hashes[written.paper_id]))
    store.put_summaries(rows)
    report.written += len(rows)
    return len(chunk)


def _resolve_flagged(store: Any, active: Writer, chunk: Sequence[tuple[str, str]],
                     report: SummarizeReport) -> int:
    hashes = dict(chunk)
    papers = _papers(store, chunk)
    rows = []
    for written in active.write_many(papers):
        _account(written, report)
        old = store.get_summary(written.paper_id) or {}
        if (written.summary.tldr, written.summary.blurb) == (old.get("tldr"), old.get("blurb")):
            # The writer would say the same again: stop showing what a reader reported as wrong.
            store.hide_summary(written.paper_id, f"hidden after flag: {old.get('flag_reason')}")
            report.flagged_hidden += 1
            continue
        rows.append(_row(written, hashes[written.paper_id],
                         flag_note=f"regenerated after flag: {old.get('flag_reason')}"))
        report.flagged_regenerated += 1
    store.put_summaries(rows)
    report.written += len(rows)
    return len(chunk)


def flag_paper(store: Any, settings: Any, paper_id: str, reason: str,
               writer: str | Writer | None = None) -> dict[str, Any]:
    """Flag a paper's summary as wrong and resolve it now: regenerated if the writer now says
    something different, else hidden. Raises KeyError when the paper has no summary."""
    if not store.flag_summary(paper_id, reason):
        raise KeyError(paper_id)
    active = make_writer(writer, settings) if writer is None or isinstance(writer, str) else writer
    report = SummarizeReport(writer=active.name, identity=active.identity, flagged=1)
    try:
        papers = list(store.iter_papers(ids=[paper_id]))
        if papers:
            _resolve_flagged(store, active, [(paper_id, input_hash(papers[0], active.identity))],
                             report)
        else:  # a duplicate or vanished paper: nothing to regenerate from
            store.hide_summary(paper_id, f"hidden after flag: {reason}")
            report.flagged_hidden = 1
    finally:
        close = getattr(active, "close", None)
        if close and (writer is None or isinstance(writer, str)):
            close()
    summary = store.get_summary(paper_id) or {}
    return {"paper": paper_id, "regenerated": bool(report.flagged_regenerated),
            "hidden": bool(summary.get("hidden")), "summary": summary}
