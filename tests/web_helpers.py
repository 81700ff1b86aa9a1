"""Helpers of the web tests: a store of real recent papers with topics and summaries, a live server."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from papersift.settings import Settings
from papersift.store import Store, open_store
from papersift.store.db import transaction, utc_now

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


def _temporary_topics(store: Store) -> str:
    """Sections and topics from primary categories, written straight into the topic tables.

    TEMPORARY: stands in for papersift.topics.build_topics until that stage exists.
    """
    groups = {"cs.CV": "vision", "eess.IV": "vision", "cs.CL": "language"}
    labels = {"vision": "Vision", "language": "Language", "learning": "Learning and more"}
    conn = store.conn
    papers = conn.execute("SELECT id, primary_category FROM papers WHERE duplicate_of IS NULL"
                          ).fetchall()
    with transaction(conn):
        build = conn.execute("INSERT INTO topic_builds(created_at, method, n_papers) VALUES (?,?,?)",
                             (utc_now(), "test-categories", len(papers))).lastrowid
        section_ids = {}
        for position, slug in enumerate(labels):
            section_ids[slug] = conn.execute(
                "INSERT INTO sections(slug, label, position) VALUES (?,?,?)",
                (slug, labels[slug], position)).lastrowid
        topic_ids: dict[str, int] = {}
        for pid, category in papers:
            category = category or "misc"
            if category not in topic_ids:
                slug = category.lower().replace(".", "-")
                topic_ids[category] = conn.execute(
                    "INSERT INTO topics(slug, label, key_phrases, section_id, size, created_build)"
                    " VALUES (?,?,?,?,0,?)",
                    (slug, f"Papers in {category}", json.dumps([category]),
                     section_ids[groups.get(category, "learning")], build)).lastrowid
            conn.execute("INSERT INTO paper_topics(paper_id, topic_id, similarity, assigned_by)"
                         " VALUES (?,?,1.0,'build')", (pid, topic_ids[category]))
        conn.execute("UPDATE topics SET size = (SELECT count(*) FROM paper_topics pt"
                     " WHERE pt.topic_id = topics.id)")
    return "temporary"


def _temporary_summaries(store: Store) -> str:
    """TEMPORARY: summaries rows from the built-in writer until summarize_papers exists."""
    from papersift.summarize.builtin import WRITER_VERSION, write_builtin

    rows = []
    for paper in store.iter_papers():
        summary = write_builtin(paper)
        rows.append((paper["id"], summary.tldr, summary.blurb, "builtin", WRITER_VERSION, "x",
                     utc_now()))
    with transaction(store.conn):
        store.conn.executemany(
            "INSERT OR REPLACE INTO summaries(paper_id, tldr, blurb, writer, model, input_hash,"
            " created_at) VALUES (?,?,?,?,?,?,?)", rows)
    return "temporary"


def fill_store(settings: Settings, fixture: Path) -> dict[str, str]:
    """Ingest the fixture, then run the stages that exist (or their temporary stand-ins)."""
    from papersift.ingest import ingest

    how: dict[str, str] = {}
    with open_store(settings) as store:
        report = ingest(store, [f"file:{fixture}"], settings)
        assert report.new > 0 and not report.failed_sources, report.as_dict()
        try:
            from papersift.topics import build_topics
        except ImportError:
            how["topics"] = _temporary_topics(store)
        else:
            from papersift.search import embed_papers

            embed_papers(store, settings)
            build_topics(store, settings)
            how["topics"] = "stage"
        try:
            from papersift.summarize import summarize_papers
        except ImportError:
            how["summaries"] = _temporary_summaries(store)
        else:
            summarize_papers(store, settings)
            how["summaries"] = "stage"
        # An old slug that a rebuild merged away: pages must answer 301 to the live topic.
        biggest = store.conn.execute(
            "SELECT topic_id FROM paper_topics GROUP BY 1 ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]
        with transaction(store.conn):
            store.conn.execute(
                "INSERT OR REPLACE INTO topic_redirects(old_slug, new_topic_id, reason)"
                " VALUES ('an-old-topic-slug', ?, 'merge')", (biggest,))
    return how


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """uvicorn serving create_app(settings) on 127.0.0.1 in a thread."""

    def __init__(self, settings: Settings, port: int | None = None) -> None:
        import uvicorn

        from papersift.web.app import create_app

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port,
                                log_level="warning", access_log=False)
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


def most_common_topic(records: list[dict[str, Any]]) -> str:
    return Counter(r["categories"][0] for r in records).most_common(1)[0][0]
