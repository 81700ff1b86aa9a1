"""Commands of the ingest stage and the store: ingest, stats, show, settings."""

from __future__ import annotations

from datetime import date, datetime

import typer
from rich.table import Table

from papersift.cli import common
from papersift.cli.app import app
from papersift.ingest import IngestReport, ingest
from papersift.records import SourceError
from papersift.settings import SETTINGS, settings_markdown
from papersift.sources import SOURCE_KINDS, SourceOptions, SpecError, parse_spec


def _day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%d").date()
    except ValueError:
        raise common.fail(
            f"{name} must be a date like 2026-11-01, not {value!r}", common.EXIT_USAGE
        ) from None


@app.command("ingest")
def ingest_command(
    sources: list[str] = typer.Argument(
        ..., help="SOURCE specs: " + "; ".join(f"{k}:{v[1].split(', e.g. ')[-1].split(':', 1)[-1]}"
                                              for k, v in SOURCE_KINDS.items())),
    since: str = typer.Option(None, "--since", "--from", help="Earliest date, YYYY-MM-DD."),
    until: str = typer.Option(None, "--until", help="Latest date, YYYY-MM-DD."),
    limit: int = typer.Option(None, "--limit", help="Stop each source after N records."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Ingest papers from sources into the store (idempotent; run again to resume).

    Exit codes: 0 done, 1 a source failed, 2 usage error, 3 done but records were skipped.
    """
    for spec in sources:
        try:
            parse_spec(spec)
        except SpecError as exc:
            raise common.fail(str(exc), common.EXIT_USAGE) from None
    options = SourceOptions(since=_day(since, "--since"), until=_day(until, "--until"), limit=limit)
    settings = common.settings()
    with common.store() as db, common.progress(disable=as_json) as bar:
        task = bar.add_task("ingest", total=None, rate="")

        def show(report: IngestReport) -> None:
            rate = f"{report.seen / report.seconds:,.0f}/s" if report.seconds else ""
            bar.update(task, completed=report.seen, rate=rate)

        try:
            report = ingest(db, sources, settings, options=options, on_batch=show)
        except SourceError as exc:  # raised before any record, e.g. a missing file
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(report.as_dict())
    else:
        _print_report(report)
    if report.failed_sources:
        raise typer.Exit(common.EXIT_FAILED)
    if report.skipped:
        raise typer.Exit(common.EXIT_SKIPPED)


def _print_report(report: IngestReport) -> None:
    out = common.console
    out.print(
        f"[bold]{report.new:,}[/bold] new, [bold]{report.updated:,}[/bold] updated, "
        f"[bold]{report.unchanged:,}[/bold] unchanged, {len(report.duplicates):,} linked as "
        f"duplicates, [bold]{len(report.skipped):,}[/bold] skipped "
        f"in {report.seconds:.1f}s", highlight=False)
    for item in report.skipped[:20]:
        out.print(f"  skipped {item['where']}: {item['reason']}", highlight=False)
    if len(report.skipped) > 20:
        out.print(f"  ... and {len(report.skipped) - 20} more (use --json for all)")
    for item in report.failed_sources:
        out.print(f"[red]failed[/red] {item['source']}: {item['error']}", highlight=False)


@app.command("stats")
def stats_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Counts of papers by source, primary category and month."""
    with common.store() as db:
        stats = db.stats()
    if as_json:
        common.emit_json(stats)
        return
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
def show_command(paper_id: str, as_json: bool = typer.Option(False, "--json")) -> None:
    """One paper as stored (exit 1 if it is not there)."""
    with common.store() as db:
        paper = db.get_paper(paper_id.strip())
    if paper is None:
        raise common.fail(f"no paper {paper_id!r} in the store")
    if as_json:
        common.emit_json(paper)
        return
    out = common.console
    out.print(f"[bold]{paper['title']}[/bold]", highlight=False, markup=False)
    out.print(", ".join(a["name"] for a in paper["authors"]), highlight=False, markup=False)
    out.print(f"{paper['id']}v{paper['version'] or '?'} · {' '.join(paper['categories'])} · "
              f"announced {paper['announced'] or '?'} · sources: {', '.join(paper['sources'])}",
              highlight=False, markup=False)
    if paper["duplicate_of"]:
        out.print(f"duplicate of {paper['duplicate_of']}")
    out.print(paper["abstract"], highlight=False, markup=False)


@app.command("settings")
def settings_command(
    as_json: bool = typer.Option(False, "--json"),
    markdown: bool = typer.Option(False, "--markdown", help="The README's table of defaults."),
) -> None:
    """Every setting with its value, environment variable and help."""
    current = common.settings()
    rows = [{"name": s.name, "value": getattr(current, s.name), "default": s.default,
             "env": s.env_var, "help": s.help} for s in SETTINGS]
    if as_json:
        common.emit_json(rows)
        return
    if markdown:
        print(settings_markdown())
        return
    table = Table()
    for column in ("name", "value", "env", "help"):
        table.add_column(column)
    for row in rows:
        secret = "key" in row["name"] or "token" in row["name"]
        table.add_row(row["name"], "***" if secret and row["value"] else str(row["value"]),
                      row["env"], row["help"])
    common.console.print(table)
