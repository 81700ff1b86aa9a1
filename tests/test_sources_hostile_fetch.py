"""Hostile upstreams (issue 19): every fetch is bounded in size, time and redirects; a failing source never stops the next."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from papersift.cli.web import failed_parts, update_exit_code
from papersift.ingest.stage import Ingest
from papersift.records import SourceError
from papersift.settings import Settings, load_settings
from papersift.sources.http import Fetcher
from papersift.stages import Report
from papersift.store import Store
from tests.upstream import Fault, Upstream, make_papers

TIMEOUT = 2.0


def fetch(server: Upstream, *faults: Fault, **settings: object) -> tuple[str, float]:
    """(the SourceError's message, seconds it took) of one GET against the faults."""
    server.faults = list(faults)
    values = server.settings_overrides(**{"http_timeout": TIMEOUT, **settings})
    started = time.monotonic()
    with Fetcher(load_settings(**values)) as fetcher, pytest.raises(SourceError) as failed:
        fetcher.get(server.arxiv_api_url, {"q": "x"})
    return str(failed.value), time.monotonic() - started


def test_a_gzip_bomb_is_stopped_at_the_size_limit_not_inflated() -> None:
    with Upstream() as server:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # A time limit far off: on a busy machine the server's gzip stream of 256 MB can take
        # longer than TIMEOUT to start, and a timeout is retried (this test is about size).
        message, seconds = fetch(server, Fault(gzip_bomb=256 << 20, sticky=True), http_max_mb=8,
                                 http_timeout=60.0)
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "over the limit of 8 MB once decompressed (http_max_mb)" in message
    assert "gave up" not in message, "an answer over the limit is not asked for again"
    assert len(server.requests) == 1
    assert grown_mb < 200  # the gzip stream itself is built in this process, once


def test_a_body_announced_too_large_is_refused_before_it_is_read() -> None:
    with Upstream() as server:
        message, seconds = fetch(server, Fault(size=200 << 20, chunk=1 << 20, sticky=True))
    assert "209,715,200 bytes, over the limit of 32 MB" in message
    assert seconds < TIMEOUT


def test_a_body_that_drips_is_cut_off_at_the_deadline() -> None:
    with Upstream() as server:
        message, seconds = fetch(server, Fault(size=1 << 20, chunk=16, drip=0.2, sticky=True))
    assert f"took longer than {TIMEOUT:g} s in all (http_timeout)" in message
    assert "bytes of its body had come" in message
    assert seconds < 2 * TIMEOUT and len(server.requests) == 1


def test_headers_that_drip_are_cut_off_at_the_deadline() -> None:
    with Upstream() as server:
        message, seconds = fetch(server, Fault(drip_headers=True, drip=0.05, sticky=True))
    assert "its body had not begun" in message
    assert seconds < 2 * TIMEOUT


def test_a_redirect_loop_is_reported() -> None:
    with Upstream() as server:
        message, seconds = fetch(server, Fault(redirect="/api/query", sticky=True))
    assert "redirect loop" in message and seconds < TIMEOUT


def test_redirects_are_followed_up_to_the_limit() -> None:
    with Upstream(make_papers(2)) as server:
        # Two hops, then the real answer: followed.
        server.faults = [Fault(redirect="/api/query?search_query=cat:cs.LG&hop=1"),
                         Fault(redirect="/api/query?search_query=cat:cs.LG&hop=2")]
        with Fetcher(load_settings(**server.settings_overrides())) as fetcher:
            response = fetcher.get(server.arxiv_api_url, {"search_query": "cat:cs.LG"})
        assert response.status_code == 200 and len(server.requests) == 3
        hops = [Fault(redirect=f"/api/query?hop={n}") for n in range(5)]
        message, _ = fetch(server, *hops, http_max_redirects=3)
    assert "more than 3 redirects (http_max_redirects)" in message


def test_a_gzip_answer_within_the_limit_is_read(tmp_path: Path) -> None:
    with Upstream() as server:
        server.faults = [Fault(gzip_bomb=1 << 20)]
        with Fetcher(load_settings(**server.settings_overrides())) as fetcher:
            response = fetcher.get(server.arxiv_api_url)
    assert response.content == bytes(1 << 20)
    assert "content-encoding" not in response.headers


def test_deeply_nested_json_from_hf_fails_the_source_not_the_run(
        store: Store, settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"id": "2501.00001", "title": "A title here",
                                "announced": "2025-06-02"}) + "\n")
    with Upstream() as server:
        server.faults = [Fault(body=b"[" * 100_000 + b"]" * 100_000, path="/api/daily_papers")]
        report = Ingest(["hf:2026-11-27", f"file:{path}"]).run(
            store, settings.replace(**server.settings_overrides()))
    assert report.counts["new"] == 1
    assert [f["source"] for f in report.failures] == ["hf:2026-11-27"]
    assert "nested more than 32 levels" in report.failures[0]["error"]
    assert len(server.requests) == 1, "an answer too deep is not asked for again"


def test_a_redirect_loop_fails_its_source_and_the_next_one_is_still_read(
        store: Store, settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    path.write_text("".join(json.dumps({"id": f"2501.{n:05d}", "title": f"Paper number {n}",
                                        "announced": "2025-06-02"}) + "\n"
                            for n in range(1, 2001)))
    with Upstream() as server:
        server.faults = [Fault(redirect="/api/query", sticky=True)]
        report = Ingest(["arxiv:cs.LG", f"file:{path}"]).run(
            store, settings.replace(**server.settings_overrides()))
    assert report.counts["new"] == 2000
    assert report.failures[0]["source"] == "arxiv:cs.LG"
    assert "redirect loop" in report.failures[0]["error"]


def test_update_names_the_source_that_failed_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    today = time.strftime("%Y-%m-%d", time.gmtime())  # `update` asks live sources for days
    path.write_text(json.dumps({"id": "2501.00001", "title": "A title here",
                                "announced": today}) + "\n"
                    + json.dumps({"id": "2501.00002", "title": 7}) + "\n")
    with Upstream() as server:
        server.faults = [Fault(redirect="/api/query", sticky=True)]
        env = {**os.environ, **server.env(), "PAPERSIFT_DATA_DIR": str(tmp_path / "data"),
               "PAPERSIFT_SOURCES": f"arxiv:cs.LG file:{path}", "PAPERSIFT_EMBEDDER": "openai"}
        run = subprocess.run([sys.executable, "-m", "papersift.cli.main", "update", "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 1, run.stderr
    out = json.loads(run.stdout)
    assert out["failed_sources"] == ["arxiv:cs.LG"] and out["exit_code"] == 1
    assert any("redirect loop" in part for part in out["failed"])
    assert out["papers"] == 1 and "Traceback" not in run.stderr


def test_update_exit_code_says_what_happened() -> None:
    ok = Report("ingest", details={"sources": ["file:a", "arxiv:cs.LG"]})
    skipped = Report("ingest", details={"sources": ["file:a"]},
                     skipped=[{"source": "file:a", "where": "a:2", "reason": "bad"}])
    failed = Report("ingest", details={"sources": ["file:a", "arxiv:cs.LG"]},
                    failures=[{"source": "arxiv:cs.LG", "error": "redirect loop: x -> x"}])
    broken = Report("topics", error="ValueError: axis 0")
    assert update_exit_code([ok, Report("embed")]) == 0
    assert update_exit_code([skipped, Report("embed")]) == 3
    assert update_exit_code([failed, Report("embed")]) == 1
    assert update_exit_code([ok, broken]) == 1
    assert failed_parts([failed, broken]) == [
        "source arxiv:cs.LG (redirect loop: x -> x)", "stage topics (ValueError: axis 0)"]


def test_a_source_that_breaks_unexpectedly_is_reported_and_the_next_is_read(
        store: Store, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from papersift.plugins import SourcePlugin, plugins

    def broken(arg, options, settings, client):  # noqa: ANN001, ANN202 (a plugin's shape)
        yield from ()
        raise RecursionError("maximum recursion depth exceeded")

    registry = plugins().sources
    monkeypatch.setitem(registry._items, "broken", SourcePlugin("broken", "test", broken))
    path = tmp_path / "papers.jsonl"
    path.write_text(json.dumps({"id": "2501.00001", "title": "A title here",
                                "announced": "2025-06-02"}) + "\n")
    report = Ingest(["broken:x", f"file:{path}"]).run(store, settings)
    assert report.counts["new"] == 1
    assert report.failures == [{"source": "broken:x", "error": "stopped by an unexpected "
                                "RecursionError: maximum recursion depth exceeded"}]
