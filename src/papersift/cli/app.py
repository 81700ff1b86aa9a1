"""The Typer application objects that command modules attach to."""

from __future__ import annotations

from pathlib import Path

import typer

from papersift.cli import common

app = typer.Typer(
    name="papersift",
    help="Research-paper news without the noise: ingest, index, group, summarize and serve papers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
eval_app = typer.Typer(help="Measure search, topics and summaries on benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@app.callback()
def _global_options(
    data_dir: Path = typer.Option(None, "--data-dir", help="Data folder (PAPERSIFT_DATA_DIR)."),
    config: Path = typer.Option(None, "--config", help="Settings file (default ./papersift.toml)."),
) -> None:
    if config is not None and not config.is_file():
        raise common.fail(f"config file not found: {config}", common.EXIT_USAGE)
    common.set_overrides(data_dir=str(data_dir) if data_dir else None)
    if config is not None:
        common._state["config"] = config
