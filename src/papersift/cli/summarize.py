"""Commands of the summaries stage: summarize, flag, eval tldr."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import typer

from papersift.cli import common
from papersift.cli.app import app, eval_app


def _day(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date().isoformat()
    except ValueError:
        raise common.fail(f"--since must be a date like 2026-11-01, not {value!r}",
                          common.EXIT_USAGE) from None


@app.command("summarize")
def summarize_command(
    writer: str = typer.Option(None, "--writer", help="builtin (default, offline) or llm "
                               "(PAPERSIFT_LLM_URL, PAPERSIFT_LLM_MODEL)."),
    since: str = typer.Option(None, "--since", help="Only papers announced on or after YYYY-MM-DD."),
    redo: bool = typer.Option(False, "--redo", help="Rewrite every summary, not only missing/stale."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Write a TL;DR and blurb for every paper that lacks one or whose text changed.

    Resumable: each batch is committed, so an interrupted run continues where it stopped.
    Flagged summaries are regenerated, or hidden when the writer would say the same again.
    """
    from papersift.summarize.stage import SummarizeError, summarize_papers

    if writer is not None and writer not in ("builtin", "llm"):
        raise common.fail(f"--writer must be builtin or llm, not {writer!r}", common.EXIT_USAGE)
    since_day = _day(since)
    settings = common.settings()
    with common.store() as db, common.progress(disable=as_json) as bar:
        task = bar.add_task("summarize", total=None, rate="")

        def show(done: int, total: int, report: object) -> None:
            seconds = getattr(report, "seconds", 0.0)
            rate = f"{done / seconds:,.0f}/s" if seconds and done else ""
            bar.update(task, completed=done, total=total or None, rate=rate)

        try:
            report = summarize_papers(db, settings, writer=writer, since=since_day, redo=redo,
                                      on_progress=show)
        except SummarizeError as exc:
            raise common.fail(str(exc), common.EXIT_USAGE) from None
    if as_json:
        common.emit_json(report)
        if report["error"]:
            raise typer.Exit(common.EXIT_FAILED)
        return
    out = common.console
    out.print(
        f"[bold]{report['written']:,}[/bold] summaries written by {report['writer']} "
        f"({report['considered']:,} papers considered) in {report['seconds']:.1f}s; "
        f"{report['fallbacks']:,} fell back to builtin, {report['gate_failures']:,} failed the gate "
        f"(hidden), flagged: {report['flagged_regenerated']} regenerated, "
        f"{report['flagged_hidden']} hidden" + (f"; {report['tokens']:,} tokens" if report["tokens"] else ""),
        highlight=False)
    for item in report["notes"][:10]:
        out.print(f"  {item['paper']}: {item['notes']}", highlight=False, markup=False)
    if report["error"]:
        out.print(f"[red]error:[/red] {report['error']}; what was written is kept, "
                  "run again to resume", highlight=False)
        raise typer.Exit(common.EXIT_FAILED)


@app.command("flag")
def flag_command(
    paper_id: str = typer.Argument(..., help="Paper id whose summary is wrong."),
    reason: str = typer.Option(..., "--reason", help="What is wrong with it."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Flag a summary as wrong: it is regenerated now, or hidden if the writer would repeat it."""
    from papersift.summarize.stage import SummarizeError, flag_paper

    if not reason.strip():
        raise common.fail("--reason must say what is wrong", common.EXIT_USAGE)
    with common.store() as db:
        try:
            result = flag_paper(db, common.settings(), paper_id.strip(), reason)
        except KeyError:
            raise common.fail(f"no summary for paper {paper_id!r}; run `papersift summarize` first") from None
        except SummarizeError as exc:
            raise common.fail(str(exc), common.EXIT_USAGE) from None
    if as_json:
        common.emit_json(result)
        return
    state = "regenerated" if result["regenerated"] else "hidden" if result["hidden"] else "flagged"
    common.console.print(f"{paper_id}: {state}", highlight=False)
    if result["regenerated"]:
        common.console.print(result["summary"]["blurb"], highlight=False, markup=False)


@eval_app.command("tldr")
def eval_tldr_command(
    data: Path = typer.Option(..., "--data", help="SciTLDR-layout JSONL (source, target, title)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """ROUGE-1/2/L F1 of built-in TL;DRs beside the lead-sentence baseline (max over references)."""
    from papersift.summarize.evaluate import EvalDataError, evaluate_file

    try:
        report = evaluate_file(data)
    except EvalDataError as exc:
        raise common.fail(str(exc), common.EXIT_USAGE) from None
    if as_json:
        common.emit_json(report)
        return
    table = common.figures_table(f"TL;DR on {data} ({report['papers']:,} papers)", (
        "system", "ROUGE-1", "ROUGE-2", "ROUGE-L", "mean words", "seconds"))
    for name, row in report["systems"].items():
        table.add_row(name, f"{row['rouge1']:.4f}", f"{row['rouge2']:.4f}", f"{row['rougeL']:.4f}",
                      f"{row['mean_words']:.1f}", f"{row['seconds']:.2f}")
    common.console.print(table)
