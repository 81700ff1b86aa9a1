"""The OAI-PMH source against a local server speaking arXiv's OAI-PMH, with real samples, tokens and faults."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord, Skipped, SourceError
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from papersift.sources.oai import to_set_spec
from tests.conftest import shared_format
from tests.upstream import Fault, Upstream, make_paper, make_papers

WEEK = SourceOptions(since=date(2026, 11, 20), until=date(2026, 11, 28))


def run(server: Upstream, spec: str = "oai:cs", options: SourceOptions = WEEK, **settings):
    found = list(open_source(spec, options, load_settings(**server.settings_overrides(**settings))))
    return ([r for r in found if isinstance(r, PaperRecord)], [s for s in found if isinstance(s, Skipped)])


def oai_error(code: str, text: str) -> bytes:
    """An error response laid out as arXiv's server template (arXiv/oaipmh errors.xml) does."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        f"<responseDate>2026-11-30T00:00:00Z</responseDate><request>http://oaipmh.arxiv.org/oai</request>"
        f"<error code='{code}'>{text}</error></OAI-PMH>"
    ).encode()


# ------------------------------------------------------------------ real samples
def test_parses_the_new_server_sample() -> None:
    body = shared_format("arxiv_oai/agentgraph_ListRecords_arXiv_oaipmh.arxiv.org_2026.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        records, skipped = run(server, "oai:physics:physics:plasm-ph")
    assert len(records) == 3 and not skipped and len(server.requests) == 1
    first = records[0]
    assert (first.id, first.source, first.version) == ("2504.11237", "oai", None)
    assert first.authors == ["Chunhai Lyu", "Christoph H. Keitel", "Zoltán Harman"]
    assert first.title == "Periodic table for highly charged ions"
    assert first.categories == ["physics.atom-ph", "physics.optics", "physics.plasm-ph", "quant-ph"]
    assert (first.submitted, first.updated) == ("2025-04-15", "2026-01-05")
    assert first.comment == "5 pages" and first.doi == "10.1103/bppp-53g1"
    assert first.journal_ref == "Phys. Rev. Research 7, L042071 (2025)"
    assert first.license == "http://creativecommons.org/publicdomain/zero/1.0/"
    assert first.abstract.startswith("Mendeleev's periodic table")  # entity decoded, text kept
    assert server.requests[0].params["set"] == "physics:physics:plasm-ph"


def test_parses_the_old_server_cs_sample() -> None:
    body = shared_format("arxiv_oai/invenio-oaiharvester_ListRecords_arXiv_cs_2015.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        records, skipped = run(server)
    assert len(records) == 46 and not skipped
    assert records[0].id == "1101.4388"
    assert records[0].authors == ["Guohui Song", "Haizhang Zhang", "Fred J. Hickernell"]
    assert records[0].categories[0] == "stat.ML"
    assert records[0].abstract.startswith("  Targeting at sparse learning")


def test_arxivraw_sample_then_its_token_is_sent_back_alone(store, settings) -> None:
    body = shared_format(
        "arxiv_oai/scirate_ListRecords_arXivRaw_resumptionToken_496549-96001.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        wanted = settings.replace(**server.settings_overrides())
        report = Ingest(["oai:cs?prefix=arXivRaw"], options=WEEK).run(store, wanted)
    first, resumed = server.requests
    assert first.params["metadataPrefix"] == "arXivRaw"
    assert resumed.params == {"verb": "ListRecords", "resumptionToken": "496549|96001"}
    # Our server does not know that 2014 token: arXiv's answer is badResumptionToken.
    assert "badResumptionToken" in report.failures[0]["error"]
    assert report.counts["new"] == 1000  # the page read before the failure is kept
    paper = store.papers.get_paper("0811.36489")
    assert paper["version"] == 2
    assert paper["versions"] == [{"version": 1, "date": "2008-11-21"}, {"version": 2, "date": "2009-04-09"}]
    assert [a["name"] for a in paper["authors"]] == ["Daniel M. Kane", "Jelani Nelson", "David P. Woodruff"]


def test_no_records_match_sample_is_zero_records_not_a_failure() -> None:
    body = shared_format("arxiv_oai/invenio-oaiharvester_error_noRecordsMatch.xml").read_bytes()
    with Upstream() as server:
        server.faults = [Fault(body=body)]
        assert run(server) == ([], [])


# ------------------------------------------------------------------- harvesting
@pytest.mark.parametrize("token_attrs", [False, True], ids=["new-server-token", "old-server-token"])
def test_resumption_tokens_page_through_the_list(token_attrs: bool) -> None:
    with Upstream(make_papers(7), oai_page_size=3, oai_token_attrs=token_attrs) as server:
        records, _ = run(server)
    assert sorted(r.id for r in records) == [f"2611.{i:05d}" for i in range(1, 8)]
    first, *resumed = [r.params for r in server.requests]
    assert first == {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": "2026-11-20",
                     "until": "2026-11-28", "set": "cs"}
    assert len(resumed) == 2 and all(set(p) == {"verb", "resumptionToken"} for p in resumed)


def test_sets_and_dates_are_asked_for_and_applied() -> None:
    feed = [make_paper("2611.00001", categories=["cs.LG"]), make_paper("2611.00002", categories=["cs.CL"]),
            make_paper("2611.00003", categories=["math.AG", "cs.LG"]),
            make_paper("2611.00004", categories=["cs.LG"], announced="2026-10-01")]
    with Upstream(feed) as server:
        records, _ = run(server, "oai:cs.LG")
        assert server.requests[0].params["set"] == "cs:cs:LG"
    assert [r.id for r in records] == ["2611.00001", "2611.00003"]


def test_arxivraw_gives_the_version_history() -> None:
    feed = [make_paper("2611.00001", version=3, submitted="2026-11-01T10:00:00Z",
                       updated="2026-11-25T09:00:00Z", authors=["A. Smith", "B. Jones Jr."])]
    with Upstream(feed) as server:
        records, _ = run(server, "oai:cs?prefix=arXivRaw")
    record = records[0]
    assert record.version == 3 and record.submitted == "2026-11-01" and record.updated == "2026-11-25"
    assert record.versions == [(1, "2026-11-01"), (2, "2026-11-25"), (3, "2026-11-25")]
    assert record.authors == ["A. Smith", "B. Jones Jr."]


@pytest.mark.parametrize(("given", "spec"), [
    ("cs", "cs"), ("cs.LG", "cs:cs:LG"), ("cs:cs:LG", "cs:cs:LG"), ("hep-th", "physics:hep-th"),
    ("astro-ph.GA", "physics:astro-ph:GA"), ("physics:hep-th", "physics:hep-th"),
    ("physics.optics", "physics:physics:optics"), ("stat.ML", "stat:stat:ML"), ("all", None),
])
def test_set_specs(given: str, spec: str | None) -> None:
    assert to_set_spec(given) == spec


@pytest.mark.parametrize("arg", ["cs?prefix=marc", "nonsense.XY", "cs;drop", "cs?limit=3"])
def test_bad_arguments_are_refused_before_any_request(arg: str) -> None:
    with Upstream() as server:
        with pytest.raises(SourceError):
            run(server, f"oai:{arg}")
        assert server.requests == []


def test_deleted_and_malformed_records_are_skipped_with_their_place() -> None:
    feed = make_papers(5)
    feed[1]["deleted"] = True
    feed[3]["render"] = {"created": "2026-13-45"}
    with Upstream(feed, oai_page_size=2) as server:
        records, skipped = run(server)
    assert [r.id for r in records] == ["2611.00001", "2611.00003", "2611.00005"]
    assert "deleted" in skipped[0].reason and "page 1 record 2" in skipped[0].where
    assert "oai:arXiv.org:2611.00002" in skipped[0].where
    assert "invalid <created> date" in skipped[1].reason and "page 2 record 2" in skipped[1].where


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize("code", ["badResumptionToken", "badArgument"])
def test_oai_errors_fail_with_their_code(code: str) -> None:
    with Upstream(make_papers(4), oai_page_size=2) as server:
        server.faults = [Fault(), Fault(body=oai_error(code, "The value of the resumptionToken is invalid"))]
        with pytest.raises(SourceError, match=code):
            run(server)


def test_503_with_retry_after_is_honoured_mid_harvest() -> None:
    with Upstream(make_papers(4), oai_page_size=2) as server:
        server.faults = [Fault(), Fault(status=503, retry_after=1)]
        records, _ = run(server)
    assert len(records) == 4
    times = [r.time for r in server.requests]
    assert len(times) == 3 and times[2] - times[1] >= 0.95
    assert server.requests[1].params == server.requests[2].params  # the same token, asked again


@pytest.mark.parametrize("fault", [Fault(status=429), Fault(truncate=True), Fault(delay=1.0)],
                         ids=["429", "truncated", "slow"])
def test_transient_faults_are_retried(fault: Fault) -> None:
    with Upstream(make_papers(4), oai_page_size=2) as server:
        server.faults = [Fault(), fault]
        records, skipped = run(server, http_timeout=0.3)
    assert len(records) == 4 and not skipped and len(server.requests) == 3


def test_harvest_twice_then_nothing_new(store, settings) -> None:
    with Upstream(make_papers(5), oai_page_size=2) as server:
        wanted = settings.replace(**server.settings_overrides())
        first = Ingest(["oai:cs"], options=WEEK).run(store, wanted)
        second = Ingest(["oai:cs"], options=WEEK).run(store, wanted)
    assert (first.counts["new"], first.failures) == (5, [])
    assert (second.counts["new"], second.counts["updated"], second.counts["unchanged"]) == (0, 0, 5)
    assert "oai" in store.papers.get_paper("2611.00003")["sources"]


def test_from_defaults_to_since_days_ago_and_until_is_left_open() -> None:
    with Upstream() as server:
        run(server, options=SourceOptions(), since_days=4)
        params = server.requests[0].params
    assert params["from"] == (date.today() - timedelta(days=4)).isoformat() and "until" not in params
