"""Commands of the summaries stage: summarize, flag, eval tldr, eval style."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import typer

from papersift.cli import common
from papersift.cli.app import app, eval_app
from papersift.errors import UsageError
from papersift.summarize.evaluate import evaluate_file
from papersift.summarize.stage import Summarize, flag_paper
from papersift.summarize.style_eval import evaluate_style, file_blurbs, store_blurbs


def _day(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date().isoformat()
    except ValueError:
        raise UsageError(f"--since must be a date like 2026-11-01, not {value!r}") from None


@app.command("summarize")
def summarize_command(
    writer: str = typer.Option(None, "--writer", help="builtin (default, offline) or llm "
                               "(PAPERSIFT_LLM_URL, PAPERSIFT_LLM_MODEL)."),
    since: str = typer.Option(None, "--since", help="Only papers announced on or after YYYY-MM-DD."),
    redo: bool = typer.Option(False, "--redo", help="Rewrite every summary, not only missing/stale."),
    as_json: bool = common.json_option(),
) -> None:
    """Write a TL;DR and blurb for every paper that lacks one or whose text changed.

    Resumable: each batch is committed, so an interrupted run continues where it stopped.
    Flagged summaries are regenerated, or hidden when the writer would say the same again.
    """
    stage = Summarize(writer=writer, since=_day(since), redo=redo)
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = stage.run(db, common.settings(), show)
    if not as_json:
        for item in report.details["notes"][:10]:
            common.say(f"  {item['paper']}: {item['notes']}")
        if report.error:
            common.say("what was written is kept; run again to resume")
    common.finish(report, as_json)


@app.command("flag")
def flag_command(
    paper_id: str = typer.Argument(..., help="Paper id whose summary is wrong."),
    reason: str = typer.Option(..., "--reason", help="What is wrong with it."),
    as_json: bool = common.json_option(),
) -> None:
    """Flag a summary as wrong: it is regenerated now, or hidden if the writer would repeat it."""
    if not reason.strip():
        raise UsageError("--reason must say what is wrong")
    with common.store() as db:
        result = flag_paper(db, common.settings(), paper_id.strip(), reason)
    common.output(result, as_json, _print_flag)


def _print_flag(result: dict[str, Any]) -> None:
    state = "regenerated" if result["regenerated"] else "hidden" if result["hidden"] else "flagged"
    common.say(f"{result['paper']}: {state}")
    if result["regenerated"]:
        common.say(result["summary"]["blurb"])


@eval_app.command("tldr")
def eval_tldr_command(
    data: Path = typer.Option(..., "--data", help="SciTLDR-layout JSONL (source, target, title)."),
    as_json: bool = common.json_option(),
) -> None:
    """ROUGE-1/2/L F1 of built-in TL;DRs beside the lead-sentence baseline (max over references)."""
    report = evaluate_file(data)
    common.output(report, as_json, lambda _: _print_tldr(data, report))


def _print_tldr(data: Path, report: dict[str, Any]) -> None:
    table = common.figures_table(f"TL;DR on {data} ({report['papers']:,} papers)", (
        "system", "ROUGE-1", "ROUGE-2", "ROUGE-L", "mean words", "seconds"))
    for name, row in report["systems"].items():
        table.add_row(name, f"{row['rouge1']:.4f}", f"{row['rouge2']:.4f}", f"{row['rougeL']:.4f}",
                      f"{row['mean_words']:.1f}", f"{row['seconds']:.2f}")
    common.console.print(table)


_RULE_NAMES = {"hype": "hype words", "self_reference": "self-reference",
               "dangling": "dangling openers", "title_name": "title's name missing"}


@eval_app.command("style")
def eval_style_command(
    data: Path = typer.Option(None, "--data", help="JSON lines with 'blurb' (and 'title', "
                              "'abstract', 'id'); default: the store's visible blurbs."),
    examples: int = typer.Option(3, "--examples", min=0, help="Examples to show per rule."),
    as_json: bool = common.json_option(),
) -> None:
    """Count the blurbs that break each house-style rule (hype, self-reference, dangling
    openers, the title's name missing); docs/style.md describes the rules."""
    skipped: list[dict[str, str]] = []
    if data is not None:
        report = evaluate_style(file_blurbs(data, skipped), examples=examples)
        report["data"] = str(data)
    else:
        with common.store(readonly=True) as db:
            report = evaluate_style(store_blurbs(db), examples=examples)
            report["data"] = str(common.settings().paths.database)
    report["skipped"] = skipped
    common.output(report, as_json, _print_style)
    if skipped:
        raise typer.Exit(common.EXIT_SKIPPED)


def _print_style(report: dict[str, Any]) -> None:
    table = common.figures_table(
        f"House style of {report['blurbs']:,} blurbs ({report['data']})",
        ("rule", "blurbs", "of", "rate", "target"))
    for rule, row in report["rules"].items():
        target = f"≤ {row['target']:.1%}".replace(".0%", "%") if row["target"] else "0"
        table.add_row(_RULE_NAMES.get(rule, rule), f"{row['blurbs']:,}", f"{row['of']:,}",
                      f"{row['rate']:.2%}", target + ("" if row["met"] else " ✗"))
    common.console.print(table)
    sentences, gate = report["sentences"], report["gate"]
    common.say(f"sentences: median {sentences['median']} (target ≤ {sentences['target']}"
               f"{'' if sentences['met'] else ' ✗'}); "
               + ", ".join(f"{n}: {count:,}" for n, count in sentences["counts"].items()))
    common.say(f"faithfulness gate: {gate['passed']:,} of {gate['of']:,} pass"
               f"{'' if gate['met'] else ' ✗'}")
    for rule, row in report["rules"].items():
        for example in row["examples"]:
            common.say(f"  {_RULE_NAMES.get(rule, rule)}: {example['id']} [{example['evidence']}]"
                       f" {example['blurb'][:240]}")
    for item in report["skipped"][:10]:
        common.say(f"  skipped {item['where']}: {item['reason']}")
