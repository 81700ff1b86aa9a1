"""ROUGE evaluation of TL;DRs: the metric on a hand example, the report, and `papersift eval tldr`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.summarize.evaluate import EvalDataError, evaluate_tldr, load_scitldr, rouge_scores

RECORDS = [
    {"title": "Sparse Kernels", "source": [
        "Attention is slow on long inputs.",
        "We propose a sparse kernel that skips empty blocks.",
        "It runs three times faster."],
     "target": ["A sparse kernel that skips empty blocks.", "Faster sparse attention."]},
    {"title": "Graph Sampling", "source": [
        "Graphs are large.", "We introduce a sampler for large graphs."],
     "target": "A sampler for large graphs."},
]


def test_rouge_takes_the_best_reference_then_the_mean() -> None:
    scores = rouge_scores(["the cat sat", "a dog"], [["the cat sat", "x"], ["a dog ran far"]])
    assert scores["rouge1"] == pytest.approx((1.0 + 2 * (1.0 * 0.5) / 1.5) / 2)
    assert scores["rouge2"] == pytest.approx((1.0 + 2 * (1.0 * 1 / 3) / (4 / 3)) / 2)


def test_report_has_builtin_beside_lead(tmp_path) -> None:
    report = evaluate_tldr(RECORDS)
    assert set(report["systems"]) == {"builtin", "lead"}
    assert report["systems"]["builtin"]["rouge1"] > report["systems"]["lead"]["rouge1"]
    assert report["systems"]["lead"]["mean_words"] == pytest.approx((6 + 3) / 2)


def test_cli_eval_tldr_and_bad_data(tmp_path) -> None:
    data = tmp_path / "tiny.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    result = CliRunner().invoke(app, ["eval", "tldr", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["papers"] == 2 and 0 < report["systems"]["builtin"]["rouge1"] <= 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"source": "not a list", "target": ["x"]}\n')
    with pytest.raises(EvalDataError, match="bad.jsonl:1"):
        load_scitldr(bad)
    result = CliRunner().invoke(app, ["eval", "tldr", "--data", str(bad)])
    assert result.exit_code == 2


@pytest.mark.slow
def test_builtin_tldr_beats_the_target_on_scitldr_dev() -> None:
    from papersift.summarize.evaluate import evaluate_file
    from tests.conftest import shared_file

    report = evaluate_file(shared_file("scitldr/dev.jsonl"))
    builtin, lead = report["systems"]["builtin"], report["systems"]["lead"]
    assert builtin["rouge1"] >= 0.40
    assert builtin["rouge1"] > lead["rouge1"] + 0.05
    assert builtin["mean_words"] <= 30
