"""Ingesting local JSON-lines files: both layouts, malformed lines, gzip, idempotency, kill and resume."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest

from papersift.ingest.files import _decode_items, _encode_items
from papersift.ingest.stage import Ingest
from papersift.records import Skipped, split_arxiv_id
from papersift.records.prepare import prepare_record
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.sources.files import KnownLine, parse_object, read_jsonl, split_author_string
from papersift.store import Store, open_store
from tests.conftest import shared_file

RECENT = "arxiv-2025-2026.jsonl.gz"
SNAPSHOT = "arxiv-cs-1993-2019.snapshot.jsonl.gz"


def head_lines(name: str, count: int) -> list[str]:
    with gzip.open(shared_file(name), "rt", encoding="utf-8") as lines:
        return list(itertools.islice(lines, count))


def write_jsonl(path: Path, lines: list[str], compress: bool = False) -> Path:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if compress:
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def papersift(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "papersift.cli.main", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300,
    )


def test_recent_layout_record() -> None:
    record = parse_object(json.loads(head_lines(RECENT, 2)[1]))
    assert record.id == "1804.06498" and record.source == "file"
    assert record.authors == ["Mahdi Abavisani", "Vishal M. Patel"]
    # ACM/MSC class codes are dropped; arXiv categories keep their order, primary first.
    assert record.categories == ["cs.LG", "cs.AI", "cs.CV", "stat.ML"]
    assert record.announced == "2025-10-14" and "\n" in record.abstract  # kept as given


def test_snapshot_layout_record() -> None:
    record = parse_object(json.loads(head_lines(SNAPSHOT, 1)[0]))
    assert record.id == "adap-org/9807003" and record.source == "snapshot"
    assert record.authors == ["Jens C. Astor", "Christoph Adami"]
    assert record.categories[0] == "adap-org" and "cs.NE" in record.categories
    assert record.versions == [(1, "1998-07-16")] and record.version == 1
    assert record.submitted == "1998-07-16"


@pytest.mark.parametrize(("text", "names"), [
    ("A. Smith (MIT), B. Jones and C. Wu", ["A. Smith", "B. Jones", "C. Wu"]),
    ("X Y (Dept. (Univ. Z)), W V", ["X Y", "W V"]),
    ("John Smith, Jr., Ann Lee", ["John Smith, Jr.", "Ann Lee"]),
    ("The ATLAS Collaboration", ["The ATLAS Collaboration"]),
])
def test_snapshot_author_strings(text: str, names: list[str]) -> None:
    assert split_author_string(text) == names


@pytest.mark.parametrize("created", [
    "Mon, 2 Apr 2007 19:18:42 GMT", "Tue, 31 Dec 2019 23:59:59 GMT",
    "Wed, 1 Jan 2020 00:30:00 +0200", "2 Apr 2007 19:18:42 -0500", "Mon,  2 Apr 2007 19:18:42 GMT",
])
def test_version_dates_read_as_the_email_parser_reads_them(created: str) -> None:
    expected = parsedate_to_datetime(created).date().isoformat()
    record = parse_object({"id": "0704.0001", "title": "A title", "authors": "A. Author",
                           "versions": [{"version": "v1", "created": created}]})
    assert record.versions == [(1, expected)]


@pytest.mark.parametrize("created", ["Mon, 31 Feb 2007 19:18:42 GMT", "yesterday", None, 7])
def test_invalid_version_dates_are_reported(created: object) -> None:
    with pytest.raises(ValueError, match="invalid version entry"):
        parse_object({"id": "0704.0001", "title": "A title", "authors": "A. Author",
                      "versions": [{"version": "v1", "created": created}]})


def test_malformed_lines_are_skipped_and_reported(tmp_path: Path) -> None:
    good = head_lines(RECENT, 3)
    lines = [
        good[0],
        "{not json",
        json.dumps({"title": "no id"}),
        json.dumps({"id": "2401.00001", "title": "  "}),
        json.dumps({"id": "not an id", "title": "x"}),
        json.dumps({"id": "2401.00002", "title": "Bad date", "announced": "2025-13-45"}),
        json.dumps(["a", "list"]),
        "",
        good[1],
        good[2],
    ]
    items = list(read_jsonl(write_jsonl(tmp_path / "mixed.jsonl", lines)))
    skipped = [i for i in items if not hasattr(i, "title")]
    assert [s.where for s in skipped] == [f"mixed.jsonl:{n}" for n in (2, 3, 4, 5, 6, 7)]
    reasons = " | ".join(s.reason for s in skipped)
    for expected in ("not valid JSON", "missing id", "missing title", "not an arXiv id",
                     "invalid announced date", "not a JSON object"):
        assert expected in reasons
    assert len(items) - len(skipped) == 3


def test_lenient_json_is_kept_and_unencodable_text_replaced(
    tmp_path: Path, store: Store, settings: Settings
) -> None:
    base = {"abstract": "a", "authors": ["Ada Lovelace"], "categories": ["cs.LG"]}
    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"\n".join([
        # An escaped lone surrogate: no UTF-8 text can hold it as it is.
        json.dumps({**base, "id": "2401.00001", "title": "Lone \ud800 surrogate"}).encode(),
        # A byte that is not UTF-8 where "ÿ" was.
        json.dumps({**base, "id": "2401.00002", "title": "Bad UTF-8 ÿ"}, ensure_ascii=False
                   ).encode().replace("ÿ".encode(), b"\xff"),
        json.dumps({**base, "id": "2401.00003", "title": "NaN in extras", "x": float("nan")}
                   ).encode(),
    ]) + b"\n")
    # parallel_index=True sends the lines through the helper process, as bulk files go.
    report = Ingest([f"file:{path}"], parallel_index=True).run(store, settings)
    assert (report.counts["new"], report.skipped) == (3, [])
    assert store.papers.get_paper("2401.00001")["title"] == "Lone \ufffd surrogate"
    assert store.papers.get_paper("2401.00002")["title"] == "Bad UTF-8 \ufffd"


def test_a_corrupt_gzip_is_reported_not_raised(tmp_path: Path, store: Store,
                                                settings: Settings) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl.gz", head_lines(RECENT, 400), compress=True)
    data = bytearray(path.read_bytes())
    data[200:260] = bytes(60)  # zeroes in the middle of the deflate stream
    path.write_bytes(bytes(data))
    report = Ingest([f"file:{path}"]).run(store, settings)
    assert report.skipped and "unreadable" in report.skipped[-1]["reason"]


def test_truncated_gzip_keeps_what_was_read(tmp_path: Path, store: Store,
                                            settings: Settings) -> None:
    path = write_jsonl(tmp_path / "cut.jsonl.gz", head_lines(RECENT, 400), compress=True)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    report = Ingest([f"file:{path}"]).run(store, settings)
    assert 0 < report.counts["new"] < 400
    assert report.skipped and "ends early" in report.skipped[-1]["reason"]


def test_ingest_twice_changes_nothing_the_second_time(tmp_path: Path, store: Store,
                                                      settings: Settings) -> None:
    path = write_jsonl(tmp_path / "recent.jsonl.gz", head_lines(RECENT, 1500), compress=True)
    first = Ingest([f"file:{path}"], batch_size=400).run(store, settings)
    before = store.papers.dump()
    second = Ingest([f"file:{path}"], batch_size=400).run(store, settings)
    assert first.counts["new"] + len(first.skipped) == 1500 and first.counts["new"] > 1400
    assert second.counts["new"] == 0 and second.counts["updated"] == 0 and second.counts["unchanged"] == first.counts["new"]
    assert store.papers.dump() == before


def test_reingest_trusts_a_known_line_only_while_its_record_is_current(
    tmp_path: Path, store: Store, settings: Settings
) -> None:
    lines = head_lines(RECENT, 300)
    original = write_jsonl(tmp_path / "a.jsonl", lines)
    first = Ingest([f"file:{original}"]).run(store, settings)
    known = store.conn.execute("SELECT count(*) FROM source_lines").fetchone()[0]
    assert first.counts["new"] == 300 and known == 300
    # Another file of the same source changes one paper: its line in a.jsonl is now stale.
    changed = json.loads(lines[7])
    changed["title"] = "A new title"
    Ingest([f"file:{write_jsonl(tmp_path / 'b.jsonl', [json.dumps(changed)])}"]).run(store, settings)
    assert store.papers.get_paper(changed["id"])["title"] == "A new title"
    again = Ingest([f"file:{original}"]).run(store, settings)
    assert again.counts["updated"] == 1 and again.counts["unchanged"] == 299 and again.counts["new"] == 0
    assert store.papers.get_paper(changed["id"])["title"] == json.loads(lines[7])["title"]
    # With a limit the lines are parsed, and the answer is the same.
    limited = Ingest([f"file:{original}"], options=SourceOptions(limit=50)).run(store, settings)
    assert limited.counts["unchanged"] == 50 and limited.counts["new"] == limited.counts["updated"] == 0


def test_both_layouts_of_the_same_paper_merge(tmp_path: Path, store: Store,
                                              settings: Settings) -> None:
    line = json.loads(head_lines(SNAPSHOT, 1)[0])
    recent = {"id": line["id"], "title": line["title"], "abstract": "shorter abstract",
              "authors": ["Jens C. Astor", "Christoph Adami"], "categories": ["cs.NE"],
              "comment": None, "announced": "1998-07-17"}
    path = write_jsonl(tmp_path / "both.jsonl", [json.dumps(line), json.dumps(recent)])
    report = Ingest([f"file:{path}"]).run(store, settings)
    stored = store.papers.get_paper(line["id"])
    assert report.counts["new"] == 1 and report.counts["updated"] == 1
    assert set(stored["sources"]) == {"snapshot", "file"}
    assert stored["abstract"] == line["abstract"]  # the snapshot ranks above a plain file
    assert stored["announced"] == "1998-07-17"


def test_cli_ingest_stats_show_and_exit_codes(tmp_path: Path) -> None:
    env = {"PAPERSIFT_DATA_DIR": str(tmp_path / "cli")}
    lines = head_lines(RECENT, 50) + ["{broken"]
    path = write_jsonl(tmp_path / "some.jsonl", lines)
    run = papersift("ingest", f"file:{path}", "--json", env=env)
    assert run.returncode == 3, run.stderr  # done, with skipped records
    report = json.loads(run.stdout)
    assert report["counts"]["new"] == 50 and report["skipped"][0]["where"] == "some.jsonl:51"
    again = papersift("ingest", f"file:{path}", "--json", env=env)
    assert json.loads(again.stdout)["counts"]["new"] == 0
    stats = json.loads(papersift("stats", "--json", env=env).stdout)
    assert stats["papers"] == 50 and stats["by_source"] == {"file": 50}
    first_id = json.loads(lines[0])["id"]
    shown = papersift("show", first_id, "--json", env=env)
    assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == first_id
    assert papersift("show", "9999.99999", env=env).returncode == 1
    bad = papersift("ingest", "nosuchsource:x", env=env)
    assert bad.returncode == 2 and "unknown source" in bad.stderr
    missing = papersift("ingest", f"file:{tmp_path / 'absent.jsonl'}", env=env)
    assert missing.returncode == 1 and "file not found" in missing.stderr
    bad_date = papersift("ingest", f"file:{path}", "--since", "yesterday", env=env)
    assert bad_date.returncode == 2 and "--since" in bad_date.stderr


def _count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_killed_ingest_resumes_to_the_same_database(tmp_path: Path) -> None:
    # Enough lines that the run is still going after its first committed batch (10,000).
    lines = head_lines(RECENT, 6000) + head_lines(SNAPSHOT, 24000)
    source = write_jsonl(tmp_path / "mixed.jsonl.gz", lines, compress=True)
    killed_dir, clean_dir = tmp_path / "killed", tmp_path / "clean"

    proc = subprocess.Popen(
        [sys.executable, "-m", "papersift.cli.main", "ingest", f"file:{source}"],
        env={**os.environ, "PAPERSIFT_DATA_DIR": str(killed_dir)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while _count(killed_dir / "papersift.db") < 2000 and time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "ingest finished before it could be killed; use more lines"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _count(killed_dir / "papersift.db")
    assert 0 < partial < len(lines)

    resumed = papersift("ingest", f"file:{source}", "--json",
                        env={"PAPERSIFT_DATA_DIR": str(killed_dir)})
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["counts"]["unchanged"] >= partial
    clean = papersift("ingest", f"file:{source}", env={"PAPERSIFT_DATA_DIR": str(clean_dir)})
    assert clean.returncode == 0, clean.stderr

    with open_store(killed_dir / "papersift.db") as a, open_store(clean_dir / "papersift.db") as b:
        assert a.papers.dump() == b.papers.dump()  # the full-text index's terms included
        # The file is big enough that the index was built by a helper process, which the
        # kill interrupted: the resumed run built it again and put it in place.
        assert json.loads(resumed.stdout)["details"]["parallel_index"]
        a.conn.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES('integrity-check', 1)")
        assert a.conn.execute("SELECT count(*) FROM fulltext_deferred").fetchone()[0] == 0


@pytest.mark.parametrize(("mangled", "repaired"), [
    ("806.1945", "0806.1945"),            # leading zero lost
    ("905.336", "0905.3360"),             # trailing zero lost
    ("1805.0946", "1805.09460"),          # trailing zero lost after 2015: four digits
    ("1501.001", "1501.00100"),
    ("1809.0495399999998", "1809.04954"),  # binary noise after 2015's five digits
    ("1502.0207699999999", "1502.02077"),
])
def test_ids_that_went_through_a_float_are_repaired(mangled: str, repaired: str) -> None:
    record = parse_object({"id": mangled, "title": "A title", "authors": "A B", "versions": []})
    assert record.id == repaired


@pytest.mark.parametrize("valid", ["1412.9999", "0704.0001", "1501.00001", "2401.01234"])
def test_valid_ids_are_not_repaired(valid: str) -> None:
    assert split_arxiv_id(valid) == (valid, None)
    assert split_arxiv_id(f"{valid}v2") == (valid, 2)


def test_items_cross_the_helper_pipe_unchanged() -> None:
    record = parse_object({"id": "1805.09460v2", "title": "A title", "authors": "Ada B, Cy D",
                           "categories": "cs.LG stat.ML", "versions": [
                               {"version": "v1", "created": "Thu, 24 May 2018 10:00:00 GMT"}]})
    chunk = [prepare_record(record, line_key=-7), KnownLine(5, "f.jsonl:2", b'{"id": 1}\n'),
             Skipped("file", "f.jsonl:3", "not valid JSON")]
    back = _decode_items(_encode_items(chunk))
    assert back == chunk
    assert [type(item) for item in back] == [type(item) for item in chunk]
    assert back[0].record() == record
