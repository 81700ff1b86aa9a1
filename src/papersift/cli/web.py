"""Commands of the site: serve, update, build, and `up` (update then serve: the main job)."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import typer

from papersift.cli import common
from papersift.cli.app import app

SNAPSHOT_HINT = (
    "The live sources could not be reached (no network?). To use the local snapshot instead:\n"
    "  papersift up --source file:../shared/data/arxiv-2025-2026.jsonl.gz --limit 5000"
)
_EVERY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_every(text: str) -> float:
    """'6h' -> 21600 seconds; s, m, h, d units; a bare number is hours."""
    match = _EVERY.match(text or "")
    if not match or float(match.group(1)) <= 0:
        raise common.fail(f"--update-every wants a duration like 6h or 30m, not {text!r}",
                          common.EXIT_USAGE)
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 3600}[match.group(2)]
    return float(match.group(1)) * unit


def _print_update(report: dict[str, Any]) -> None:
    out = common.console
    for name, stage in report["stages"].items():
        if stage["ok"]:
            result = stage.get("result")
            brief = ""
            if isinstance(result, dict):
                keys = ("new", "updated", "skipped", "embedded", "action", "written", "summarized")
                brief = ", ".join(
                    f"{k} {len(v) if isinstance(v, list) else v}" for k, v in result.items()
                    if k in keys)
            if stage.get("skipped"):
                brief = f"skipped: {stage['skipped']}"
            out.print(f"[green]✓[/green] {name} ({stage['seconds']}s) {brief}", highlight=False)
            for failed in (result or {}).get("failed_sources", []) if isinstance(result, dict) \
                    else []:
                out.print(f"  [red]source failed[/red] {failed['source']}: {failed['error']}",
                          highlight=False)
        else:
            out.print(f"[red]✗[/red] {name}: {stage['error']}", highlight=False, markup=False)
    out.print(f"{report.get('papers', 0):,} papers in the store")


def _run_update(sources: list[str] | None = None, limit: int | None = None,
                quiet: bool = False) -> dict[str, Any]:
    from papersift.pipeline import update

    settings = common.settings()
    with common.store() as db, common.progress(disable=quiet) as bar:
        tasks: dict[str, Any] = {}

        def show(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total, rate="")
            bar.update(tasks[stage], completed=done, total=total)

        return update(db, settings, on_progress=show, sources=sources, limit=limit)


@app.command("update")
def update_command(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
                   ) -> None:
    """Run the whole pipeline once: ingest the configured sources, embed, topics, summarize.

    Incremental and safe to run from cron while the site serves. Exit 1 if a stage failed.
    """
    report = _run_update(quiet=as_json)
    if as_json:
        common.emit_json(report)
    else:
        _print_update(report)
        if report["ingest_failed"]:
            common.console.print(SNAPSHOT_HINT, highlight=False, markup=False, soft_wrap=True)
    if not report["ok"]:
        raise typer.Exit(common.EXIT_FAILED)


def _updater(every: float) -> None:
    """Background loop of `serve --update-every`: runs the pipeline, never lets an error kill it."""
    def loop() -> None:
        while True:
            time.sleep(every)
            try:
                report = _run_update(quiet=True)
                common.console.print(f"update: {'ok' if report['ok'] else 'with errors'}, "
                                     f"{report.get('papers', 0):,} papers", highlight=False)
            except Exception as exc:  # keep serving; the next round tries again
                common.console.print(f"update failed: {exc}", highlight=False, markup=False)

    threading.Thread(target=loop, name="papersift-update", daemon=True).start()


def _serve(host: str, port: int, workers: int, update_every: str | None) -> None:
    import uvicorn

    from papersift.web.app import SETTINGS_ENV

    settings = common.settings()
    if update_every:
        _updater(parse_every(update_every))
    # Worker processes rebuild the app from these exact settings (config file, env and flags).
    os.environ[SETTINGS_ENV] = json.dumps(settings.values)
    common.console.print(f"serving {settings.db_path} at [bold]http://{host}:{port}/[/bold] "
                         f"with {workers} worker(s); Ctrl+C stops", highlight=False)
    uvicorn.run("papersift.web.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level="warning", access_log=False)


@app.command("serve")
def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes."),
    update_every: str = typer.Option(None, "--update-every",
                                     help="Also run `papersift update` every so often, e.g. 6h."),
) -> None:
    """Serve the site (HTML, JSON twins, Atom feeds, search) over the store."""
    if update_every:
        parse_every(update_every)
    _serve(host, port, workers, update_every)


@app.command("build")
def build_command(
    out: Path = typer.Option(..., "--out", help="Folder to write the static site into."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Write the whole site as static files with relative links (search needs `serve`)."""
    from papersift.web.export import build_site

    with common.progress(disable=as_json) as bar:
        task = bar.add_task("build", total=None, rate="")
        report = build_site(common.settings(), out,
                            on_progress=lambda n, path: bar.update(task, completed=n))
    if as_json:
        common.emit_json(report)
    else:
        common.console.print(f"wrote {report['pages']:,} pages and {report['feeds']:,} feeds to "
                             f"{report['out']} in {report['seconds']}s", highlight=False)


@app.command("up")
def up_command(
    source: list[str] = typer.Option(None, "--source",
                                     help="SOURCE spec(s) instead of the configured sources, "
                                          "e.g. file:../shared/data/arxiv-2025-2026.jsonl.gz"),
    limit: int = typer.Option(None, "--limit", help="Take only N papers per source (quick start)."),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port"),
    workers: int = typer.Option(1, "--workers", min=1),
    update_every: str = typer.Option(None, "--update-every", help="Keep updating, e.g. 6h."),
    no_serve: bool = typer.Option(False, "--no-serve", help="Only update; do not serve."),
) -> None:
    """The main job: fetch papers, index, group and summarize them, then serve the site."""
    from papersift.sources import SpecError, parse_spec

    for spec in source or []:
        try:
            parse_spec(spec)
        except SpecError as exc:
            raise common.fail(str(exc), common.EXIT_USAGE) from None
    if update_every:
        parse_every(update_every)
    report = _run_update(sources=source or None, limit=limit)
    _print_update(report)
    if report["ingest_failed"]:
        common.console.print(SNAPSHOT_HINT, highlight=False, markup=False, soft_wrap=True)
    if not report.get("papers"):
        raise common.fail("there are no papers to show yet; see the message above")
    if no_serve:
        raise typer.Exit(common.EXIT_OK if report["ok"] else common.EXIT_FAILED)
    _serve(host, port, workers, update_every)
