"""Helpers of the web tests: a store of real recent papers with topics and summaries, a live server."""

from __future__ import annotations

import gzip
import json
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from papersift.datadir import DataDir
from papersift.search.onnx_export import MODEL_NAME
from papersift.settings import Settings
from papersift.store import open_store
from tests.store_sql import run_sql

XSS_ID = "2607.99999"
XSS_TITLE = "<script>alert(1)</script>"
ADMIN_TOKEN = "test-admin-token-1234"


def write_fixture(source: Path, out: Path, days: int = 3, per_day: int = 100) -> list[dict[str, Any]]:
    """The newest `days` announcement days of the shared file (up to per_day each) plus one hostile paper."""
    by_day: dict[str, list[dict[str, Any]]] = {}
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            by_day.setdefault(record.get("announced") or "", []).append(record)
    chosen = sorted((d for d in by_day if d), reverse=True)[:days]
    records = [r for day in chosen for r in sorted(by_day[day], key=lambda r: r["id"])[:per_day]]
    records.append({
        "id": XSS_ID, "title": XSS_TITLE,
        "abstract": 'We study <img src=x onerror="alert(2)"> attacks. A second sentence follows here.',
        "authors": ['<b onmouseover="alert(3)">Mallory</b> Evil', "Alice Safe"],
        "categories": ["cs.CR"], "comment": "<iframe src=javascript:alert(4)>",
        "announced": chosen[0],
    })
    with out.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return records


_EXPORTED: list[Path] = []  # a data dir of this process whose model export can be copied


def _reuse_exported_model(settings: Settings) -> None:
    """Copy the ONNX export of an earlier store of this test process instead of exporting again."""
    target = settings.paths.exported_model(MODEL_NAME)
    earlier = DataDir(_EXPORTED[0]).exported_model(MODEL_NAME) if _EXPORTED else None
    if earlier is not None and not target.exists() and earlier.is_dir():
        shutil.copytree(earlier, target)


def _remember_exported_model(settings: Settings) -> None:
    if not _EXPORTED:
        _EXPORTED.append(settings.data_path)


def fill_store(settings: Settings, fixture: Path) -> dict[str, str]:
    """Ingest the fixture, then run the real stages: embed, topics, summaries.

    Only the topic redirect is written directly: redirects appear when a rebuild merges topics,
    which a small fixture cannot be made to do on purpose.
    """
    from papersift.ingest.stage import Ingest

    how: dict[str, str] = {}
    with open_store(settings) as store:
        report = Ingest([f"file:{fixture}"]).run(store, settings)
        assert report.counts["new"] > 0 and not report.failures, report.as_dict()
        from papersift.search import Embed
        from papersift.summarize import Summarize
        from papersift.topics import BuildTopics

        _reuse_exported_model(settings)
        Embed().run(store, settings)
        _remember_exported_model(settings)
        how["topics"] = json.dumps(BuildTopics().run(store, settings).as_dict(), default=str)[:200]
        how["summaries"] = json.dumps(Summarize().run(store, settings).as_dict(),
                                      default=str)[:200]
        # An old slug that a rebuild merged away: pages must answer 301 to the live topic.
        biggest = max(store.topics.list_topics(include_other=False), key=lambda t: t["size"])
        run_sql(store, "INSERT INTO topic_redirects(old_slug, new_topic_id, reason)"
                " VALUES ('an-old-topic-slug', ?, 'merge') ON CONFLICT (old_slug)"
                " DO UPDATE SET new_topic_id = excluded.new_topic_id", (biggest["id"],))
    return how


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """uvicorn serving create_app(settings) on 127.0.0.1 in a thread."""

    def __init__(self, settings: Settings, port: int | None = None, **options: Any) -> None:
        """`options` go to uvicorn.Config (e.g. `http=` the protocol `serve` runs)."""
        import uvicorn

        from papersift.web.app import create_app

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port,
                                log_level="warning", access_log=False, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def site_database_url(request: Any) -> str:
    """The database_url of a module's site for its backend param: "" (the data dir's SQLite
    file) or a fresh PostgreSQL database, dropped when the module is done."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return ""
    server = request.getfixturevalue("postgres_server")
    name = server.new_database()
    request.addfinalizer(lambda: server.drop_database(name))
    return server.url(name)


CHROMIUM = Path("/usr/bin/chromium")  # Debian's, driven by Playwright (no browser download here)
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
# No network, GPU, update or sync work of its own: a test's page talks only to its server.
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-gpu",
                  "--disable-component-update", "--disable-sync", "--disable-quic",
                  "--no-first-run"]


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium for a browser test (skipped where Playwright or chromium is missing);
    screenshots go to ARTIFACTS."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


def console_errors(page: Any) -> list[str]:
    """The page's console errors, as they come (a test asserts the list stays empty)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    return errors
