"""`papersift eval recommend` on a slice of the real task: every ranker scored in one run, the feedback path measured, bad files refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.recommend.evaluate import TaskError, load_task
from tests.conftest import shared_file
from tests.web_helpers import _remember_exported_model, _reuse_exported_model


def _slice(tmp_path: Path, readers: int = 12, others: int = 300) -> Path:
    """A smaller task: the first readers, their positives and some other candidates."""
    task = load_task(shared_file("recommend/readers-dev.jsonl"))
    chosen = task.readers[:readers]
    wanted = {p for r in chosen for p in r["positives"]}
    rest = random.Random(1).sample(sorted(set(task.candidates) - wanted), others)
    path = tmp_path / "task.jsonl"
    lines = [json.dumps({"task": {"cut": task.cut, "candidates": sorted(wanted | set(rest))}})]
    path.write_text("\n".join(lines + [json.dumps(r) for r in chosen]) + "\n")
    return path


@pytest.mark.slow
def test_eval_recommend_scores_every_ranker_in_one_run(tmp_path: Path, settings) -> None:
    task = _slice(tmp_path)
    _reuse_exported_model(settings)
    result = CliRunner().invoke(app, [
        "--data-dir", str(settings.data_path), "eval", "recommend", "--readers", str(task),
        "--papers", str(shared_file("arxiv-2025-2026.jsonl.gz")), "--negatives", "300",
        "--feedback-readers", "12", "--json"])
    _remember_exported_model(settings)
    assert result.exit_code == 0, result.output
    rows = {row["config"]: row for row in json.loads(result.stdout)}
    assert {"papersift", "baseline:arxiv-sanity-lite", "baseline:zotero-arxiv-daily",
            "baseline:scholar-inbox"} <= set(rows)
    for name, row in rows.items():
        if name != "papersift:feedback":
            assert row["readers"] == 12 and 0 <= row["ndcg@10"] <= 1 and 0 <= row["mrr"] <= 1
    # On a small slice the ranking is easy; ours must still beat the weakest baseline.
    assert rows["papersift"]["ndcg@10"] > rows["baseline:zotero-arxiv-daily"]["ndcg@10"]
    assert rows["papersift:feedback"]["y_exclude"] == 0.0


def test_a_file_that_is_not_a_task_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reader": "x"}\n')
    with pytest.raises(TaskError, match="not a recommendation task"):
        load_task(bad)
    result = CliRunner().invoke(app, ["eval", "recommend", "--readers", str(bad), "--papers",
                                      str(bad)])
    # The console wraps the message at its width, where depends on the temporary path's length.
    assert result.exit_code == 2 and "not a recommendation task" in " ".join(result.output.split())
