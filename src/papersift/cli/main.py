"""Entry point of the `papersift` command: collects the command modules and maps errors to exit codes."""

from __future__ import annotations

import sys

from papersift.cli import common
from papersift.cli import ingest as _ingest  # noqa: F401  (registers commands)
from papersift.cli import search as _search  # noqa: F401
from papersift.cli import summarize as _summarize  # noqa: F401
from papersift.cli import topics as _topics  # noqa: F401
from papersift.cli import web as _web  # noqa: F401
from papersift.cli.app import app
from papersift.settings import SettingsError
from papersift.store import StoreError


def run() -> None:
    """Run the CLI; expected failures become a one-line message and a meaningful exit code."""
    try:
        # Without standalone mode click returns the code of a typer.Exit instead of exiting.
        result = app(standalone_mode=False)
    except SystemExit:
        raise
    except (SettingsError, StoreError) as exc:
        common.console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(common.EXIT_FAILED)
    except KeyboardInterrupt:
        common.console.print("interrupted; what was committed is kept, run again to resume")
        sys.exit(130)
    except Exception as exc:  # click usage errors and typer.Exit arrive here in non-standalone mode
        import click

        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(common.EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    run()
