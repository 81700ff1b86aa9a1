"""The merge rules every store backend shares, on plain dict rows (PostgreSQL's rows are dicts;
SQLite's are case-insensitive rows): which source's text wins, what accumulates (issue 20)."""

from __future__ import annotations

from typing import Any

from papersift.records import PaperRecord
from papersift.records.merge import merge, source_kind
from papersift.records.prepare import norm_title_key, slugify

TITLE = "Sparse Attention for Long Documents"


def row(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict(
        title=TITLE, abstract="Stored abstract.", primary_category="cs.CL", submitted=None,
        updated=None, doi=None, comment="", journal_ref=None, license=None, announced=None,
        links='{"abs": "stored"}', version=1, text_source="file:/x.jsonl",
        authors_text="Ada Lovelace, Alan Turing", sort_date=None,
        norm_key=norm_title_key(TITLE, ["Ada Lovelace"]))
    base.update(fields)
    return base


def record(**fields: Any) -> PaperRecord:
    base: dict[str, Any] = dict(id="2401.00001", title=TITLE, abstract="Stored abstract.",
                                authors=["Ada Lovelace", "Alan Turing"], categories=["cs.CL"],
                                source="file:/y.jsonl", version=1)
    base.update(fields)
    return PaperRecord(**base)


def test_source_kind_is_what_comes_before_the_first_colon() -> None:
    assert source_kind("file:/a/b:c.jsonl") == "file" and source_kind("arxiv") == "arxiv"


def test_the_newer_version_then_the_higher_source_then_the_newcomer_wins() -> None:
    assert merge(row(version=1), record(version=2, title="New", source="hf")).changed[
        "title"] == "New"
    assert merge(row(version=2), record(version=1, title="New", source="arxiv")).wins is False
    hf_row = row(text_source="hf")
    assert merge(hf_row, record(title="New", source="arxiv")).changed["title"] == "New"
    assert merge(row(text_source="arxiv"), record(title="New", source="hf")).wins is False
    tie = merge(row(), record(title="New"))  # same version, same kind: the newcomer
    assert tie.wins is True and tie.changed["title"] == "New"
    unversioned = merge(row(version=None), record(version=None, title="New"))
    assert unversioned.changed["title"] == "New"
    unknown_row = merge(row(text_source="mystery"), record(title="New", source="other"))
    assert unknown_row.wins is True and unknown_row.changed["text_source"] == "other"
    assert merge(row(text_source="mystery"), record(title="New")).wins is True
    assert merge(row(), record(title="New", source="other")).wins is False


def test_empty_fields_never_erase_and_a_loser_fills_gaps() -> None:
    winner = merge(row(), record(version=2, abstract="", comment="new comment"))
    assert "abstract" not in winner.changed and winner.changed["comment"] == "new comment"
    loser = merge(row(version=3), record(version=1, title="Old", comment="filled"))
    assert loser.changed == {"comment": "filled"}
    assert merge(row(comment="kept"), record(version=1, comment="", source="hf")).changed == {}


def test_links_authors_source_and_dates_accumulate_by_rank() -> None:
    won = merge(row(), record(version=2, links={"abs": "new", "pdf": "p"},
                              authors=["Grace Hopper", "Edsger Dijkstra"], announced="2025-01-05",
                              submitted="2025-01-02"))
    assert won.changed["links"] == '{"abs":"new","pdf":"p"}'
    assert won.changed["authors_text"] == "Grace Hopper, Edsger Dijkstra" and won.authors_change
    assert won.changed["text_source"] == "file:/y.jsonl"
    assert won.changed["norm_key"] == norm_title_key(TITLE, ["Grace Hopper"])
    assert won.changed["sort_date"] == "2025-01-05" and won.changed["version"] == 2
    lost = merge(row(version=3, announced="2025-01-09"), record(
        version=1, links={"abs": "new", "pdf": "p"}, authors=["Grace Hopper"],
        announced="2025-01-05", title="Other"))
    assert lost.changed["links"] == '{"abs":"stored","pdf":"p"}'
    assert "authors_text" not in lost.changed and not lost.authors_change
    assert "text_source" not in lost.changed and "norm_key" not in lost.changed
    assert lost.changed["announced"] == "2025-01-05" and lost.changed["sort_date"] == "2025-01-05"
    submitted = merge(row(), record(submitted="2025-01-02T10:00:00"))
    assert submitted.changed["sort_date"] == "2025-01-02"
    same = merge(row(), record())
    assert same.changed == {"text_source": "file:/y.jsonl"} and same.visible is False


def test_slugs_and_title_keys() -> None:
    assert slugify("  Lee!") == "lee" and slugify("!!!") == "x" and slugify("Zoë") == "zoe"
    key = norm_title_key(TITLE, ["Ada Lovelace"])
    assert norm_title_key("Ｓｐａｒｓｅ attention for long documents", ["A. Lovelace"]) == key
    assert norm_title_key("Attention Mechanisms", ["Ada Lovelace"]) is None
    assert norm_title_key("Sparse Attention Mechanisms", ["Ada Lovelace"]) is not None
    assert norm_title_key(TITLE, []) is None
    assert norm_title_key(TITLE, ["Ada King Lovelace"]) != norm_title_key(TITLE, ["Ada King Byron"])
    assert norm_title_key(TITLE, ["Lovelace"]) == key
    assert norm_title_key(TITLE, [" "]) == norm_title_key(TITLE, [""])
