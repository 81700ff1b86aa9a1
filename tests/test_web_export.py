"""The static export has no broken internal link; the pipeline runs its stages and says what failed."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from papersift.settings import load_settings
from papersift.store import open_store
from tests.conftest import shared_file
from tests.web_helpers import _reuse_exported_model, fill_store, write_fixture


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def test_static_site_has_no_broken_internal_links(tmp_path: Path) -> None:
    from papersift.web.export import build_site

    fixture = tmp_path / "papers.jsonl"
    write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), fixture, days=2, per_day=40)
    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"), page_size_web=10, threads=1)
    fill_store(settings, fixture)
    out = tmp_path / "site"
    report = build_site(settings, out)
    files = sorted(out.rglob("*.html"))
    assert report.counts["pages"] == len(files) > 80
    checked = 0
    broken = []
    for page in files:
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            assert not link.startswith("/"), f"{page}: absolute link {link}"
            if parts.path:
                target = (page.parent / unquote(parts.path)).resolve()
                if not target.is_file():
                    broken.append(f"{page.relative_to(out)} -> {link}")
            elif parts.fragment and parts.fragment not in parser.ids:
                broken.append(f"{page.relative_to(out)} -> #{parts.fragment}")
            checked += 1
    assert not broken, broken[:20]
    assert checked > 1000
    front = (out / "index.html").read_text(encoding="utf-8")
    assert "/search" not in front  # no server: no search box pointing nowhere
    assert (out / "feed.atom").is_file() and (out / "static" / "site.css").is_file()
    topic_pages = list((out / "topics").glob("*.html"))
    assert topic_pages and any((out / "topics").glob("*/2.html"))


def test_update_reports_every_stage_and_a_dead_source(tmp_path: Path) -> None:
    from papersift.pipeline import every_source_failed, update

    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"), threads=1, http_retries=0,
                             request_delay=0.0, http_timeout=2.0,
                             arxiv_api_url="http://127.0.0.1:9/api/query")
    with open_store(settings) as store:
        seen = []
        reports = update(store, settings, sources=["arxiv:cs.LG"],
                         on_progress=lambda progress: seen.append(progress.stage))
        assert every_source_failed(reports) and not reports[0].ok
        assert [r.stage for r in reports] == ["ingest", "keywords", "embed", "topics", "summarize",
                                            "links", "briefs"]
        assert reports[0].failures[0]["source"] == "arxiv:cs.LG"
        assert all(r.details["not_run"] == "no papers in the store" for r in reports[1:])
        assert "ingest" in seen
        json.dumps([r.as_dict() for r in reports])  # the --json output must serialize


@pytest.mark.slow
def test_update_from_a_file_runs_the_stages(tmp_path: Path) -> None:
    from papersift.pipeline import update

    fixture = tmp_path / "papers.jsonl"
    write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), fixture, days=1, per_day=60)
    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"), threads=1,
                             keyword_postings_min_papers=0)
    _reuse_exported_model(settings)
    with open_store(settings) as store:
        reports = update(store, settings, sources=[f"file:{fixture}"])
        again = update(store, settings, sources=[f"file:{fixture}"])
        assert store.papers.count_papers() == 61
    assert [r.stage for r in reports] == ["ingest", "keywords", "embed", "topics", "summarize",
                                            "links", "briefs"]
    for report in reports:  # every stage ran, and ran without an error
        assert report.ok and "not_run" not in report.details, report.as_dict()
    assert reports[0].counts["new"] == 61 and again[0].counts["new"] == 0
    assert reports[1].counts["built"] == 61 and again[1].counts["added"] == 0
    assert reports[2].counts["embedded"] == 61 and reports[4].counts["written"] == 61
    assert reports[3].details["action"] == "build" and again[3].details["action"] == "assign"
    assert reports[0].seconds > 0


def test_serve_command_answers_with_two_workers(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    import httpx

    from papersift.ingest.stage import Ingest
    from tests.web_helpers import free_port

    fixture = tmp_path / "papers.jsonl"
    records = write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), fixture, days=1, per_day=20)
    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"))
    with open_store(settings) as store:
        Ingest([f"file:{fixture}"]).run(store, settings)
    port = free_port()
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path / "data"),
           "PAPERSIFT_SITE_TITLE": "Test Sift"}
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "papersift"), "serve", "--port", str(port),
         "--workers", "2"], env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read().decode()
                assert time.monotonic() < deadline, "papersift serve did not come up"
                time.sleep(0.3)
        assert page.status_code == 200 and "Test Sift" in page.text
        day = httpx.get(f"http://127.0.0.1:{port}/index.json").json()["day"]
        assert day == records[0]["announced"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    assert "serving" in server.stdout.read().decode()
