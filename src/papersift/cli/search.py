"""Commands of the search stage: embed, search, eval search."""

from __future__ import annotations

import typer

from papersift.cli import common
from papersift.cli.app import app


@app.command("embed")
def embed_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    no_index: bool = typer.Option(False, "--no-index", help="Only embed; do not update the index."),
) -> None:
    """Embed papers that are new or changed (resumable: run again after an interruption)."""
    from papersift.search import EmbedderError, embed_papers

    settings = common.settings()
    with common.store() as db, common.progress(disable=as_json) as bar:
        task = bar.add_task("embed", total=None, rate="")
        started = [0.0]

        def show(done: int, total: int) -> None:
            import time

            if not started[0]:
                started[0] = time.perf_counter()
            elapsed = time.perf_counter() - started[0]
            rate = f"{done / elapsed:,.0f}/s" if elapsed > 0 and done else ""
            bar.update(task, completed=done, total=total, rate=rate)

        try:
            report = embed_papers(db, settings, on_progress=show, update_index=not no_index)
        except EmbedderError as exc:
            raise common.fail(str(exc)) from None
    if as_json:
        common.emit_json(report)
    else:
        common.console.print(
            f"embedded [bold]{report['embedded']:,}[/bold] papers with {report['model']} "
            f"in {report['seconds']:.1f}s; {report['total']:,} stored", highlight=False)
