"""The announcement RSS source against a local server speaking rss.arxiv.org's RSS 2.0, with a real sample and faults."""

from __future__ import annotations

from datetime import date

import pytest

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord, Skipped, SourceError
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from tests.conftest import shared_format
from tests.upstream import Fault, Upstream, make_paper, make_papers

SAMPLE = "arxiv_rss/laya-reader_arxiv_rss_cs.LG+cs.AI+cs.CL+stat.ML_2026-09-24.xml"


def run(server: Upstream, spec: str = "announce:cs.LG", options: SourceOptions = SourceOptions(),
        **settings):
    found = list(open_source(spec, options, load_settings(**server.settings_overrides(**settings))))
    return ([r for r in found if isinstance(r, PaperRecord)], [s for s in found if isinstance(s, Skipped)])


def test_parses_the_real_feed() -> None:
    with Upstream() as server:
        server.faults = [Fault(body=shared_format(SAMPLE).read_bytes())]
        records, skipped = run(server, "announce:cs.LG+cs.AI+cs.CL+stat.ML")
        assert server.requests[0].path == "/rss/cs.LG+cs.AI+cs.CL+stat.ML"
    assert not skipped
    assert [(r.id, r.version, r.extras["announce_type"]) for r in records] == [
        ("2609.26811", 1, "new"), ("2609.26820", 1, "new"), ("2205.06398", 2, "cross"),
        ("2009.13987", 3, "replace"),
    ]
    new, second, cross, replaced = records
    assert new.source == "announce" and new.announced == "2026-09-24" and new.updated is None
    assert new.title == "The Drift Contract: Spectral Updates for Depth-Robust Local Learning"
    assert new.abstract.startswith("Local learning trains each layer with its own auxiliary loss")
    assert "Announce Type" not in new.abstract
    assert new.authors == ["Fabien Polly"]
    assert new.license == "http://creativecommons.org/licenses/by-nc-sa/4.0/"
    assert second.authors == ["Naser Mansour", "Sidahmed Benabderrahmane", "Ameer Rahwan"]
    assert second.categories == ["cs.LG", "cs.AI"]
    assert cross.doi == "10.1093/bioinformatics/btac431"
    assert cross.links["doi"] == "https://doi.org/10.1093/bioinformatics/btac431"
    # A replacement (or a late cross-listing) is not the paper's news day.
    assert replaced.announced is None and replaced.updated == "2026-09-24"
    assert cross.announced is None and cross.updated == "2026-09-24"


@pytest.mark.parametrize("arg", ["cs.LG,cs.CL", "cs.LG+cs.CL", "cs.LG, cs.CL"])
def test_categories_are_joined_with_plus(arg: str) -> None:
    feed = [make_paper("2611.00001", categories=["cs.LG"]), make_paper("2611.00002", categories=["cs.CL"]),
            make_paper("2611.00003", categories=["math.AG"])]
    with Upstream(feed) as server:
        records, _ = run(server, f"announce:{arg}")
        assert server.requests[0].path == "/rss/cs.LG+cs.CL"
    assert [r.id for r in records] == ["2611.00001", "2611.00002"]
    assert all(r.announced == "2026-11-27" for r in records)


def test_bad_categories_are_refused() -> None:
    with Upstream() as server, pytest.raises(SourceError, match="not arXiv categories"):
        run(server, "announce:cs.LG/../x")


def test_holiday_feed_is_empty_not_an_error(store, settings) -> None:
    with Upstream(make_papers(3), announce_day="2026-11-26") as server:
        assert run(server) == ([], [])
        report = Ingest(["announce:cs.LG"]).run(store, settings.replace(**server.settings_overrides()))
    assert (report.counts["new"], report.skipped, report.failures) == (0, [], [])


def test_malformed_items_are_skipped_with_their_place() -> None:
    feed = make_papers(4)
    feed[1]["render"] = {"description": "Announce Type: new"}
    feed[2]["render"] = {"pubDate": "the day after tomorrow"}
    with Upstream(feed) as server:
        records, skipped = run(server)
    assert [r.id for r in records] == ["2611.00001", "2611.00004"]
    assert [s.where.rsplit(" ", 1)[-1] for s in skipped] == ["2", "3"]
    assert skipped[0].where.startswith("http://127.0.0.1:") and "/rss/cs.LG item 2" in skipped[0].where
    assert "arXiv:<id>" in skipped[0].reason and "invalid pubDate" in skipped[1].reason


def test_since_and_until_filter_on_the_announcement_day() -> None:
    with Upstream(make_papers(2)) as server:
        assert run(server, options=SourceOptions(since=date(2026, 11, 28)))[0] == []
        assert len(run(server, options=SourceOptions(until=date(2026, 11, 27)))[0]) == 2


@pytest.mark.parametrize("fault", [Fault(status=503, retry_after=0), Fault(status=429),
                                   Fault(truncate=True), Fault(delay=1.0)],
                         ids=["503", "429", "truncated", "slow"])
def test_transient_faults_are_retried(fault: Fault) -> None:
    with Upstream(make_papers(3)) as server:
        server.faults = [fault]
        records, _ = run(server, http_timeout=0.3)
    assert len(records) == 3 and len(server.requests) == 2


def test_replacement_does_not_move_the_first_announcement(store, settings) -> None:
    with Upstream([make_paper("2611.00001", announced="2026-11-20")]) as server:
        wanted = settings.replace(**server.settings_overrides())
        first = Ingest(["announce:cs.LG"]).run(store, wanted)
        again = Ingest(["announce:cs.LG"]).run(store, wanted)
        server.papers = [make_paper("2611.00001", version=2, announced="2026-11-27",
                                    announce_type="replace", title="Paper 2611.00001, revised")]
        replaced = Ingest(["announce:cs.LG"]).run(store, wanted)
    assert first.counts["new"] == 1 and (again.counts["new"], again.counts["unchanged"]) == (0, 1)
    assert replaced.counts["updated"] == 1
    paper = store.papers.get_paper("2611.00001")
    assert paper["announced"] == "2026-11-20" and paper["version"] == 2
    assert paper["title"] == "Paper 2611.00001, revised"
    assert paper["sources"]["announce"] == {"announce_type": "replace"}


def test_request_delay_holds_across_sources_on_the_same_host(store, settings) -> None:
    with Upstream(make_papers(2)) as server:
        wanted = settings.replace(**server.settings_overrides(request_delay=0.3))
        week = SourceOptions(since=date(2026, 11, 20), until=date(2026, 11, 28))
        Ingest(["arxiv:cs.LG", "announce:cs.LG"], options=week).run(store, wanted)
    api, rss = server.requests
    assert (api.path, rss.path) == ("/api/query", "/rss/cs.LG")
    assert rss.time - api.time >= 0.25
