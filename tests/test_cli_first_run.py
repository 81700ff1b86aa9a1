"""What a newcomer sees: `papersift up` from an empty data dir shows progress for every step and
no library warnings (they go to the log file), and the process that serves carries no PyTorch."""

from __future__ import annotations

import gzip
import itertools
import logging
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import httpx
import pytest

from papersift.cli import common
from papersift.settings import load_settings
from papersift.stages import Progress
from tests.conftest import shared_file
from tests.web_helpers import free_port

PAPERSIFT = Path(sys.executable).with_name("papersift")
# What a terminal-less run may print before it serves: progress lines, result lines and what
# they list, the store's size.
_ALLOWED = re.compile(
    r"^(?:[\w ]+: [\d,]+(?:/[\d,]+)?(?: \([^)]*\))?(?: .*)?|[✓✗–] \w+ .*|– \w+: not run \(.*\)|  .*|[\d,]+ papers in the "
    r"store|exported the embedding model for semantic search \(once\) to .*)$")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
def test_up_from_an_empty_data_dir_shows_progress_not_warnings(tmp_path: Path) -> None:
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        lines = list(itertools.islice(handle, 150))
    papers = tmp_path / "papers.jsonl"
    papers.write_text("".join(lines), encoding="utf-8")
    data = tmp_path / "data"
    port = free_port()
    stderr_path = tmp_path / "stderr.txt"
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1"}
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [str(PAPERSIFT), "up", "--source", f"file:{papers}", "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env, cwd=tmp_path,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 900
        front = None
        while process.poll() is None and time.monotonic() < deadline:
            try:
                front = httpx.get(f"http://127.0.0.1:{port}/?format=json", timeout=5).json()
                break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert front is not None, stderr_path.read_text(errors="replace")
        maps = Path(f"/proc/{process.pid}/maps").read_text()
    finally:
        _stop(process)
    shown = [line for line in stderr_path.read_text(encoding="utf-8").splitlines() if line]
    # The serving line closes the update (and may wrap); what follows is the server's.
    shown = shown[:next((i for i, line in enumerate(shown) if line.startswith("serving ")),
                        len(shown))]
    assert front["papers"], "the front page has stories"
    assert "libtorch" not in maps, "the serving process must not carry the model exporter"
    strays = [line for line in shown if not _ALLOWED.match(line)
              or re.search(r"warn|loading weights|it/s\]", line, re.I)]
    assert strays == [], strays
    for expected in ("model export: 0/5 loading the model", "model export: 5/5 done",
                     "embed: 150/150", "summarize: 150/150", "✓ embed", "✓ summarize"):
        assert any(line.startswith(expected) for line in shown), (expected, shown)
    log = (data / "logs" / common.LOG_FILE).read_text(encoding="utf-8")
    assert "papersift.export" in log and re.search(r"Warning|WARNING|warning", log)


def test_warnings_go_to_the_log_file_and_to_the_terminal_only_when_verbose(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common.set_overrides(data_dir=str(tmp_path / "data"))
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        common.configure_logging(verbose=False)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn("quiet third-party warning", UserWarning, stacklevel=1)
            common.configure_logging(verbose=True)
            warnings.warn("loud third-party warning", UserWarning, stacklevel=1)
    finally:
        for handler in root.handlers:
            if getattr(handler, "papersift", False):
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.captureWarnings(False)
        common.set_overrides()
    terminal = capsys.readouterr().err
    assert "loud third-party warning" in terminal
    assert "quiet third-party warning" not in terminal
    log = (tmp_path / "data" / "logs" / common.LOG_FILE).read_text(encoding="utf-8")
    assert "quiet third-party warning" in log and "loud third-party warning" in log


def test_plain_progress_lines_give_counts_rate_and_time_left(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    clock = [100.0]
    monkeypatch.setattr(common.time, "monotonic", lambda: clock[0])
    show = common._line_renderer()
    show(Progress("embed", 0, 5000))
    clock[0] += 20
    show(Progress("embed", 1000, 5000))
    clock[0] += 5  # within PLAIN_PROGRESS_SECONDS of the last line: not shown
    show(Progress("embed", 1200, 5000))
    show(Progress("model export", 2, 5, "fusing attention", unit="steps"))
    clock[0] += 20
    show(Progress("embed", 5000, 5000))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "embed: 0/5,000",
        "embed: 1,000/5,000 (50/s, about 80 s left)",
        "model export: 2/5 fusing attention",
        "embed: 5,000/5,000 (111/s)",
    ]


def test_a_settings_file_with_a_bad_data_dir_does_not_break_logging(tmp_path: Path) -> None:
    """A record the log cannot take is dropped; the command goes on and says what is wrong."""
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    settings = load_settings(environ={}, config=tmp_path / "none.toml", data_dir=str(blocker))
    handler = common.DataDirLog()
    common._state["settings"] = settings
    try:
        handler.emit(logging.LogRecord("x", logging.WARNING, __file__, 1, "msg", None, None))
        handler.emit(logging.LogRecord("x", logging.WARNING, __file__, 1, "msg", None, None))
    finally:
        common.set_overrides()
        handler.close()
    assert blocker.read_text() == "x"
