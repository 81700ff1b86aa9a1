"""The front page is never thin: a latest day with few papers is joined by the days before it,
and the page says which days it shows."""

from __future__ import annotations

import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from papersift.ingest.stage import Ingest
from papersift.settings import Settings, load_settings
from papersift.sources import SourceOptions
from papersift.store import open_store
from papersift.web import views
from papersift.web.render import Linker, render_page
from tests.conftest import shared_file


def _settings(root: Path) -> Settings:
    return load_settings(environ={}, config=root / "none.toml", data_dir=str(root / "data"))


def _ingest(settings: Settings, records: list[dict[str, Any]], root: Path,
            limit: int | None = None) -> None:
    path = root / "papers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with open_store(settings) as store:
        report = Ingest([f"file:{path}"], SourceOptions(limit=limit)).run(store, settings)
        assert not report.failures and report.counts["new"] > 0


def _paper(number: int, day: str, category: str = "cs.LG") -> dict[str, Any]:
    return {"id": f"2606.{number:05d}", "title": f"Paper number {number}",
            "abstract": f"We study problem {number}. It matters.", "authors": ["A. Writer"],
            "categories": [category], "announced": day}


def _front(settings: Settings) -> tuple[dict[str, Any], str]:
    data = views.front(views.Site(settings))
    page = render_page(data, settings.site_title, Linker())
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    return data, re.sub(r" ([,.:;])", r"\1", text)


def test_day_span_says_days_as_a_reader_would() -> None:
    assert views.day_span(["2026-06-29"]) == "29 June 2026"
    assert views.day_span(["2026-06-29", "2026-06-27", "2026-06-28"]) == "27–29 June 2026"
    assert views.day_span(["2026-06-02", "2026-05-30"]) == "30 May – 2 June 2026"
    assert views.day_span(["2026-01-02", "2025-12-30"]) == "30 December 2025 – 2 January 2026"


def test_a_full_latest_day_is_shown_alone(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    records = [_paper(n, "2026-06-29", ("cs.LG", "cs.CL", "cs.CV")[n % 3]) for n in range(30)]
    records += [_paper(100 + n, "2026-06-26") for n in range(5)]
    _ingest(settings, records, tmp_path)
    data, text = _front(settings)
    assert [d["day"] for d in data["days"]] == ["2026-06-29"] and data["count"] == 30
    # Three sections: three stories each would be thin; each gives more until twenty.
    assert [len(s["stories"]) for s in data["sections"]] == [7, 7, 6]
    assert all(s["more"] == 3 for s in data["sections"][:2])
    assert "New papers, 29 June 2026" in text and "30 papers announced on 29 June 2026" in text


def test_a_thin_latest_day_reaches_back_until_twenty_stories(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    records = [_paper(1, "2026-06-29"), _paper(2, "2026-06-28", "cs.CL")]
    records += [_paper(10 + n, "2026-06-26", ("cs.LG", "cs.CL")[n % 2]) for n in range(12)]
    records += [_paper(40 + n, "2026-06-25") for n in range(12)]
    records += [_paper(80 + n, "2026-06-20") for n in range(5)]
    _ingest(settings, records, tmp_path)
    data, text = _front(settings)
    assert [d["day"] for d in data["days"]] == ["2026-06-29", "2026-06-28", "2026-06-26",
                                                 "2026-06-25"]
    assert data["count"] == 26 and len(data["papers"]) == 20
    # Two sections: more than three stories each to reach twenty; the newest come first.
    assert [len(s["stories"]) for s in data["sections"]] == [13, 7]
    assert data["sections"][0]["stories"][0]["id"] == "2606.00001"
    assert "Papers of 25–29 June 2026: 26 papers announced on 4 days" in text
    assert "2026-06-20" not in text


def test_a_store_with_few_papers_shows_them_all(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    _ingest(settings, [_paper(n, f"2026-06-{10 + n:02d}") for n in range(4)], tmp_path)
    data, text = _front(settings)
    assert len(data["days"]) == 4 and len(data["papers"]) == 4
    assert "Papers of 10–13 June 2026: 4 papers announced on 4 days" in text


@pytest.mark.slow
def test_the_5000_paper_slice_fills_the_front_page(tmp_path: Path) -> None:
    """What `papersift up --limit 5000` of the recent file shows first (its latest day holds
    one paper)."""
    source = shared_file("arxiv-2025-2026.jsonl.gz")
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for _, line in zip(range(5000), handle, strict=False)]
    settings = _settings(tmp_path)
    _ingest(settings, records, tmp_path, limit=5000)
    data, text = _front(settings)
    assert len(data["papers"]) >= 20
    assert len(data["days"]) > 1 and data["count"] >= 20
    latest = max(r["announced"] for r in records if r.get("announced"))
    assert data["day"] == latest
    assert f"Papers of {data['span']}" in text
    for day in data["days"]:
        assert day["day"] in text
