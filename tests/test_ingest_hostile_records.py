"""Hostile records (issue 19): every bad line is skipped with a reason that names it, the rest is stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from papersift.ingest.stage import Ingest
from papersift.records import (
    PaperRecord,
    RecordLimits,
    Skipped,
    check_record,
    clean_text,
    has_control,
    split_arxiv_id,
)
from papersift.records.prepare import prepare_record
from papersift.settings import Settings
from papersift.sources import jsontext
from papersift.sources.files import parse_line, parse_object
from papersift.store import Store, add_records

LIMITS = RecordLimits.defaults()
TODAY = datetime.now(UTC).date()


def good(paper_id: str = "2501.00001", **fields: Any) -> dict[str, Any]:
    record = {"id": paper_id, "title": f"A study of things {paper_id}", "abstract": "We study.",
              "authors": ["Ada Lovelace", "Alan Turing"], "categories": ["cs.LG"],
              "announced": "2025-06-02", "comment": None}
    record.update(fields)
    return record


def parsed(line: bytes | str | dict[str, Any]) -> PaperRecord | Skipped:
    if isinstance(line, dict):
        line = json.dumps(line)
    if isinstance(line, str):
        line = line.encode()
    return parse_line(line, "f.jsonl:7", LIMITS)


def reason(line: bytes | str | dict[str, Any]) -> str:
    item = parsed(line)
    assert isinstance(item, Skipped), f"expected a skip, got {item}"
    assert item.where == "f.jsonl:7"
    return item.reason


# The three kinds that aborted a whole file, and the odd input that was accepted or mis-reported.
@pytest.mark.parametrize(("line", "names"), [
    (good(categories=7), ["categories", "a number (7)"]),
    (good("2501.00001v99999999999999999999"), ["version", "out of range"]),
    ("[" * 100_000, ["nested more than 32 levels"]),
    ('{"id": "2501.00001", "x": ' + "[" * 5000 + "]" * 5000 + "}", ["nested more than 32"]),
    (good(announced="9999-12-31"), ["announced 9999-12-31 is in the future"]),
    (good(abstract="word " * 1_000_000), ["abstract is 5,000,000 characters", "max_abstract_chars"]),
    (good(authors=[f"Author {i}" for i in range(10_000)]), ["10,000 authors", "max_authors"]),
    (good(title="T" * 100_000), ["title is 100,000 characters", "max_title_chars"]),
    (good("2501.00001v0"), ["v0", "versions start at v1"]),
    (good(comment={"a": 1}), ["comment is an object, not text"]),
    (good(comment=["x"]), ["comment is a list"]),
    ('{"id": 2501.00001, "title": "Number id"}', ["id is a number (2501.00001)", "quotes"]),
    (good(authors="A", versions=[{"version": "v1", "created": 7}]), ["invalid version entry"]),
    (good(authors=[1, 2]), ["author 1 is a number"]),
    (good(authors={"name": "x"}), ["authors is an object"]),
    (good(categories=[["cs.LG"]]), ["category 1 is a list"]),
    (good(title=["list"]), ["title is a list"]),
    (good(abstract=5), ["abstract is a number"]),
    (good(announced=20250101), ["announced is a number"]),
    (good(doi=True), ["doi is true, not text"]),
    (good("2513.00001"), ["no month 13"]),
    (good("x" * 1_000_000), ["not an arXiv id", "characters"]),
    ('{"id": "2501.00001", "title": "t", "n": ' + "9" * 5000 + "}", ["not valid JSON", "digits"]),
    ("[1, 2]", ["line is a list, not a JSON object"]),
    ("7", ["line is a number (7)"]),
    ('"text"', ["line is text"]),
    ("null", ["line is null"]),
    (good(authors=["A" * 5000]), ["author name is 5,000 characters", "max_field_chars"]),
])
def test_each_hostile_record_is_skipped_with_a_reason_that_names_it(
        line: Any, names: list[str]) -> None:
    text = reason(line)
    for name in names:
        assert name in text, text
    assert len(text) < 400, "a reason quotes the value, never all of it"


def test_numbers_that_break_64_bits_never_reach_the_store(store: Store, settings: Settings,
                                                          tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join([
        json.dumps(good("2501.00001v99999999999999999999")),
        json.dumps(good("2501.00002", versions=[{"version": "v" + "9" * 30, "created":
                                                 "Mon, 2 Apr 2007 19:18:42 GMT"}],
                        authors="A. B")),
        json.dumps(good("2501.00003")),
    ]) + "\n")
    report = Ingest([f"file:{path}"], parallel_index=True).run(store, settings)
    assert report.counts["new"] == 1 and len(report.skipped) == 2 and not report.failures


def test_control_characters_are_removed_before_storage(store: Store, settings: Settings,
                                                       tmp_path: Path) -> None:
    path = tmp_path / "nul.jsonl"
    path.write_text(json.dumps(good(title="Null\x00 byte\x07 title\x7f\x85",
                                    abstract="Tab\tand\nnew line kept\x1b[31m",
                                    authors=["Ada\x00 Lovelace"], comment="c\x00omment")) + "\n")
    report = Ingest([f"file:{path}"]).run(store, settings)
    assert report.counts["new"] == 1 and not report.skipped
    paper = store.papers.get_paper("2501.00001")
    assert paper["title"] == "Null byte title"
    assert paper["abstract"] == "Tab\tand\nnew line kept[31m"
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace"]
    assert paper["comment"] == "comment"


def test_dates_a_few_days_ahead_are_kept_and_later_ones_refused() -> None:
    soon = (TODAY + timedelta(days=2)).isoformat()
    later = (TODAY + timedelta(days=30)).isoformat()
    assert isinstance(parsed(good(announced=soon)), PaperRecord)
    assert f"announced {later} is in the future" in reason(good(announced=later))
    snapshot = good(authors="A. B", versions=[{"version": "v1",
                                               "created": "Fri, 31 Dec 9999 10:00:00 GMT"}])
    assert "v1 date 9999-12-31 is in the future" in reason(snapshot)


def test_records_of_network_sources_pass_the_same_checks(store: Store, settings: Settings,
                                                         tmp_path: Path) -> None:
    record = PaperRecord(id="2501.00001", title="T\x00", abstract="", authors=["A"],
                         categories=["cs.LG"], source="arxiv",
                         links={"abs": "javascript:alert(1)"})
    with pytest.raises(ValueError, match="link 'abs' is not an http"):
        check_record(record, LIMITS)
    record = PaperRecord(id="2501.00001", title="T\x00", abstract="", authors=["A"],
                         categories=["cs.LG"], source="hf", extras={"upvotes": {"a": 1}})
    with pytest.raises(ValueError, match="upvotes is an object"):
        check_record(record, LIMITS)
    record.extras = {"upvotes": 3}
    assert check_record(record, LIMITS).title == "T"


def test_limits_are_settings(store: Store, settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "limits.jsonl"
    path.write_text(json.dumps(good(title="x" * 50)) + "\n")
    strict = settings.replace(max_title_chars=10)
    report = Ingest([f"file:{path}"]).run(store, strict)
    assert report.skipped and "max_title_chars" in report.skipped[0]["reason"]
    report = Ingest([f"file:{path}"]).run(store, settings)  # a skipped line is read again
    assert report.counts["new"] == 1


def test_ids_keep_their_shape() -> None:
    assert split_arxiv_id("2501.00001v3") == ("2501.00001", 3)
    assert split_arxiv_id("math/9901001v2") == ("math/9901001", 2)
    for bad in ("2500.00001", "math/9913001", "2501.00001v" + "9" * 20):
        with pytest.raises(ValueError):
            split_arxiv_id(bad)
    with pytest.raises(ValueError, match="id is a number"):
        split_arxiv_id(2501.00001)  # type: ignore[arg-type]


def test_the_mixed_file_ends_with_exit_3_and_every_valid_record(tmp_path: Path) -> None:
    """The probe's file in small: valid lines between every hostile kind; the command stores
    every valid record, names each skipped line, and exits 3."""
    hostile = [json.dumps(good(categories=7)), json.dumps(good("2501.00001v" + "9" * 20)),
               "[" * 100_000, json.dumps(good(title="x\x00", announced="9999-12-31")),
               '{"id": 2501.00001, "title": "n"}', json.dumps(good(comment={"a": 1}))]
    lines = []
    for number, bad in enumerate(hostile, start=1):
        lines += [json.dumps(good(f"2502.{number:05d}")), bad]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path / "data")}
    run = subprocess.run([sys.executable, "-m", "papersift.cli.main", "ingest", f"file:{path}",
                          "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr
    report = json.loads(run.stdout)
    assert report["counts"]["new"] == len(hostile)
    assert [s["where"] for s in report["skipped"]] == [
        f"mixed.jsonl:{2 * n}" for n in range(1, len(hostile) + 1)]


def test_add_records_of_a_clean_record_is_unchanged(store: Store) -> None:
    record = parse_object(good())
    assert check_record(record, LIMITS) is record
    add_records(store, [record])
    assert store.papers.get_paper("2501.00001")["title"] == record.title


# ------------------------------------------------------------------ properties
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)
FIELDS = ("id", "title", "abstract", "authors", "categories", "announced", "comment", "doi",
          "journal_ref", "versions", "update_date", "comments", "journal-ref", "license")


def _assert_stored_record_is_clean(item: PaperRecord | Skipped) -> None:
    if isinstance(item, Skipped):
        assert item.reason and len(item.reason) < 600
        return
    texts = [item.title, item.abstract, *item.authors, *item.categories,
             *(v for v in (item.doi, item.comment, item.journal_ref, item.license) if v)]
    assert not any(has_control(t) for t in texts)
    assert len(item.title) <= LIMITS.title_chars and item.title.strip()
    assert len(item.abstract) <= LIMITS.abstract_chars
    assert len(item.authors) <= LIMITS.authors
    assert item.version is None or 1 <= item.version <= LIMITS.version
    for day in (item.submitted, item.updated, item.announced, *(d for _, d in item.versions)):
        assert day is None or day[:10] <= LIMITS.latest_day
    prepare_record(item)  # what the store derives from it (hashes of every field) works


@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=8))
def test_any_json_object_becomes_a_clean_record_or_a_skip(data: dict[str, Any]) -> None:
    _assert_stored_record_is_clean(parse_line(json.dumps(data).encode(), "p:1", LIMITS))


@hsettings(max_examples=300, deadline=None)
@given(st.sampled_from(FIELDS), JSON)
def test_one_odd_field_in_a_valid_record_is_handled(name: str, value: Any) -> None:
    data = good(**{name: value})
    _assert_stored_record_is_clean(parse_line(json.dumps(data).encode(), "p:1", LIMITS))


@hsettings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_become_a_record_or_a_skip(line: bytes) -> None:
    _assert_stored_record_is_clean(parse_line(line, "p:1", LIMITS))


@hsettings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_any_title_and_abstract_text_is_stored_clean(title: str, abstract: str) -> None:
    item = parse_line(json.dumps(good(title=title, abstract=abstract)).encode(), "p:1", LIMITS)
    _assert_stored_record_is_clean(item)
    if isinstance(item, PaperRecord):
        assert item.title == clean_text(title) and item.abstract == clean_text(abstract)


@hsettings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=3000), st.sampled_from("[{"))
def test_depth_is_refused_before_any_parser_recurses(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    inner = "[]" if opener == "[" else "{}"
    text = (opener + ('"a":' if opener == "{" else "")) * (depth - 1) + inner + closer * (depth - 1)
    if depth > 32:
        with pytest.raises(jsontext.TooDeep):
            jsontext.loads(text.encode(), 32)
    else:
        jsontext.loads(text.encode(), 32)
