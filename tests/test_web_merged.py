"""A merged paper's page and its JSON twin: every source and version with links, why the records are one, no invented blurb without an abstract; both backends."""

from __future__ import annotations

from datetime import date

import pytest
from starlette.testclient import TestClient

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord
from papersift.settings import Settings
from papersift.sources import SourceOptions
from papersift.store import Store, add_records
from papersift.summarize.stage import Summarize
from papersift.web.app import create_app
from tests.test_store_merges import arxiv, journal, preprint
from tests.upstream_journals import Journals
from tests.web_helpers import ARTIFACTS, CHROMIUM, LiveServer, chromium, console_errors

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_a_merged_paper_lists_its_sources_and_says_why(store: Store, settings: Settings) -> None:
    add_records(store, [arxiv()])
    add_records(store, [preprint()])
    add_records(store, [journal()])
    with TestClient(create_app(settings)) as client:
        twin = client.get("/papers/2401.01234.json").json()["paper"]
        page = client.get("/papers/2401.01234").text
        merged = client.get("/papers/doi:10.1101/014852", follow_redirects=False)
    assert merged.status_code in (301, 302, 307, 308)
    assert merged.headers["location"].endswith("/papers/2401.01234")
    records = twin["records"]
    assert [(r["label"], r["sources"]) for r in records] == [
        ("arXiv:2401.01234", ["arXiv"]), ("DOI 10.1101/014852", ["bioRxiv"]),
        ("DOI 10.1002/ece3.2314", ["Crossref"])]
    assert records[0]["why"] is None
    assert records[1]["why"].startswith("same title and 3 of 3 authors in common")
    assert records[2]["why"] == ("Crossref says 10.1002/ece3.2314 has the preprint "
                                 "10.1101/014852")
    assert [v["url"] for v in records[1]["versions"]] == [
        "https://www.biorxiv.org/content/10.1101/014852v1",
        "https://www.biorxiv.org/content/10.1101/014852v2"]
    assert records[0]["versions"][0]["url"] == "https://arxiv.org/abs/2401.01234v1"
    assert records[2]["doi_url"] == "https://doi.org/10.1002/ece3.2314"
    assert "Sources and versions" in page and "Why one paper: same title and 3 of 3" in page
    assert 'href="https://www.biorxiv.org/content/10.1101/014852v2"' in page


def test_a_paper_without_an_abstract_says_so_and_gets_no_blurb(store: Store,
                                                                 settings: Settings) -> None:
    add_records(store, [journal(relations=[], abstract="")])
    report = Summarize("builtin").run(store, settings)
    assert report.counts["no_abstract"] == 1 and report.counts["written"] == 0
    with TestClient(create_app(settings)) as client:
        twin = client.get("/papers/doi:10.1002/ece3.2314.json").json()["paper"]
        page = client.get("/papers/doi:10.1002/ece3.2314").text
    assert twin["blurb"] is None and twin["tldr"] is None
    assert twin["no_abstract"] == ("No abstract: Crossref gives none for this paper, so there "
                                   "is no summary either.")
    assert twin["id_label"] == "DOI 10.1002/ece3.2314" and "arXiv:doi" not in page
    assert "No abstract: Crossref gives none" in page
    assert 'href="https://doi.org/10.1002/ece3.2314"' in page




def test_a_merged_paper_page_in_chromium(store: Store, settings: Settings,
                                         store_backend: str) -> None:
    """The recorded bioRxiv preprint and its journal version (real answers from the local
    servers) and an arXiv copy: one page listing the three, screenshot for a reader's eye."""
    if store_backend != "sqlite":
        pytest.skip("the page is the same on both backends (tested above); one screenshot")
    pytest.importorskip("playwright.sync_api")  # before the ingest, which a skip would waste
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    with Journals() as server:
        wanted = settings.replace(**server.settings_overrides(page_size=50))
        Ingest(["biorxiv:all"], options=SourceOptions(since=date(2024, 1, 1),
                                                      until=date(2024, 12, 31))).run(store, wanted)
        Ingest(["crossref:has-assertion:true"], options=SourceOptions(
            since=date(2000, 1, 1), until=date(2026, 12, 1))).run(store, wanted)
    kept = store.papers.get_paper("doi:10.1101/014852")
    assert kept is not None
    pid = kept["duplicate_of"] or kept["id"]
    stored = store.papers.get_paper(pid)
    add_records(store, [PaperRecord(
        id="1501.00042", title=stored["title"], abstract=stored["abstract"] or "An abstract.",
        authors=[a["name"] for a in stored["authors"]], categories=["q-bio.PE"],
        source="arxiv", version=2, submitted="2015-01-05", announced="2015-01-06",
        versions=[(1, "2015-01-05"), (2, "2015-03-01")])])
    records = store.merges.paper_records(pid)
    assert len(records) == 3, records
    with LiveServer(settings) as site, chromium() as browser:
        page = browser.new_page(viewport={"width": 1000, "height": 1300})
        errors = console_errors(page)
        page.goto(f"{site.url}/papers/1501.00042")
        assert page.url.endswith(f"/papers/{pid}")  # a merged record redirects to its paper
        listed = page.locator("section.records li.record")
        assert listed.count() == 3
        text = page.locator("section.records").inner_text()
        assert "Crossref · journal article · DOI 10.1002/ece3.2314" in text
        assert "bioRxiv via Crossref · preprint · DOI 10.1101/014852" in text
        assert "arXiv · preprint · arXiv:1501.00042" in text
        assert text.count("Why one paper:") == 2
        page.screenshot(path=str(ARTIFACTS / "merged-paper.png"), full_page=True)
    assert not errors, errors
