"""The bioRxiv/medRxiv and Crossref sources against local servers serving their real recorded answers, with paging and faults."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date

import pytest

from papersift.records import PaperRecord, RecordLimits, Skipped, SourceError, check_record
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from tests.upstream import Fault
from tests.upstream_journals import Journals, challenge_403

YEAR_2024 = SourceOptions(since=date(2024, 1, 1), until=date(2024, 12, 31))
EVER = SourceOptions(since=date(2000, 1, 1), until=date(2026, 12, 1))


def run(server: Journals, spec: str, options: SourceOptions = YEAR_2024, **settings):
    found = list(open_source(spec, options, load_settings(**server.settings_overrides(**settings))))
    return ([r for r in found if isinstance(r, PaperRecord)], [s for s in found if isinstance(s, Skipped)])


# ------------------------------------------------------------------ bioRxiv / medRxiv
def test_biorxiv_pages_through_the_real_answer_by_cursor() -> None:
    with Journals() as server:
        server.details_page = 30
        records, skipped = run(server, "biorxiv:all")
        paths = [r.path for r in server.requests]
    assert paths == [f"/details/biorxiv/2024-01-01/2024-12-31/{c}/json" for c in (0, 30, 60, 90)]
    assert len(records) == 100 and not skipped
    # Every version of one DOI is a version of one paper.
    versions = Counter(r.id for r in records)
    assert versions["doi:10.1101/263681"] == 4 and len(versions) == 79
    assert sum(1 for n in versions.values() if n > 1) == 14
    assert sorted(r.version for r in records if r.id == "doi:10.1101/263681") == [2, 3, 4, 5]
    first = records[0]
    assert (first.id, first.version, first.source, first.doi) == (
        "doi:10.1101/029900", 3, "biorxiv", "10.1101/029900")
    assert first.authors[:2] == ["K. M. Wright", "A. Gaudinier"]
    assert first.categories == ["biorxiv/evolutionary_biology"]
    assert first.submitted == "2024-12-16" and first.versions == [(3, "2024-12-16")]
    assert first.links["abs"] == "https://www.biorxiv.org/content/10.1101/029900v3"
    assert first.extras["corresponding_author"] == "Kevin M. Wright"
    published = [r for r in records if r.published_doi]
    assert len(published) == 54 and all(r.relations[0][0] == "is-preprint-of" for r in published)
    assert sum(1 for r in records if r.license is None) == 5
    assert sum(1 for r in records if r.extras.get("withdrawn")) == 2
    limits = RecordLimits.defaults()
    assert all(check_record(r, limits) for r in records)


def test_medrxiv_reads_its_own_server_and_categories() -> None:
    with Journals() as server:
        records, skipped = run(server, "medrxiv:")
        assert server.requests[0].path.startswith("/details/medrxiv/")
    assert len(records) == 100 and not skipped
    assert {r.source for r in records} == {"medrxiv"}
    assert {r.extras["type"] for r in records} == {"PUBLISHAHEADOFPRINT"}
    assert all(r.categories[0].startswith("medrxiv/") for r in records)
    assert records[0].links["abs"].startswith("https://www.medrxiv.org/content/10.1101/")
    assert sum(1 for r in records if r.published_doi) == 33


def test_categories_are_asked_one_at_a_time() -> None:
    with Journals() as server:
        records, _ = run(server, "biorxiv:Evolutionary Biology,genomics")
        asked = [r.params.get("category") for r in server.requests]
    assert asked == ["evolutionary_biology", "genomics"]
    assert {r.categories[0] for r in records} == {"biorxiv/evolutionary_biology", "biorxiv/genomics"}


def test_no_posts_found_is_an_empty_interval() -> None:
    with Journals() as server:
        records, skipped = run(server, "biorxiv:all", SourceOptions(since=date(2019, 1, 1),
                                                                    until=date(2019, 1, 2)))
        assert len(server.requests) == 1
    assert (records, skipped) == ([], [])


def test_bad_records_are_skipped_with_their_reason_and_odd_ones_read() -> None:
    with Journals() as server:
        rows = server.records["biorxiv"][:6]
        rows[0] = {**rows[0], "doi": "10.64898/2026.01.05.000123", "date": "2024-03-01"}  # new prefix
        rows[1] = {**rows[1], "title": "Tuning <i>Mimulus</i> &amp; copper"}
        rows[2] = {**rows[2], "title": ""}
        rows[3] = {**rows[3], "version": "two"}
        rows[4] = {k: v for k, v in rows[4].items() if k != "doi"}
        rows[5] = {**rows[5], "published": "not a doi", "date": "2024-02-30"}
        server.records["biorxiv"] = [*rows, "not a record"]
        records, skipped = run(server, "biorxiv:all")
    assert [r.doi for r in records] == ["10.64898/2026.01.05.000123", rows[1]["doi"].lower()]
    assert records[1].title == "Tuning Mimulus & copper"
    reasons = [s.reason for s in skipped]
    assert "missing title" in reasons[0] and "version is 'two'" in reasons[1]
    assert reasons[2] == "record without a doi" and "not a day that exists" in reasons[3]
    assert "not an object" in reasons[4]
    assert skipped[0].where.endswith("/0/json record 3")


def test_counts_as_numbers_or_junk_still_page() -> None:
    with Journals() as server:
        server.details_page = 40
        real = server.respond
        def numbers(path, params, empty):  # noqa: ANN001, ANN202 - a wrapper of the route
            status, kind, body, *rest = real(path, params, empty)
            data = json.loads(body)
            if data["messages"][0].get("total"):
                data["messages"][0]["total"] = int(data["messages"][0]["total"])
                data["messages"][0]["count"] = "forty"
            return (status, kind, json.dumps(data).encode(), *rest)
        server.respond = numbers  # type: ignore[method-assign]
        records, _ = run(server, "biorxiv:all")
    assert len(records) == 100 and len(server.requests) == 3


def test_a_challenge_page_fails_the_source_with_its_reason() -> None:
    with Journals() as server:
        server.faults = [Fault(status=403, body=challenge_403(), content_type="application/json")]
        with pytest.raises(SourceError, match="ChallengeRequiredError.*challenge first"):
            run(server, "biorxiv:all")
        assert len(server.requests) == 1  # a 403 is not asked again


def test_retry_after_is_waited_for() -> None:
    with Journals() as server:
        server.faults = [Fault(status=503, retry_after=1)]
        records, _ = run(server, "medrxiv:all")
        gap = server.requests[1].time - server.requests[0].time
    assert len(records) == 100 and gap >= 0.95


def test_bad_specs_are_refused() -> None:
    with Journals() as server:
        with pytest.raises(SourceError, match="not biorxiv categories"):
            run(server, "biorxiv:neuro$cience")
        with pytest.raises(SourceError, match="before --since"):
            run(server, "biorxiv:all", SourceOptions(since=date(2024, 2, 1), until=date(2024, 1, 1)))
        assert not server.requests


# ------------------------------------------------------------------ Crossref
def test_crossref_pages_with_its_cursor_and_sends_mailto() -> None:
    with Journals() as server:
        records, skipped = run(server, "crossref:has-assertion:true", EVER, page_size=7)
        cursors = [r.params["cursor"] for r in server.requests]
        params = server.requests[0].params
    assert len(records) == 40 and not skipped
    assert cursors[0] == "*" and len(cursors) == 6 and len(set(cursors)) == 6
    assert params["mailto"] == "papersift-tests@example.org" and params["rows"] == "7"
    assert params["filter"] == ("has-assertion:true,from-created-date:2000-01-01,"
                                "until-created-date:2026-12-01")
    limits = RecordLimits.defaults()
    assert all(check_record(r, limits) for r in records)


def test_crossref_records_jats_partial_dates_and_relations() -> None:
    with Journals() as server:
        records, _ = run(server, "crossref:type:journal-article", EVER)
    by_id = {r.id: r for r in records}
    forecast = by_id["doi:10.1111/ele.14024"]
    assert forecast.abstract.startswith("Encouraged by decision makers\u2019 appetite")
    assert "<" not in forecast.abstract and "Abstract" not in forecast.abstract[:10]
    assert forecast.journal_ref == "Ecology Letters 25(7), 1655-1664 (2022)"
    assert forecast.authors[0] == "Carl Boettiger" and forecast.submitted == "2022-05-30"
    assert by_id["doi:10.1002/ece3.2314"].relations == [("has-preprint", "doi:10.1101/014852")]
    assert by_id["doi:10.1002/fee.70021"].title == "The role of AI in ecology\u2019s computational carbon footprint"
    assert by_id["doi:10.1111/2041-210x.14070"].extras["issued"] == "2023-03"
    absent = [r for r in records if r.extras.get("abstract") == "absent"]
    assert absent and all(r.abstract == "" for r in absent)
    assert all("<" not in r.title for r in records)
    assert {r.extras["type"] for r in records} == {"journal-article"}


def test_crossref_keeps_its_filter_dates_and_adds_none() -> None:
    with Journals() as server:
        records, _ = run(server, "crossref:from-created-date:2022-01-01,type:journal-article")
        assert server.requests[0].params["filter"] == "from-created-date:2022-01-01,type:journal-article"
    assert records and all(r.submitted >= "2022-01-01" for r in records)


def test_crossref_unknown_filter_says_what_crossref_says() -> None:
    with Journals() as server, pytest.raises(SourceError, match="no such filter"):
        run(server, "crossref:colour:blue", EVER)


def test_crossref_bad_spec_is_refused() -> None:
    with Journals() as server, pytest.raises(SourceError, match="not a Crossref filter"):
        run(server, "crossref:ecology")


def test_crossref_429_retry_after_and_rate_headers_slow_it_down() -> None:
    with Journals() as server:
        server.rate_limit = ("4", "1s")  # a request every 0.25 s
        server.faults = [Fault(status=429, retry_after=1, path="/works")]
        records, _ = run(server, "crossref:has-assertion:true", EVER, page_size=10)
        times = [r.time for r in server.requests]
    assert len(records) == 40
    assert times[1] - times[0] >= 0.95
    # Paced by the client's clock, seen by the server's: on a busy machine one gap may be
    # read a little short when the request before it arrived late, never the pace overall.
    gaps = [b - a for a, b in zip(times[2:], times[3:], strict=False)]
    assert sum(gaps) / len(gaps) >= 0.24 and min(gaps) >= 0.15


def test_crossref_bad_works_are_skipped_with_their_reason() -> None:
    with Journals() as server:
        works = server.works[:5]
        works[0] = {k: v for k, v in works[0].items() if k != "DOI"}
        works[1] = {**works[1], "title": []}
        works[2] = {**works[2], "DOI": "NA"}
        works[3] = {**works[3], "abstract": {"p": "structured"}}
        server.works = [*works, 7]
        records, skipped = run(server, "crossref:has-assertion:true", EVER)
    assert len(records) == 1
    reasons = [s.reason for s in skipped]
    assert reasons[0] == "work without a DOI" and "missing title" in reasons[1]
    assert "not a DOI: 'NA'" in reasons[2] and "abstract is an object" in reasons[3]
    assert "not an object" in reasons[4]
    assert skipped[0].where.endswith("item 1")


def test_crossref_challenge_page_is_reported() -> None:
    with Journals() as server:
        server.faults = [Fault(status=403, body=challenge_403(), content_type="application/json")]
        with pytest.raises(SourceError, match="HTTP 403: ChallengeRequiredError"):
            run(server, "crossref:type:journal-article", EVER)
