"""The Typer application objects that command modules attach to."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from papersift.cli import common
from papersift.errors import PapersiftError, UsageError


class App(typer.Typer):
    """A Typer whose commands turn an expected failure (a PapersiftError) into its message on
    one line and its exit code, in this one place; anything else keeps its traceback."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]],
                                                              Callable[..., Any]]:
        register = super().command(*args, **kwargs)

        def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(function)
            def mapped(*call_args: Any, **call_kwargs: Any) -> Any:
                try:
                    return function(*call_args, **call_kwargs)
                except PapersiftError as exc:
                    common.print_error(exc)
                    raise typer.Exit(exc.exit_code) from None

            register(mapped)
            return function

        return decorator


app = App(
    name="papersift",
    help="Research-paper news without the noise: ingest, index, group, summarize and serve papers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
eval_app = App(help="Measure search, topics and summaries on benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@app.callback()
def _global_options(
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (PAPERSIFT_DATA_DIR)."),
    config: Path = typer.Option(None, "--config", help="Settings file (default ./papersift.toml)."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v",
        help="Also show library warnings and logs on the terminal (they always go to "
             "logs/papersift.log in the data dir)."),
) -> None:
    if config is not None and not config.is_file():
        raise UsageError(f"config file not found: {config}")
    common.set_overrides(config=config, data_dir=str(data_dir) if data_dir else None)
    common.configure_logging(verbose)
