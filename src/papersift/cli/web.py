"""Commands of the site: serve, update, build, and `up` (update then serve: the main job)."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import typer
from rich.markup import escape

from papersift.cli import common
from papersift.cli.app import app
from papersift.cli.digest import parse_at, start_digest_clock
from papersift.errors import PapersiftError, UsageError
from papersift.pipeline import every_source_failed, update
from papersift.search import onnx_export
from papersift.search.embed import default_embedder
from papersift.search.neighbours import refresh_local_index, searches_locally
from papersift.search.onnx_export import model_ready
from papersift.settings import Settings
from papersift.sources import parse_spec
from papersift.stages import Report
from papersift.store import redact_url
from papersift.web.export import build_site
from papersift.web.limits import MAX_HEADER_BYTES, BoundedHttpToolsProtocol

SNAPSHOT_HINT = (
    "The live sources could not be reached (no network?). To use the local snapshot instead:\n"
    "  papersift up --source file:../shared/data/arxiv-2025-2026.jsonl.gz --limit 5000"
)
# Seconds a web worker may take to answer uvicorn's supervisor (from its start, too) before
# it is taken for hung and replaced.
WORKER_HEALTHCHECK_SECONDS = 120
_EVERY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")


def parse_every(text: str) -> float:
    """'6h' -> 21600 seconds; s, m, h, d units; a bare number is hours."""
    match = _EVERY.match(text or "")
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--update-every wants a duration like 6h or 30m, not {text!r}")
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "": 3600}[match.group(2)]
    return float(match.group(1)) * unit


def _print_update(reports: list[Report], papers: int) -> None:
    for report in reports:
        common.print_report(report, details=5)
    common.say(f"{papers:,} papers in the store")
    failed = failed_parts(reports)
    if failed:
        common.say("failed: " + "; ".join(failed))
    if every_source_failed(reports):
        common.say(SNAPSHOT_HINT)


def _run_update(sources: list[str] | None = None, limit: int | None = None,
                quiet: bool = False) -> tuple[list[Report], int]:
    """(the stage reports, papers in the store afterwards)."""
    settings = common.settings()
    exported = model_ready(settings)
    with common.store() as db, common.progress(quiet=quiet) as show:
        reports = update(db, settings, show, sources=sources, limit=limit)
        papers = db.papers.count_papers()
    if not exported and model_ready(settings) and not quiet:
        common.say("exported the embedding model for semantic search (once) to "
                   f"{settings.paths.exported_model(onnx_export.MODEL_NAME)}")
    return reports, papers


def _update_ok(reports: list[Report]) -> bool:
    return all(r.ok for r in reports) and not every_source_failed(reports)


def failed_parts(reports: list[Report]) -> list[str]:
    """What failed in an update, by name: 'source arxiv:cs.LG (why)', 'stage topics (why)'."""
    parts = [f"source {f['source']} ({f['error']})" for r in reports for f in r.failures
             if r.stage == "ingest"]
    parts += [f"{r.stage} {f.get('source') or f.get('id') or ''} ({f.get('error')})".strip()
              for r in reports if r.stage != "ingest" for f in r.failures]
    return parts + [f"stage {r.stage} ({r.error})" for r in reports if r.error]


def update_exit_code(reports: list[Report]) -> int:
    """1 when a source or a stage failed, 3 when only records were skipped, else 0."""
    if not _update_ok(reports):
        return common.EXIT_FAILED
    return common.EXIT_SKIPPED if any(r.skipped for r in reports) else common.EXIT_OK


@app.command("update")
def update_command(as_json: bool = common.json_option()) -> None:
    """Run the whole pipeline once: ingest the configured sources, embed, topics, summarize.

    Incremental and safe to run from cron while the site serves. Exit codes: 0 done, 1 a
    source or a stage failed (the last line, and `failed` in --json, say which), 3 done
    but records were skipped.
    """
    reports, papers = _run_update(quiet=as_json)
    code = update_exit_code(reports)
    common.output({"ok": _update_ok(reports), "exit_code": code, "papers": papers,
                   "failed": failed_parts(reports),
                   "failed_sources": [f["source"] for r in reports if r.stage == "ingest"
                                      for f in r.failures],
                   "stages": [r.as_dict() for r in reports]},
                  as_json, lambda _: _print_update(reports, papers))
    if code:
        raise typer.Exit(code)


def _updater(every: float) -> None:
    """Background loop of `serve --update-every`: runs the pipeline, never lets an error kill it."""
    def loop() -> None:
        while True:
            time.sleep(every)
            try:
                reports, papers = _run_update(quiet=True)
                common.say(f"update: {'ok' if _update_ok(reports) else 'with errors'}, "
                           f"{papers:,} papers")
            except Exception as exc:  # keep serving; the next round tries again
                common.say(f"update failed: {exc}")

    threading.Thread(target=loop, name="papersift-update", daemon=True).start()


def _serve(host: str, port: int, workers: int, update_every: str | None,
           digest_at: str | None = None) -> None:
    import uvicorn

    from papersift.web.app import SETTINGS_ENV

    settings = common.settings()
    _prepare_model(settings)
    _keep_local_index(settings)
    if update_every:
        _updater(parse_every(update_every))
    if digest_at:
        start_digest_clock(parse_at(digest_at))
    # Worker processes rebuild the app from these exact settings (config file, env and flags).
    os.environ[SETTINGS_ENV] = json.dumps(settings.values)
    where = redact_url(settings.database_url.strip()) or str(settings.paths.database)
    common.console.print(f"serving {escape(where)} at "
                         f"[bold]http://{host}:{port}/[/bold] with {workers} worker(s); "
                         "Ctrl+C stops", highlight=False)
    # The header timeout lives in the protocol (web/limits.py); body limits in the app.
    # uvicorn kills a worker that does not answer its supervisor's ping within
    # timeout_worker_healthcheck (5 s by default), and a new worker cannot answer before it
    # has imported papersift: on a busy machine that took 10 s, and every worker was killed
    # and started again forever, so `--workers 2` never served (issue 30's drill).
    uvicorn.run("papersift.web.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level="warning", access_log=False,
                http=BoundedHttpToolsProtocol, timeout_keep_alive=5,
                h11_max_incomplete_event_size=MAX_HEADER_BYTES,
                timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS)


def _prepare_model(settings: Settings) -> None:
    """Export the embedding model before serving, so no request ever waits on it (~17 s and
    over 1 GB, once per data folder); if that fails, the site serves keyword search."""
    if model_ready(settings):
        return
    common.say("preparing the embedding model for semantic search (once; about 20 s)...")
    started = time.monotonic()
    try:
        onnx_export.ensure_exported(settings.paths)
    except Exception as exc:  # the site still serves; search says semantic is not ready
        common.say(f"semantic search is off: the model could not be exported ({exc})")
        return
    common.say(f"the embedding model is ready ({time.monotonic() - started:.0f} s)")


def _keep_local_index(settings: Settings) -> None:
    """When PostgreSQL's semantic search walks the local file (searches_locally): this
    machine's index file brought up to date before serving (the first time, 98,742 vectors
    take about 40 s, a million about ten minutes), then every `local_index_refresh` seconds
    by a thread of this process (the workers reload it)."""
    try:
        with common.store() as store:
            if not store.embeddings.indexes_vectors():
                return  # SQLite: `embed` keeps the only index, the local file
            model = default_embedder(settings).model_id
            if not searches_locally(store, settings, model):
                return
            common.say("bringing this machine's vector index up to date with the store...")
            version, report = refresh_local_index(store, settings, model)
    except PapersiftError as exc:  # the site still serves; search says what is missing
        common.say(f"the local vector index was not updated: {exc}")
        return
    if report is not None:
        common.say(f"the local vector index holds {report['size']:,} vectors"
                   f" ({report['added']:,} added, {report['removed']:,} removed)")
    every = settings.local_index_refresh
    if every <= 0:
        return

    def loop() -> None:
        seen = version
        while True:
            time.sleep(every)
            try:
                with common.store() as store:
                    seen, _ = refresh_local_index(store, settings, model, seen)
            except Exception as exc:  # keep serving; the next round tries again
                common.say(f"refreshing the local vector index failed: {exc}")

    threading.Thread(target=loop, name="papersift-vector-index", daemon=True).start()


@app.command("serve")
def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes."),
    update_every: str = typer.Option(None, "--update-every",
                                     help="Also run `papersift update` every so often, e.g. 6h."),
    digest_at: str = typer.Option(None, "--digest-at",
                                  help="Also send the day's email digests at this time (UTC), "
                                       "e.g. 07:00."),
) -> None:
    """Serve the site (HTML, JSON twins, Atom feeds, search) over the store."""
    if update_every:
        parse_every(update_every)
    if digest_at:
        parse_at(digest_at)
    _serve(host, port, workers, update_every, digest_at)


@app.command("build")
def build_command(
    out: Path = typer.Option(..., "--out", help="Folder to write the static site into."),
    as_json: bool = common.json_option(),
) -> None:
    """Write the whole site as static files with relative links (search needs `serve`)."""
    with common.progress(quiet=as_json) as show:
        report = build_site(common.settings(), out, on_progress=show)
    if not as_json:
        common.say(f"wrote the site to {report.details['out']}")
    common.finish(report, as_json)


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
    for spec in source or []:
        parse_spec(spec)
    if update_every:
        parse_every(update_every)
    reports, papers = _run_update(sources=source or None, limit=limit)
    _print_update(reports, papers)
    if not papers:
        raise PapersiftError("there are no papers to show yet; see the message above")
    if no_serve:
        raise typer.Exit(update_exit_code(reports))
    _serve(host, port, workers, update_every)
