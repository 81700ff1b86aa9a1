"""The anonymous page cache keys on what pages show: a reader's like keeps every cached page, a new paper empties them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from papersift.readers import accounts
from papersift.records import PaperRecord
from papersift.records.prepare import prepare_record
from papersift.settings import load_settings
from papersift.store import open_store
from papersift.web import views
from papersift.web.app import create_app

PASSWORD = "correct horse battery"


def _paper(n: int, title: str) -> PaperRecord:
    return PaperRecord(id=f"2601.{n:05d}", title=title, abstract=f"{title}. We study it well.",
                       authors=["Ada Lovelace"], categories=["cs.LG"], source="file",
                       announced="2026-01-13")


@pytest.fixture()
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"))
    with open_store(settings) as store:
        store.papers.upsert_papers([prepare_record(_paper(n, f"Graph paper number {n}"))
                                    for n in range(1, 4)])
        accounts.add_reader(store, "ada", PASSWORD)
    built: list[str] = []
    front = views.front

    def counted(site: views.Site) -> dict[str, Any]:
        built.append("front")
        return front(site)

    monkeypatch.setattr(views, "front", counted)  # the route looks it up on every build
    with TestClient(create_app(settings), follow_redirects=False) as client:
        yield settings, client, built


def test_a_like_keeps_the_cached_front_page_a_new_paper_does_not(site: Any) -> None:
    settings, reader, built = site
    anonymous = TestClient(reader.app)
    assert anonymous.get("/").status_code == 200 and anonymous.get("/").status_code == 200
    assert len(built) == 1  # rendered once, then the cache

    token = re.search(r'name="form_token" value="([^"]+)"', reader.get("/login").text).group(1)
    assert reader.post("/login", data={"form_token": token, "name": "ada",
                                       "password": PASSWORD}).status_code == 303
    csrf = re.search(r'name="csrf" value="([^"]+)"', reader.get("/me/profile").text).group(1)
    liked = reader.post("/me/react", data={"csrf": csrf, "paper_id": "2601.00001",
                                           "reaction": "up", "next": "/"})
    assert liked.status_code == 303
    with open_store(settings) as worker:  # another worker's reader likes a paper too
        ada = worker.readers.find_reader("ada")["id"]
        worker.readers.set_reaction(ada, "2601.00002", "up")
    assert "Graph paper number 1" in anonymous.get("/").text
    assert len(built) == 1  # the likes left the cached page alone

    with open_store(settings) as worker:
        worker.papers.upsert_papers([prepare_record(_paper(4, "A paper that came in later"))])
    assert "A paper that came in later" in anonymous.get("/").text
    assert len(built) == 2
