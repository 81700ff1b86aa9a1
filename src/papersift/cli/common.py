"""What every command shares: settings, the store, --json output, progress, reports and exit codes."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as Bar
from rich.table import Table

from papersift.errors import EXIT_FAILED, EXIT_OK, EXIT_SKIPPED, EXIT_USAGE, PapersiftError
from papersift.settings import Settings, load_settings
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store import Store, open_store

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_SKIPPED", "EXIT_USAGE"]

console = Console(stderr=True)
_state: dict[str, Any] = {"overrides": {}}
# When stderr is not a terminal (cron, CI), a progress line per stage at most this often.
PLAIN_PROGRESS_SECONDS = 10.0
# Log records and third-party warnings go here, under the data dir's logs folder.
LOG_FILE = "papersift.log"
LOG_KEEP_BYTES = 5_000_000  # a longer log is moved to papersift.log.1 when a command starts


def json_option(help: str = "Print the result as JSON on stdout.") -> Any:
    """The --json option every command that reports something takes."""
    return typer.Option(False, "--json", help=help)


def set_overrides(config: Path | None = None, **overrides: Any) -> None:
    """The --config file and the settings given as options (None: not given)."""
    _state["config"] = config
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


# ------------------------------------------------------------------ logging
class DataDirLog(logging.Handler):
    """Appends records to the data dir's logs/papersift.log, opened on the first record (so
    that a command that logs nothing creates nothing); a record it cannot write is dropped."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._stream: Any = None
        self._failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._failed:
            return
        try:
            if self._stream is None:
                folder = settings().paths.logs
                folder.mkdir(parents=True, exist_ok=True)
                path = folder / LOG_FILE
                if path.is_file() and path.stat().st_size > LOG_KEEP_BYTES:
                    os.replace(path, path.with_name(LOG_FILE + ".1"))
                self._stream = path.open("a", encoding="utf-8")
            self._stream.write(self.format(record) + "\n")
            self._stream.flush()
        except (OSError, PapersiftError):
            self._failed = True  # no data dir to log to: the command itself will say why

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        super().close()


def configure_logging(verbose: bool = False) -> None:
    """Log records and Python warnings (third-party ones among them) go to the log file;
    with `verbose` they are shown on stderr too. Libraries' own progress bars and advisories
    are turned off unless verbose."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "papersift", False):
            root.removeHandler(handler)
            handler.close()
    handlers: list[logging.Handler] = [DataDirLog()]
    if verbose:
        shown = logging.StreamHandler(sys.stderr)
        shown.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        handlers.append(shown)
    for handler in handlers:
        handler.papersift = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.INFO)
    # Off, then on: whoever restored `warnings.showwarning` since (a test harness's
    # catch_warnings) leaves logging believing it still captures.
    logging.captureWarnings(False)
    logging.captureWarnings(True)
    _state["verbose"] = verbose
    if not verbose:
        for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_NO_ADVISORY_WARNINGS"):
            os.environ.setdefault(name, "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def log_path() -> Path:
    """Where the log file of this data dir is."""
    return settings().paths.logs / LOG_FILE


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def say(text: str) -> None:
    """A line of plain text on stderr (no markup is read in it)."""
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def output(data: Any, as_json: bool, show: Callable[[Any], None]) -> None:
    """Print what a command found: as JSON with --json, else as `show` renders it."""
    if as_json:
        emit_json(data)
    else:
        show(data)


def print_error(exc: Exception) -> None:
    console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)


def figures_table(title: str, columns: Sequence[str]) -> Table:
    """A table of named rows and their figures: the first column left, the figures right."""
    table = Table(title=title)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table


# ------------------------------------------------------------------ reports
def exit_code(report: Report) -> int:
    """0 done, 1 failed (the stage, or a part of it), 3 done with skipped records."""
    if not report.ok:
        return EXIT_FAILED
    return EXIT_SKIPPED if report.skipped else EXIT_OK


def print_report(report: Report, details: int = 20) -> None:
    """One line per report ('✓ ingest (3.2s) new 5,000 · ...'), then what went wrong."""
    mark = "[green]✓[/green]" if report.ok else "[red]✗[/red]"
    if "not_run" in report.details:
        console.print(f"– {report.stage}: not run ({escape(report.details['not_run'])})",
                      highlight=False)
        return
    console.print(f"{mark} {report.stage} ({report.seconds:.1f}s) {escape(report.line())}",
                  highlight=False)
    for item in report.skipped[:details]:
        say(f"  skipped {item['where']}: {item['reason']}")
    if len(report.skipped) > details:
        say(f"  ... and {len(report.skipped) - details:,} more skipped (use --json for all)")
    for item in report.failures:
        console.print(f"  [red]failed[/red] {escape(item['source'])}: {escape(item['error'])}",
                      highlight=False)
    if report.error:
        console.print(f"  [red]error:[/red] {escape(report.error)}", highlight=False)


def finish(report: Report, as_json: bool) -> None:
    """Print a stage's report (JSON or a line) and exit with what it means."""
    output(report.as_dict(), as_json, lambda _: print_report(report))
    raise typer.Exit(exit_code(report))


# ----------------------------------------------------------------- progress
@contextmanager
def progress(quiet: bool = False) -> Iterator[OnProgress]:
    """What renders a stage's Progress: a bar per stage on a terminal (counts, rate, time
    left), a plain line per stage every PLAIN_PROGRESS_SECONDS elsewhere, nothing if quiet."""
    if quiet:
        yield no_progress
    elif console.is_terminal:
        with _bar() as bar:
            yield _bar_renderer(bar)
    else:
        yield _line_renderer()


def _bar() -> Bar:
    return Bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
               console=console, transient=False)


def _rate(event: Progress, started: float) -> str:
    """Units per second since the stage's first event (none in its first second: too noisy,
    nor for a few unequal steps)."""
    elapsed = time.monotonic() - started
    if not event.done or elapsed < 1.0 or event.unit == "steps":
        return ""
    return f"{event.done / elapsed:,.0f}{' ' + event.unit if event.unit else ''}/s"


def _time_left(event: Progress, started: float) -> str:
    """'about 2 min left' from the rate so far; empty while it cannot be told."""
    elapsed = time.monotonic() - started
    if not event.total or not event.done or elapsed < 1.0 or event.done >= event.total:
        return ""
    seconds = elapsed * (event.total - event.done) / event.done
    return (f"about {seconds:.0f} s left" if seconds < 90 else
            f"about {seconds / 60:.0f} min left")


def _bar_renderer(bar: Bar) -> OnProgress:
    tasks: dict[str, tuple[Any, float]] = {}

    def show(event: Progress) -> None:
        if event.stage not in tasks:
            tasks[event.stage] = (bar.add_task(event.stage, total=event.total, rate=""),
                                  time.monotonic())
        task, started = tasks[event.stage]
        description = f"{event.stage}: {event.note}" if event.note else event.stage
        bar.update(task, completed=event.done, total=event.total, description=escape(description),
                   rate=_rate(event, started))

    return show


def _line_renderer() -> OnProgress:
    started: dict[str, float] = {}
    last: dict[str, float] = {}

    def show(event: Progress) -> None:
        now = time.monotonic()
        first = event.stage not in started
        started.setdefault(event.stage, now)
        finished = event.total is not None and event.done >= event.total
        if not (first or finished or now - last.get(event.stage, 0.0) >= PLAIN_PROGRESS_SECONDS):
            return
        last[event.stage] = now
        of = f"/{event.total:,}" if event.total is not None else ""
        figures = [f for f in (_rate(event, started[event.stage]),
                               _time_left(event, started[event.stage])) if f]
        say(f"{event.stage}: {event.done:,}{of}" + (f" ({', '.join(figures)})" if figures else "")
            + (f" {event.note}" if event.note else ""))

    return show
