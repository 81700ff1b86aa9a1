"""Entry point of the `papersift` command: collects the command modules and maps errors to exit codes."""

from __future__ import annotations

import sys

import click

from papersift.cli import common
from papersift.cli import digest as _digest  # noqa: F401  (registers commands)
from papersift.cli import ingest as _ingest  # noqa: F401
from papersift.cli import links as _links  # noqa: F401
from papersift.cli import migrate as _migrate  # noqa: F401
from papersift.cli import readers as _readers  # noqa: F401
from papersift.cli import search as _search  # noqa: F401
from papersift.cli import summarize as _summarize  # noqa: F401
from papersift.cli import topics as _topics  # noqa: F401
from papersift.cli import web as _web  # noqa: F401
from papersift.cli.app import app
from papersift.errors import EXIT_USAGE, PapersiftError


def run() -> None:
    """Run the CLI. Every expected failure (a PapersiftError) becomes a one-line message and
    its exit code; anything else is a bug and keeps its traceback."""
    try:
        # Without standalone mode click returns the code of a typer.Exit instead of exiting.
        result = app(standalone_mode=False)
    except SystemExit:
        raise
    except PapersiftError as exc:  # raised outside a command (the global options)
        common.print_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        common.console.print("interrupted; what was committed is kept, run again to resume")
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code)
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    run()
