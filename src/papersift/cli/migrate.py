"""The migrate command: copy the store into another backend (SQLite to PostgreSQL and back), resumably, and check the copy."""

from __future__ import annotations

import typer

from papersift.cli import common
from papersift.cli.app import app
from papersift.errors import UsageError
from papersift.store import open_store
from papersift.store.migrate import BATCH, migrate_store


@app.command("migrate")
def migrate_command(
    to: str = typer.Option(..., "--to", help="The store to copy into: postgresql://user:pass@"
                           "host/dbname or sqlite:///path/to/papersift.db (made if missing)."),
    source: str = typer.Option(None, "--from", help="The store to copy (default: the "
                               "configured one, database_url or the data dir's file)."),
    batch: int = typer.Option(BATCH, "--batch", help="Rows per committed batch."),
    as_json: bool = common.json_option(),
) -> None:
    """Copy every table of the store into another store (any backend), then compare each
    table's rows and content on both sides. Stopped, run it again: it goes on where it was.
    Stop writers (serve, update) first: the comparison fails if the source changes."""
    if batch < 1:
        raise UsageError("--batch must be at least 1")
    if not to.strip():
        raise UsageError("--to needs a store URL")
    with open_store(source or common.settings()) as origin, open_store(to) as target, \
            common.progress(quiet=as_json) as show:
        report = migrate_store(origin, target, batch, show)
    common.finish(report, as_json)
