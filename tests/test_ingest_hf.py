"""The Hugging Face daily papers source against a local server speaking its JSON, with real samples and faults."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord, Skipped, SourceError
from papersift.settings import load_settings
from papersift.sources import SourceOptions, open_source
from tests.conftest import shared_format
from tests.upstream import Fault, Upstream, make_paper, make_papers


def run(server: Upstream, spec: str = "hf:2026-11-27", **settings):
    found = list(open_source(spec, SourceOptions(), load_settings(**server.settings_overrides(**settings))))
    return ([r for r in found if isinstance(r, PaperRecord)], [s for s in found if isinstance(s, Skipped)])


def test_parses_the_real_compact_response() -> None:
    with Upstream() as server:
        server.faults = [Fault(body=shared_format("hf_daily_papers/sotawhat_hf_daily_papers.json").read_bytes())]
        records, skipped = run(server)
        assert server.requests[0].params == {"date": "2026-11-27"}
    assert len(records) == 30 and not skipped
    first = records[0]
    assert (first.id, first.version, first.source, first.announced) == ("2606.00467", None, "hf", None)
    assert first.title.startswith("On the Limits of LLM Adaptability")
    assert first.authors == ["Etienne Casanova", "Rafal Kocielnik", "R. Michael Alvarez"]
    assert first.abstract.startswith("Large Language Models (LLMs) are increasingly used")
    assert first.submitted == "2026-05-30T00:00:00.000Z"
    assert first.extras == {"upvotes": 0, "num_comments": 2}
    assert first.links["hf"] == "https://huggingface.co/papers/2606.00467"


def test_parses_github_and_project_extras() -> None:
    with Upstream() as server:
        server.faults = [Fault(body=shared_format("hf_daily_papers/newsassistant_hf_daily_papers.json").read_bytes())]
        records, _ = run(server)
    first = records[0]
    assert first.id == "2607.26654" and len(first.authors) == 7
    assert first.extras == {
        "upvotes": 3, "num_comments": 1, "github_repo": "https://github.com/desBugger/constitutional-mt",
        "github_stars": 2, "project_page": "https://www.lesswrong.com/posts/n5htoDGvKKJFAjji2",
    }
    assert "github_repo" not in records[2].extras


def test_empty_argument_asks_for_today() -> None:
    with Upstream() as server:
        assert run(server, "hf:") == ([], [])
        assert server.requests[0].params == {"date": datetime.now(UTC).date().isoformat()}


def test_bad_day_is_refused() -> None:
    with Upstream() as server, pytest.raises(SourceError, match="expected a day"):
        run(server, "hf:yesterday")


def test_malformed_items_are_skipped_with_their_place() -> None:
    feed = make_papers(4)
    feed[1]["render"] = {"id": "not-arxiv"}
    feed[2]["render"] = {"title": ""}
    with Upstream(feed) as server:
        records, skipped = run(server)
    assert [r.id for r in records] == ["2611.00001", "2611.00004"]
    assert [s.where.rsplit(" ", 2)[1:] for s in skipped] == [["item", "2"], ["item", "3"]]
    assert "date=2026-11-27" in skipped[0].where
    assert "not an arXiv id" in skipped[0].reason and "missing title" in skipped[1].reason


@pytest.mark.parametrize("fault", [Fault(status=502), Fault(status=429, retry_after=0),
                                   Fault(truncate=True), Fault(body=b'[{"paper": {"id": "26'),
                                   Fault(body=b'{"error": "Invalid date"}'), Fault(delay=1.0)],
                         ids=["502", "429", "truncated", "cut-json", "not-a-list", "slow"])
def test_transient_faults_are_retried(fault: Fault) -> None:
    with Upstream(make_papers(3)) as server:
        server.faults = [fault]
        records, _ = run(server, http_timeout=0.3)
    assert len(records) == 3 and len(server.requests) == 2


def test_hf_attaches_to_an_arxiv_paper_without_overwriting_its_text(store, settings) -> None:
    arxiv_side = make_paper("2611.00001", title="The arXiv title", abstract="The arXiv abstract.",
                            categories=["cs.CL", "cs.LG"], version=2)
    with Upstream([arxiv_side]) as server:
        wanted = settings.replace(**server.settings_overrides())
        week = SourceOptions(since=date(2026, 11, 20), until=date(2026, 11, 28))
        assert Ingest(["arxiv:cs.CL"], options=week).run(store, wanted).counts["new"] == 1
        server.papers = [make_paper("2611.00001", title="A hyped-up HF title", abstract="Different.",
                                    authors=["Someone Else"], upvotes=42, num_comments=3,
                                    github_repo="https://github.com/example/code")]
        report = Ingest(["hf:2026-11-27"]).run(store, wanted)
        server.papers[0]["upvotes"] = 43
        later = Ingest(["hf:2026-11-27"]).run(store, wanted)
        same = Ingest(["hf:2026-11-27"]).run(store, wanted)
    assert (report.counts["new"], report.counts["updated"]) == (0, 1)
    paper = store.papers.get_paper("2611.00001")
    assert paper["title"] == "The arXiv title" and paper["abstract"] == "The arXiv abstract."
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert paper["categories"] == ["cs.CL", "cs.LG"] and paper["version"] == 2
    assert paper["links"]["hf"] == "https://huggingface.co/papers/2611.00001"
    assert later.counts["updated"] == 1 and (same.counts["new"], same.counts["updated"], same.counts["unchanged"]) == (0, 0, 1)
    assert store.papers.get_paper("2611.00001")["sources"]["hf"] == {
        "upvotes": 43, "num_comments": 3, "github_repo": "https://github.com/example/code"}


def test_hf_alone_creates_the_paper_and_file_text_later_wins(store, settings, tmp_path) -> None:
    with Upstream([make_paper("2611.00001", title="HF title", upvotes=5)]) as server:
        wanted = settings.replace(**server.settings_overrides())
        assert Ingest(["hf:2026-11-27"]).run(store, wanted).counts["new"] == 1
    snapshot = tmp_path / "recent.jsonl"
    snapshot.write_text('{"id": "2611.00001", "title": "File title", "abstract": "A.", "authors": ["X Y"],'
                        ' "categories": ["cs.LG"], "announced": "2026-11-27"}\n')
    Ingest([f"file:{snapshot}"]).run(store, settings)
    paper = store.papers.get_paper("2611.00001")
    assert paper["title"] == "File title" and paper["sources"]["hf"]["upvotes"] == 5
