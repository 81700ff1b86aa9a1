"""Commands of the ingest stage and the store: ingest, unmerge, stats, show, settings."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import typer
from rich.table import Table

from papersift.cli import common
from papersift.cli.app import app
from papersift.errors import PapersiftError, UsageError
from papersift.ingest.merges import unmerge
from papersift.ingest.stage import Ingest
from papersift.latex import readable
from papersift.plugins import plugins
from papersift.settings import SETTINGS, settings_markdown
from papersift.sources import SourceOptions, parse_spec
from papersift.store import redact_url


def _day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise UsageError(f"{name} must be a date like 2026-11-01, not {value!r}") from None


def _source_help() -> str:
    return "SOURCE specs: " + "; ".join(
        f"{plugin.name}:{plugin.help.rsplit(', e.g. ', 1)[-1].split(':', 1)[-1]}"
        for plugin in plugins().sources)


@app.command("ingest")
def ingest_command(
    sources: list[str] = typer.Argument(..., help=_source_help()),
    since: str = typer.Option(None, "--since", "--from", help="Earliest date, YYYY-MM-DD."),
    until: str = typer.Option(None, "--until", help="Latest date, YYYY-MM-DD."),
    limit: int = typer.Option(None, "--limit", help="Stop each source after N records."),
    as_json: bool = common.json_option(),
) -> None:
    """Ingest papers from sources into the store (idempotent; run again to resume).

    Exit codes: 0 done, 1 a source failed, 2 usage error, 3 done but records were skipped.
    """
    for spec in sources:
        parse_spec(spec)
    options = SourceOptions(since=_day(since, "--since"), until=_day(until, "--until"), limit=limit)
    with common.store() as db, common.progress(quiet=as_json) as show:
        report = Ingest(sources, options).run(db, common.settings(), show)
    common.finish(report, as_json)


@app.command("stats")
def stats_command(as_json: bool = common.json_option()) -> None:
    """Counts of papers by source, primary category and month."""
    with common.store() as db:
        stats = db.papers.stats()
    common.output(stats, as_json, _print_stats)


def _print_stats(stats: dict[str, Any]) -> None:
    out = common.console
    out.print(f"{stats['papers']:,} papers ({stats['duplicates']:,} of them linked as duplicates), "
              f"{stats['authors']:,} authors")
    if stats["full_text_index_pending"]:
        out.print("[yellow]The indexes are being built by an ingest, or one was interrupted: "
                  "keyword search misses papers, and listings are slow, until `papersift "
                  "ingest` finishes them.[/yellow]")
    for title, key, top in (("source", "by_source", None), ("category", "by_category", 15),
                            ("month", "by_month", None)):
        table = common.figures_table(f"by {title}", (title, "papers"))
        for name, count in list(stats[key].items())[:top]:
            table.add_row(name, f"{count:,}")
        out.print(table)


@app.command("show")
def show_command(paper_id: str, as_json: bool = common.json_option()) -> None:
    """One paper as stored (exit 1 if it is not there)."""
    with common.store() as db:
        paper = db.papers.get_paper(paper_id.strip())
    if paper is None:
        raise PapersiftError(f"no paper {paper_id!r} in the store")
    common.output(paper, as_json, _print_paper)


def _print_paper(paper: dict[str, Any]) -> None:
    out = common.console
    out.print(f"[bold]{readable(paper['title'])}[/bold]", highlight=False, markup=False)
    out.print(", ".join(a["name"] for a in paper["authors"]), highlight=False, markup=False)
    out.print(f"{paper['id']}v{paper['version'] or '?'} · {' '.join(paper['categories'])} · "
              f"announced {paper['announced'] or '?'} · sources: {', '.join(paper['sources'])}",
              highlight=False, markup=False)
    if paper["duplicate_of"]:
        out.print(f"duplicate of {paper['duplicate_of']}")
    out.print(readable(paper["abstract"]), highlight=False, markup=False)


@app.command("settings")
def settings_command(
    as_json: bool = common.json_option(),
    markdown: bool = typer.Option(False, "--markdown", help="The README's table of defaults."),
) -> None:
    """Every setting with its value, environment variable and help."""
    if markdown:
        print(settings_markdown())
        return
    current = common.settings()
    rows = [{"name": s.name, "value": redact_url(getattr(current, s.name)) if s.name ==
             "database_url" else getattr(current, s.name), "default": s.default,
             "env": s.env_var, "help": s.help} for s in SETTINGS]
    common.output(rows, as_json, _print_settings)


def _print_settings(rows: list[dict[str, Any]]) -> None:
    table = Table()
    for column in ("name", "value", "env", "help"):
        table.add_column(column)
    for row in rows:
        secret = any(word in row["name"] for word in ("key", "token", "password"))
        table.add_row(row["name"], "***" if secret and row["value"] else str(row["value"]),
                      row["env"], row["help"])
    common.console.print(table)


@app.command("unmerge")
def unmerge_command(
    paper_id: str = typer.Argument(..., metavar="ID", help="A record merged into a paper (e.g. "
                                   "doi:10.1002/ece3.2314), or a paper to split into its records."),
    as_json: bool = common.json_option(),
) -> None:
    """Split a merged record from its paper (or a paper into its records); they stay apart.

    Exit codes: 0 done, 1 nothing was merged, 2 no such id.
    """
    with common.store() as db:
        result = unmerge(db, paper_id)
    common.output(result, as_json, _print_unmerge)


def _print_unmerge(result: dict[str, Any]) -> None:
    for undone in result["undone"]:
        why = f" (merged because {undone['reason']})" if undone["reason"] else ""
        common.say(f"{undone['record_id']} is a paper of its own again{why}")
