"""Many writers while readers use the site: ingests of overlapping files and an update while logged-in readers rate papers; nothing lost or doubled, no error page.

On PostgreSQL the two ingests and the update run at once; on SQLite (one writer at a time by
design) one after the other, and no reader may ever see "database is locked".
benchmarks/bench_writers.py is the same run at scale, against `serve --workers 4`.
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from papersift import pipeline
from papersift.ingest.stage import Ingest
from papersift.settings import Settings
from papersift.store import open_store
from papersift.web import urls
from tests.conftest import shared_file
from tests.test_readers_web import _csrf, reader
from tests.test_search_embed import local_embedder, model_root, search_settings  # noqa: F401
from tests.web_helpers import LiveServer, fill_store, write_fixture

pytestmark = [pytest.mark.backends("sqlite", "postgresql"), pytest.mark.slow]


def _split(records: list[dict[str, Any]], folder: Path) -> dict[str, list[str]]:
    """The fixture cut into a base and three overlapping files: A and B share a day, the
    update's file C repeats part of B (each file: its ids)."""
    days = sorted({r["announced"] for r in records})
    parts = {"base": days[:1], "a": days[1:3], "b": days[2:4], "c": days[3:]}
    ids = {}
    for name, chosen in parts.items():
        rows = [r for r in records if r["announced"] in chosen]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        ids[name] = [r["id"] for r in rows]
    return ids


class Readers:
    """Logged-in readers who read pages and rate papers until told to stop."""

    def __init__(self, url: str, papers: list[str], count: int = 3) -> None:
        self.url, self.papers = url, papers
        self.stop = threading.Event()
        self.problems: list[str] = []
        self.rated: dict[str, set[str]] = {}
        self.pages = 0
        self.clients = [reader(self, f"reader{i}") for i in range(count)]

    def run(self, index: int) -> None:
        client, rng = self.clients[index], random.Random(index)
        csrf, rated = _csrf(client), self.rated.setdefault(f"reader{index}", set())
        while not self.stop.is_set():
            paper = rng.choice(self.papers)
            for answer in (client.get("/"), client.get(urls.paper(paper)), client.get("/me"),
                           client.post("/me/react", data={"csrf": csrf, "paper_id": paper,
                                                          "reaction": "up"})):
                self.pages += 1
                if answer.status_code >= 400 or "database is locked" in answer.text:
                    self.problems.append(f"{answer.request.url}: {answer.status_code}")
                elif answer.request.method == "POST":
                    rated.add(paper)


def _ingest(settings: Settings, name: str, folder: Path, errors: list[str]) -> None:
    with open_store(settings) as store:  # its own connection, as its own process would have
        report = Ingest([f"file:{folder / name}.jsonl"], batch_size=7).run(store, settings)
    if report.error or report.failures:
        errors.append(f"{name}: {report.as_dict()}")


def _update(settings: Settings, folder: Path, errors: list[str]) -> None:
    with open_store(settings) as store:
        reports = pipeline.update(store, settings, sources=[f"file:{folder / 'c'}.jsonl"])
    errors += [f"update {r.stage}: {r.error}" for r in reports if r.error]


def test_ingests_and_an_update_while_readers_rate_papers(tmp_path: Path,
                                                         search_settings: Settings) -> None:  # noqa: F811
    records = write_fixture(shared_file("arxiv-2025-2026.jsonl.gz"), tmp_path / "all.jsonl",
                            days=5, per_day=30)
    ids = _split(records[:-1], tmp_path)
    fill_store(search_settings, tmp_path / "base.jsonl")
    concurrent = search_settings.database_url.startswith("postgresql")
    errors: list[str] = []
    writers = [threading.Thread(target=_ingest, args=(search_settings, n, tmp_path, errors))
               for n in ("a", "b")]
    writers.append(threading.Thread(target=_update, args=(search_settings, tmp_path, errors)))
    with LiveServer(search_settings) as server:
        readers = Readers(server.url, ids["base"])
        threads = [threading.Thread(target=readers.run, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(0.5)
        for writer in writers:
            writer.start()
            if not concurrent:  # SQLite: one writer at a time
                writer.join()
        for writer in writers:
            writer.join(timeout=300)
        readers.stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert not errors and not readers.problems, (errors, readers.problems[:5])
    assert readers.pages > 20
    wanted = sorted(set().union(*ids.values()))
    with open_store(search_settings) as store:
        # Nothing lost, nothing doubled: every id once, each linked as one sequential ingest
        # of the same files into a fresh store links it (a duplicate's original included).
        assert store.papers.count_papers(include_duplicates=True) == len(wanted)
        links = {pid: store.papers.get_paper(pid)["duplicate_of"] for pid in wanted}
        for name, rated in readers.rated.items():
            account = store.readers.find_reader(name)
            assert {r["paper_id"] for r in store.readers.reactions_of(account["id"])} == rated
    with open_store(tmp_path / "reference.db") as reference:
        Ingest([f"file:{tmp_path / n}.jsonl" for n in ("base", "a", "b", "c")]).run(
            reference, search_settings)
        assert links == {pid: reference.papers.get_paper(pid)["duplicate_of"] for pid in wanted}
