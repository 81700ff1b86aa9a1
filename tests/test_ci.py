"""CI proves what it runs: a test that needs the shared data fails there when the data is absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDS_DATA = "tests/test_summarize_eval.py::test_builtin_tldr_beats_the_target_on_scitldr_dev"


def _run(require: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PAPERSIFT_SHARED_DATA": "/nonexistent/shared/data"}
    env.pop("PAPERSIFT_REQUIRE_SHARED_DATA", None)
    if require:
        env["PAPERSIFT_REQUIRE_SHARED_DATA"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           NEEDS_DATA], cwd=ROOT, env=env, capture_output=True, text=True)


def test_absent_shared_data_skips_at_home_and_fails_in_ci() -> None:
    home, ci = _run(False), _run(True)
    assert home.returncode == 0 and "1 skipped" in home.stdout, home.stdout
    assert ci.returncode == 1 and "requires the shared data" in ci.stdout, ci.stdout
    assert "PAPERSIFT_REQUIRE_SHARED_DATA=1" in (ROOT / ".ci" / "run").read_text()
