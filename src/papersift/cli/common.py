"""What every command shares: settings, the store, JSON output, progress bars and exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from papersift.settings import Settings, load_settings
from papersift.store import Store, open_store

# Exit codes (see DESIGN.md): 0 done, 1 failed, 2 usage error, 3 done with skipped records.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3

console = Console(stderr=True)
_state: dict[str, Any] = {"overrides": {}}


def set_overrides(**overrides: Any) -> None:
    _state["overrides"] = {k: v for k, v in overrides.items() if v is not None}
    _state.pop("settings", None)


def settings() -> Settings:
    if "settings" not in _state:
        _state["settings"] = load_settings(config=_state.get("config"), **_state["overrides"])
    return _state["settings"]


@contextmanager
def store(readonly: bool = False) -> Iterator[Store]:
    db = open_store(settings(), readonly=readonly)
    try:
        yield db
    finally:
        db.close()


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def fail(message: str, code: int = EXIT_FAILED) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code)


def figures_table(title: str, columns: Sequence[str]) -> Table:
    """A table of named rows and their figures: the first column left, the figures right."""
    table = Table(title=title)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table


def progress(disable: bool = False) -> Progress:
    """A rich progress bar on stderr, hidden for --json and when stderr is not a terminal."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, disable=disable or not console.is_terminal, transient=False,
    )
