"""The README stays true: its settings table is the declared one, its two commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from papersift.settings import settings_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_readme_settings_table_is_generated_from_the_declarations() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- settings:start -->\n(.*?)<!-- settings:end -->", readme, re.S)
    assert block, "README lost its settings markers"
    assert block.group(1).strip() == settings_markdown(), (
        "README settings table is stale: run `papersift settings --markdown` and paste it")


def test_readme_commands_are_make_targets_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make run" in readme and "make test" in readme
    assert re.search(r"^run:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
