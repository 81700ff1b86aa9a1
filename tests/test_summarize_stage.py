"""The summaries stage: incremental and resumable runs, staleness, flags, and its CLI commands."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.records import PaperRecord
from papersift.stages import Progress
from papersift.store import add_records
from papersift.summarize import Summarize
from papersift.summarize.stage import flag_paper

ABSTRACT = (
    "Sparse attention is hard to train. In this work, we introduce {name}, a sparse attention "
    "kernel that skips empty blocks. We evaluate {name} on {n} long-context benchmarks. "
    "Experiments show that {name} is {x}x faster than dense attention while matching its "
    "perplexity on sequences of up to 128,000 tokens."
)

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


def record(n: int, announced: str = "2026-01-05", **changes) -> PaperRecord:
    name = f"Skip{n}Attn"
    values = dict(
        id=f"2601.{n:05d}", title=f"{name}: Sparse Attention That Skips Empty Blocks",
        abstract=ABSTRACT.format(name=name, n=3 + n % 4, x=2 + n % 5),
        authors=["Mia Wong", "Raj Patel"] if n % 2 else ["Lena Fischer"],
        categories=["cs.LG"], source="file", announced=announced,
    )
    values.update(changes)
    return PaperRecord(**values)


def test_second_run_writes_nothing_and_changed_abstract_is_rewritten(store, settings) -> None:
    add_records(store, [record(n) for n in range(12)])
    first = Summarize(batch_size=5).run(store, settings)
    assert (first.counts["considered"], first.counts["written"], first.counts["gate_failures"]) == (12, 12, 0)
    assert sum(bool(s["summary_hash"]) for s in store.summaries.summary_states()) == 12
    before = store.summaries.get_summary("2601.00003")
    assert before["writer"] == "builtin" and before["model"].startswith("builtin-")
    assert before["blurb"].startswith("Wong and Patel introduce Skip3Attn")

    second = Summarize().run(store, settings)
    assert (second.counts["written"], second.counts["unchanged"]) == (0, 12)

    changed = record(3, abstract=record(3).abstract.replace("Sparse attention is hard to train.",
                                                           "Sparse attention is hard to tune."),
                     version=2)
    add_records(store, [changed])
    third = Summarize().run(store, settings)
    assert third.counts["written"] == 1
    assert store.summaries.get_summary("2601.00003")["input_hash"] != before["input_hash"]

    redo = Summarize(redo=True).run(store, settings)
    assert redo.counts["written"] == 12


def test_progress_is_reported_and_batches_are_committed(store, settings) -> None:
    add_records(store, [record(n) for n in range(7)])
    calls = []
    Summarize(batch_size=3).run(store, settings, lambda p: calls.append((p.done, p.total)))
    assert calls == [(0, 7), (3, 7), (6, 7), (7, 7)]


def test_interrupted_run_resumes(store, settings) -> None:
    add_records(store, [record(n) for n in range(6)])

    def stop_after_first_batch(progress: Progress) -> None:
        if progress.done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Summarize(batch_size=2).run(store, settings, stop_after_first_batch)
    assert sum(bool(s["summary_hash"]) for s in store.summaries.summary_states()) == 2
    assert Summarize().run(store, settings).counts["written"] == 4


def test_since_limits_the_run(store, settings) -> None:
    add_records(store, [record(1, announced="2025-12-30"), record(2, announced="2026-01-10")])
    report = Summarize(since="2026-01-01").run(store, settings)
    assert (report.counts["considered"], report.counts["written"]) == (1, 1)
    assert store.summaries.get_summary("2601.00001") is None


def test_flagged_summary_is_hidden_when_the_writer_would_repeat_it(store, settings) -> None:
    add_records(store, [record(1), record(2)])
    Summarize().run(store, settings)
    assert set(store.summaries.summaries_for(["2601.00001", "2601.00002", "nope"])) == {
        "2601.00001", "2601.00002"}
    result = flag_paper(store, settings, "2601.00001", "wrong speed-up")
    assert result["hidden"] and not result["regenerated"]
    assert set(store.summaries.summaries_for(["2601.00001", "2601.00002"])) == {"2601.00002"}
    stored = store.summaries.get_summary("2601.00001")
    assert stored["flagged"] and stored["flag_reason"] == "wrong speed-up"
    assert "hidden after flag: wrong speed-up" in stored["notes"]
    # The stage leaves a hidden flagged summary alone until the paper changes.
    assert Summarize().run(store, settings).counts["written"] == 0


def test_flagged_summary_is_regenerated_when_the_writer_changed(store, settings) -> None:
    add_records(store, [record(1)])
    Summarize().run(store, settings)
    old = store.summaries.get_summary("2601.00001")
    # Simulate a summary written differently (e.g. by an older writer) with the current hash.
    store.summaries.put_summaries([{**old, "blurb": "Wong and Patel say something wrong here."}])
    store.summaries.flag_summary("2601.00001", "says something wrong")
    report = Summarize().run(store, settings)
    assert (report.counts["flagged"], report.counts["flagged_regenerated"]) == (1, 1)
    new = store.summaries.get_summary("2601.00001")
    assert not new["flagged"] and not new["hidden"] and new["blurb"] == old["blurb"]
    assert "regenerated after flag: says something wrong" in new["notes"]


def test_cli_summarize_flag_and_errors(store, settings) -> None:
    add_records(store, [record(n) for n in range(3)])
    runner = CliRunner()
    result = runner.invoke(app, ["summarize", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["written"] == 3
    result = runner.invoke(app, ["summarize", "--writer", "gpt"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["summarize", "--writer", "llm"])  # no llm_url configured
    assert result.exit_code == 2 and "llm_url" in result.output
    result = runner.invoke(app, ["flag", "2601.00001", "--reason", "wrong", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["hidden"] is True
    result = runner.invoke(app, ["flag", "2609.99999", "--reason", "wrong"])
    assert result.exit_code == 1
