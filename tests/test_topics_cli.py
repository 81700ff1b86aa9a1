"""The topics commands end to end through the Typer app on a real store."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from papersift.cli.main import app
from tests.test_topics_build import add_papers, make_corpus

SMALL = ["--papers-per-topic", "40"]


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout


def test_topics_commands(store, settings) -> None:
    assert _run("topics", "assign")[0] == 1  # no topics yet: a clear failure, not a crash
    assert _run("topics", "build", "--papers-per-topic", "0")[0] == 2
    assert _run("topics", "build", "--neighbours", "-1")[0] == 2
    add_papers(store, settings, make_corpus())
    code, out = _run("topics", "build", "--json", *SMALL)
    assert code == 0
    report = json.loads(out)
    assert report["counts"]["topics"] == 4 and report["counts"]["other"] == 8
    assert report["details"]["build_id"] == 1
    code, out = _run("topics", "list", "--json")
    listing = json.loads(out)
    assert code == 0 and listing["other"]["size"] == 8
    slugs = [t["slug"] for s in listing["sections"] for t in s["topics"]]
    assert len(slugs) == 4
    code, out = _run("topics", "show", slugs[0], "--json", "--limit", "3")
    shown = json.loads(out)
    assert code == 0 and shown["slug"] == slugs[0] and len(shown["papers"]) == 3
    assert shown["weekly"] == [{"week": "2026-06-01", "papers": 40}]
    assert _run("topics", "show", "no-such-topic")[0] == 1
    add_papers(store, settings, make_corpus(n_per_field=2, noise=1, seed=9, start=900))
    assert _run("topics", "assign", "--engine", "no-such-engine")[0] == 2
    code, out = _run("topics", "assign", "--json", "--engine", "local")
    assigned = json.loads(out)
    assert code == 0 and assigned["counts"]["assigned"] == 9
    assert assigned["details"]["engine"] == "local"
    code, out = _run("topics", "build", "--json", "--fresh", *SMALL)
    assert code == 0 and json.loads(out)["counts"]["kept"] == 4
    code, out = _run("topics", "build", "--json", "--neighbours", "0", *SMALL)
    raw = json.loads(out)
    # Raw vectors: the smoothed centroids do not seed it, yet the same four topics are kept.
    assert code == 0 and raw["counts"]["kept"] == 4 and raw["details"]["warm_start"] is False
    code, out = _run("topics", "build", "--json", "--neighbours", "0", *SMALL)
    assert code == 0 and json.loads(out)["details"]["warm_start"] is True
    code, out = _run("eval", "topics", "--json", "--no-stability", "--no-baseline")
    result = json.loads(out)
    assert code == 0 and result["labels"]["problems"] == 0 and result["topics"] == 4
    assert 0 < result["other_share"] < 0.1
    code, out = _run("topics", "trending", "--json")
    assert code == 0 and isinstance(json.loads(out), list)
