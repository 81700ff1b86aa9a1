"""Ingesting bioRxiv/medRxiv and Crossref from local servers serving their real answers: idempotent and resumable."""

from __future__ import annotations

from datetime import date

from papersift.ingest.stage import Ingest
from papersift.sources import SourceOptions
from tests.upstream import Fault
from tests.upstream_journals import Journals

YEAR_2024 = SourceOptions(since=date(2024, 1, 1), until=date(2024, 12, 31))
EVER = SourceOptions(since=date(2000, 1, 1), until=date(2026, 12, 1))


def test_ingest_twice_changes_nothing_the_second_time(store, settings) -> None:
    with Journals() as server:
        wanted = settings.replace(**server.settings_overrides(page_size=15))
        first = Ingest(["biorxiv:all", "medrxiv:all"], options=YEAR_2024).run(store, wanted)
        works = Ingest(["crossref:has-assertion:true"], options=EVER).run(store, wanted)
        again = Ingest(["biorxiv:all", "medrxiv:all"], options=YEAR_2024).run(store, wanted)
        works_again = Ingest(["crossref:has-assertion:true"], options=EVER).run(store, wanted)
    # 100 bioRxiv records are 79 papers (versions of one DOI), medRxiv's 100 are 99.
    assert first.counts["new"] == 79 + 99 and not first.skipped
    assert works.counts["new"] == 40
    # The recorded preprint (registered by Crossref for bioRxiv) and its journal version are
    # one paper, because Crossref says so (store.merges keeps the reason).
    linked = {d["id"] for d in works.details["duplicates"]} | {
        d["duplicate_of"] for d in works.details["duplicates"]}
    assert linked == {"doi:10.1101/014852", "doi:10.1002/ece3.2314"}
    kept = next(d["duplicate_of"] for d in works.details["duplicates"])
    merged = store.merges.paper_records(kept)[1]["merge"]
    assert merged["rule"] == "relation" and "has-preprint" in merged["evidence"]["relation"]
    assert (again.counts["new"], again.counts["updated"], again.counts["unchanged"]) == (0, 0, 200)
    assert (works_again.counts["new"], works_again.counts["updated"]) == (0, 0)
    paper = store.papers.get_paper("doi:10.1101/263681")
    assert paper is not None and paper["version"] == 5


def test_an_interrupted_ingest_resumes_by_running_again(store, settings) -> None:
    with Journals() as server:
        server.details_page = 30
        wanted = settings.replace(**server.settings_overrides(http_retries=0))
        # The third page fails for good: the first two pages are kept.
        server.faults = [Fault(status=500, path="/details/biorxiv/2024-01-01/2024-12-31/60",
                               sticky=True)]
        cut = Ingest(["biorxiv:all"], options=YEAR_2024).run(store, wanted)
        server.faults = []
        resumed = Ingest(["biorxiv:all"], options=YEAR_2024).run(store, wanted)
    assert cut.failures and "HTTP 500" in cut.failures[0]["error"]
    assert 0 < cut.counts["new"] < 79
    assert cut.counts["new"] + resumed.counts["new"] == 79
    assert resumed.counts["unchanged"] > 0 and not resumed.failures  # the kept pages are known
