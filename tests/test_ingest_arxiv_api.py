"""The arXiv API source against a local server speaking the Atom API, with real samples, paging and faults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, timedelta

import httpx
import pytest

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord, Skipped, SourceError
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from tests.conftest import shared_file, shared_format
from tests.upstream import Fault, Upstream, closed_port, make_paper, make_papers, shared_papers

WEEK = SourceOptions(since=date(2026, 11, 20), until=date(2026, 11, 28))


def run(server: Upstream, spec: str = "arxiv:cs.LG", options: SourceOptions = WEEK, **settings):
    found = list(open_source(spec, options, load_settings(**server.settings_overrides(**settings))))
    return ([r for r in found if isinstance(r, PaperRecord)], [s for s in found if isinstance(s, Skipped)])


# ------------------------------------------------------------------ real samples
def test_parses_the_2026_format_sample() -> None:
    body = shared_format("arxiv_api/arxivpy_q_testing_s0_m10_bc5a6c384fe9.body.extracted.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        records, skipped = run(server)
    assert len(records) == 10 and not skipped
    first = records[0]
    assert (first.id, first.version, first.source) == ("2202.12139", 1, "arxiv")
    assert first.title == "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
    assert first.authors == ["Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"]
    assert first.categories == ["cs.SE", "cs.LG"]
    assert first.submitted == "2022-02-24T15:05:19Z" and first.updated == "2022-02-24T15:05:19Z"
    assert first.doi == "10.1109/ICSTW55395.2022.00035"
    assert first.comment.startswith("Artificial Intelligence in Software Testing 2022 workshop")
    assert first.journal_ref.startswith("Artificial Intelligence in Software Testing @ 2022 IEEE")
    assert first.links == {
        "abs": "https://arxiv.org/abs/2202.12139v1", "pdf": "https://arxiv.org/pdf/2202.12139v1",
        "doi": "https://doi.org/10.1109/ICSTW55395.2022.00035",
    }
    assert first.abstract.startswith("Deep Learning (DL) has revolutionized")
    assert len({r.id for r in records}) == 10


def test_parses_the_2016_format_sample_keeping_text_as_given() -> None:
    body = shared_format("arxiv_api/arxivpy_2016_search_au_del_maestro.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        records, _ = run(server, page_size=200)
    assert len(records) == 10
    first = records[0]
    assert first.id == "1201.4869"
    assert first.categories[0] == "cond-mat.mes-hall"  # primary first, though listed after
    assert first.abstract.startswith("  As helium-4 is cooled")  # whitespace kept as given
    assert first.doi == "10.1142/S021797921244002X"
    assert first.journal_ref == "Int. J. Mod. Phys. B, 26, 1244002 (2012)"
    assert any(r.id == "cond-mat/0412498" for r in records)  # old-style id


def test_affiliations_do_not_leak_into_author_names() -> None:
    body = shared_format(
        "arxiv_api/arxivpy_id_astro-ph_0601001_s0_m100_3150dca9dc76.body.extracted.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        records, _ = run(server)
    assert records[0].id == "astro-ph/0601001"
    assert records[0].authors == ["Andrew Gould", "Susan Dorsher", "B. Scott Gaudi", "Andrzej Udalski"]


def test_empty_result_sample_is_zero_records() -> None:
    body = shared_format("arxiv_api/arxivpy_id_0000.0000_s0_m100_8b51d9633a68.body.extracted.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        assert run(server) == ([], [])
        assert len(server.requests) == 1


def test_error_feed_with_http_400_names_arxivs_message() -> None:
    body = json.loads(shared_format("arxiv_api/arxivpy_id_abc_s0_m100_b79c8dcf6bc3.json").read_text())["body"]
    with Upstream() as server:
        server.faults = [Fault(status=400, body=body.encode())]
        with pytest.raises(SourceError, match="incorrect id format for abc"):
            run(server)
        assert len(server.requests) == 1  # a 400 is not retried


def test_generated_error_for_too_large_pages() -> None:
    with Upstream(make_papers(2)) as server, pytest.raises(SourceError, match="max_results must not exceed"):
        run(server, page_size=40000)


# ------------------------------------------------------------------------ paging
def test_pages_with_start_and_max_results_and_the_exact_query() -> None:
    with Upstream(make_papers(7, categories=["cs.LG", "cs.AI"])) as server:
        server.papers.append(make_paper("2611.09999", categories=["cs.CL"]))
        server.papers.append(make_paper("2611.09998", categories=["math.AG"]))
        records, _ = run(server, "arxiv:cs.LG,cs.CL", page_size=3)
    assert sorted(r.id for r in records) == sorted([f"2611.{i:05d}" for i in range(1, 8)] + ["2611.09999"])
    params = [r.params for r in server.requests]
    assert [p["start"] for p in params] == ["0", "3", "6"]
    assert all(p["max_results"] == "3" and p["sortBy"] == "submittedDate" for p in params)
    assert params[0]["search_query"] == (
        "(cat:cs.LG OR cat:cs.CL) AND submittedDate:[202611200000 TO 202611282359]")


def test_stops_when_total_is_reached_without_an_extra_request() -> None:
    with Upstream(make_papers(6)) as server:
        records, _ = run(server, page_size=3)
    assert len(records) == 6
    assert [r.params["start"] for r in server.requests] == ["0", "3"]


def test_date_range_filters_and_defaults_to_since_days() -> None:
    today = date.today()
    recent = make_paper("2611.00001", announced=(today - timedelta(days=1)).isoformat())
    old = make_paper("2611.00002", announced=(today - timedelta(days=30)).isoformat())
    with Upstream([recent, old]) as server:
        records, _ = run(server, options=SourceOptions(), since_days=3)
    assert [r.id for r in records] == ["2611.00001"]
    since = (today - timedelta(days=3)).strftime("%Y%m%d")
    assert f"submittedDate:[{since}0000 TO {today:%Y%m%d}2359]" in server.requests[0].params["search_query"]


def test_limit_stops_early() -> None:
    with Upstream(make_papers(9)) as server:
        records, _ = run(server, options=SourceOptions(since=WEEK.since, until=WEEK.until, limit=4),
                         page_size=3)
    assert len(records) == 4 and len(server.requests) == 2


def test_bad_categories_are_refused_before_any_request() -> None:
    with Upstream() as server:
        with pytest.raises(SourceError, match="not arXiv categories"):
            run(server, "arxiv:cs.LG,<script>")
        assert server.requests == []


# ------------------------------------------------------------------------ faults
def test_spurious_empty_page_is_asked_again() -> None:
    with Upstream(make_papers(7)) as server:
        server.faults = [Fault(), Fault(empty=True)]
        records, _ = run(server, page_size=3)
    assert len(records) == 7
    assert [r.params["start"] for r in server.requests] == ["0", "3", "3", "6"]


def test_503_with_retry_after_is_honoured() -> None:
    with Upstream(make_papers(2)) as server:
        server.faults = [Fault(status=503, retry_after=1)]
        records, _ = run(server)
    assert len(records) == 2
    first, second = server.requests
    assert second.time - first.time >= 0.95


@pytest.mark.parametrize("fault", [
    Fault(status=429), Fault(status=500), Fault(status=502), Fault(truncate=True),
    Fault(body=b"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><entry><id>"),
    Fault(body=b"<html>upstream maintenance</html>"),
], ids=["429", "500", "502", "truncated", "unparseable", "not-a-feed"])
def test_transient_faults_are_retried(fault: Fault) -> None:
    with Upstream(make_papers(4)) as server:
        server.faults = [Fault(), fault]
        records, skipped = run(server, page_size=2)
    assert sorted(r.id for r in records) == [f"2611.{i:05d}" for i in range(1, 5)]
    assert not skipped
    assert [r.params["start"] for r in server.requests] == ["0", "2", "2"]


def test_slow_response_times_out_and_is_retried() -> None:
    with Upstream(make_papers(2)) as server:
        server.faults = [Fault(delay=3.0)]
        started = time.monotonic()
        records, _ = run(server, http_timeout=0.3)
        took = time.monotonic() - started
    assert len(records) == 2 and len(server.requests) == 2
    assert took < 2.5  # gave up on the slow answer instead of waiting for it


def test_gives_up_after_the_retries_naming_url_and_status() -> None:
    with Upstream(make_papers(2)) as server:
        server.faults = [Fault(status=503)] * 5
        with pytest.raises(SourceError) as failure:
            run(server, http_retries=2)
        assert len(server.requests) == 3
        url = server.arxiv_api_url
    message = str(failure.value)
    assert url in message and "HTTP 503" in message and "3 attempts" in message


def test_malformed_entries_are_skipped_with_their_place_and_the_run_continues() -> None:
    feed = make_papers(5)
    feed[1]["render"] = {"title": ""}
    feed[2]["render"] = {"published": "yesterday"}
    feed[3]["render"] = {"id": "http://arxiv.org/abs/not-an-id"}
    with Upstream(feed) as server:
        records, skipped = run(server, page_size=2)
        url = server.arxiv_api_url
    assert [r.id for r in records] == ["2611.00001", "2611.00005"]
    assert [s.where.rsplit(" ", 2)[1:] for s in skipped] == [["entry", "2"], ["entry", "3"], ["entry", "4"]]
    assert all(s.source == "arxiv" and s.where.startswith(url) for s in skipped)
    assert "missing title" in skipped[0].reason
    assert "invalid <published> date 'yesterday'" in skipped[1].reason
    assert "not an arXiv id" in skipped[2].reason


# --------------------------------------------------------------------- politeness
def test_request_delay_is_kept_between_requests_to_the_same_host() -> None:
    with Upstream(make_papers(5)) as server:
        started = time.monotonic()
        records, _ = run(server, page_size=2, request_delay=0.3)
        took = time.monotonic() - started
    times = [r.time for r in server.requests]
    assert len(records) == 5 and len(times) == 3
    assert took >= 0.6
    # Arrival times carry the server's scheduling jitter (the first request also opens the
    # connection; on a loaded machine one arrival can be late by 0.1 s and the next on time),
    # so each gap gets slack (the client's own total, `took`, gets none); without the delay
    # the gaps are a few milliseconds.
    assert all(later - earlier >= 0.15 for earlier, later in zip(times, times[1:], strict=False))


def test_user_agent_names_papersift() -> None:
    with Upstream(make_papers(1)) as server:
        run(server)
    assert server.requests[0].headers["User-Agent"].startswith("papersift/")


# ------------------------------------------------------------------ into the store
def test_shared_papers_ingest_once_then_nothing_new(store, settings) -> None:
    feed = shared_papers(shared_file("arxiv-2025-2026.jsonl.gz"), 300, categories=["cs.LG"])
    days = sorted(p["submitted"][:10] for p in feed)
    options = SourceOptions(since=date.fromisoformat(days[len(days) // 2]),
                            until=date.fromisoformat(days[-1]))
    expected = {p["id"] for p in feed if options.since.isoformat() <= p["submitted"][:10]}
    with Upstream(feed) as server:
        wanted = settings.replace(**server.settings_overrides(page_size=50))
        first = Ingest(["arxiv:cs.LG"], options=options).run(store, wanted)
        second = Ingest(["arxiv:cs.LG"], options=options).run(store, wanted)
    assert first.counts["new"] == len(expected) and not first.skipped and not first.failures
    assert (second.counts["new"], second.counts["updated"], second.counts["unchanged"]) == (0, 0, len(expected))
    some = next(iter(expected))
    stored = store.papers.get_paper(some)
    source = next(p for p in feed if p["id"] == some)
    assert stored["title"] == source["title"] and stored["abstract"] == source["abstract"]
    assert [a["name"] for a in stored["authors"]] == source["authors"]
    assert "arxiv" in stored["sources"]


# Both the installed entry point (run(), which maps errors to exit codes) and the Typer app.
HOW = ["in-process", "subprocess"]


def _cli(how: str, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """Run `papersift ingest ARGS`: through the installed entry point, or in this process."""
    if how == "subprocess":
        done = subprocess.run(
            [sys.executable, "-m", "papersift.cli.main", "ingest", *args],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr
    from typer.testing import CliRunner

    from papersift.cli.main import app

    result = CliRunner().invoke(app, ["ingest", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("how", HOW)
def test_cli_ingest_reports_and_exit_codes(how: str, tmp_path) -> None:
    feed = make_papers(5, categories=["cs.LG"])
    feed[2]["render"] = {"title": ""}
    week = ["arxiv:cs.LG", "--since", "2026-11-20", "--until", "2026-11-28"]
    with Upstream(feed) as server:
        env = {**server.env(), "PAPERSIFT_DATA_DIR": str(tmp_path / "cli-data")}
        server.faults = [Fault(status=503, retry_after=0)]
        first = _cli(how, env, *week, "--json")
        second = _cli(how, env, *week, "--json")
        plain = _cli(how, env, *week)
    assert first[0] == 3, first[2]  # done, but one entry was skipped
    report = json.loads(first[1])
    assert report["counts"]["new"] == 4 and len(report["skipped"]) == 1
    assert report["skipped"][0]["where"].endswith("entry 3")
    assert "missing title" in report["skipped"][0]["reason"]
    again = json.loads(second[1])["counts"]
    assert second[0] == 3 and again["new"] == 0 and again["unchanged"] == 4
    assert plain[0] == 3 and "entry 3" in plain[2] and "unchanged 4" in " ".join(plain[2].split())


@pytest.mark.parametrize("how", HOW)
def test_cli_ingest_offline_exits_1_with_the_hint(how: str, tmp_path) -> None:
    env = {"PAPERSIFT_ARXIV_API_URL": f"http://127.0.0.1:{closed_port()}/api/query",
           "PAPERSIFT_REQUEST_DELAY": "0", "PAPERSIFT_DATA_DIR": str(tmp_path / "cli-data")}
    code, _, stderr = _cli(how, env, "arxiv:cs.LG")
    assert code == 1
    assert "papersift ingest file:../shared/data/arxiv-2025-2026.jsonl.gz" in " ".join(stderr.split())


def test_an_injected_client_is_used_and_left_open(store, settings) -> None:
    with Upstream(make_papers(3)) as server, httpx.Client(headers={"User-Agent": "injected/1"}) as client:
        wanted = settings.replace(**server.settings_overrides())
        report = Ingest(["arxiv:cs.LG"], options=WEEK, client=client).run(store, wanted)
        assert report.counts["new"] == 3 and server.requests[0].headers["User-Agent"] == "injected/1"
        assert client.get(server.arxiv_api_url, params={"search_query": "cat:cs.LG"}).status_code == 200
