"""Merging across sources in the store (store.merges): a preprint and its journal version, an arXiv paper and a bioRxiv copy, the reasons kept, unmerge kept apart; both backends."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.records import PaperRecord
from papersift.store import Store, add_records

pytestmark = pytest.mark.backends("sqlite", "postgresql")

ABSTRACT = ("Gene flow between populations shapes local adaptation. We sequence 300 genomes "
            "of stick insects and measure selection along an elevation gradient.")


def preprint(**fields: object) -> PaperRecord:
    values: dict[str, object] = dict(
        id="doi:10.1101/014852", title="Selection and gene flow on a <i>Timema</i> gradient",
        abstract=ABSTRACT, authors=["Patrik Nosil", "Zachariah Gompert", "Kay Lucek"],
        categories=["biorxiv/evolutionary_biology"], source="biorxiv", version=2,
        submitted="2024-01-03", doi="10.1101/014852", versions=[(1, "2024-01-02"), (2, "2024-01-03")],
        links={"biorxiv": "https://www.biorxiv.org/content/10.1101/014852v2"})
    values.update(fields)
    return PaperRecord(**values)  # type: ignore[arg-type]


def journal(**fields: object) -> PaperRecord:
    values: dict[str, object] = dict(
        id="doi:10.1002/ece3.2314", title="Selection and gene flow on a Timema gradient",
        abstract="", authors=["Nosil, P.", "Gompert, Z.", "Lucek, K."],
        categories=["crossref/ecology"], source="crossref", submitted="2024-06-01",
        doi="10.1002/ece3.2314", relations=[("has-preprint", "doi:10.1101/014852")])
    values.update(fields)
    return PaperRecord(**values)  # type: ignore[arg-type]


def arxiv(**fields: object) -> PaperRecord:
    values: dict[str, object] = dict(
        id="2401.01234", title="Selection and gene flow on a Timema gradient", abstract=ABSTRACT,
        authors=["P. Nosil", "Z. Gompert", "K. Lucek"], categories=["q-bio.PE"], source="arxiv",
        version=1, submitted="2024-01-05", announced="2024-01-08")
    values.update(fields)
    return PaperRecord(**values)  # type: ignore[arg-type]


def live(store: Store) -> set[str]:
    return {p["id"] for p in store.papers.iter_papers()}


def test_a_preprint_and_its_journal_version_are_one_paper_with_the_reason(store: Store) -> None:
    add_records(store, [preprint()])
    report = add_records(store, [journal()])
    assert report.duplicates == [("doi:10.1002/ece3.2314", "doi:10.1101/014852")]
    assert live(store) == {"doi:10.1101/014852"}
    records = store.merges.paper_records("doi:10.1101/014852")
    assert [r["id"] for r in records] == ["doi:10.1101/014852", "doi:10.1002/ece3.2314"]
    assert records[0]["sources"] == ["biorxiv"] and records[0]["merge"] is None
    assert [v["version"] for v in records[0]["versions"]] == [1, 2]
    merge = records[1]["merge"]
    assert merge["rule"] == "relation"
    assert "Crossref says doi:10.1002/ece3.2314 has preprint doi:10.1101/014852" in merge["reason"]
    assert records[1]["relations"] == [{"kind": "has-preprint", "target": "doi:10.1101/014852"}]


def test_the_published_field_links_a_journal_version_stored_first(store: Store) -> None:
    add_records(store, [journal(relations=[], title="Another title altogether for this work")])
    add_records(store, [preprint(relations=[("is-preprint-of", "doi:10.1002/ece3.2314")])])
    assert live(store) == {"doi:10.1002/ece3.2314"}
    merge = store.merges.paper_records("doi:10.1002/ece3.2314")[1]["merge"]
    assert merge["reason"] == ("bioRxiv says doi:10.1101/014852 is preprint of "
                               "doi:10.1002/ece3.2314")


def test_an_arxiv_paper_and_a_biorxiv_copy_merge_by_title_and_authors_either_way(
        store: Store) -> None:
    add_records(store, [arxiv()])
    add_records(store, [preprint()])
    assert live(store) == {"2401.01234"}
    reason = store.merges.paper_records("2401.01234")[1]["merge"]["reason"]
    assert reason.startswith("the same title and 3 of 3 authors in common")
    # The other order: the bioRxiv record first, the arXiv one finds it by its keys.
    add_records(store, [preprint(id="doi:10.1101/999999", doi="10.1101/999999",
                                 title="Drift and selection in island lizards")])
    add_records(store, [arxiv(id="2402.05555", title="Drift and selection in island lizards")])
    assert "2402.05555" not in live(store)
    assert store.papers.get_paper("2402.05555")["duplicate_of"] == "doi:10.1101/999999"


def test_near_misses_stay_apart(store: Store) -> None:
    add_records(store, [preprint()])
    other_authors = journal(id="doi:10.1002/x.1", doi="10.1002/x.1", relations=[],
                            authors=["A. Someone", "B. Else"])
    comment = journal(id="doi:10.1002/x.2", doi="10.1002/x.2", relations=[],
                      title="Comment on: Selection and gene flow on a Timema gradient")
    add_records(store, [other_authors, comment])
    assert live(store) == {"doi:10.1101/014852", "doi:10.1002/x.1", "doi:10.1002/x.2"}


def test_unmerge_splits_and_keeps_them_apart_through_later_ingests(store: Store) -> None:
    add_records(store, [preprint()])
    add_records(store, [journal()])
    assert store.merges.unmerge("doi:10.1002/ece3.2314") == ["doi:10.1002/ece3.2314"]
    assert live(store) == {"doi:10.1101/014852", "doi:10.1002/ece3.2314"}
    history = store.merges.merges_of("doi:10.1002/ece3.2314")
    assert len(history) == 1 and history[0]["unmerged_at"]
    # Ingest again, changed: nothing merges them back; a new copy of the journal record
    # under another id still may join the preprint (kept apart is per pair).
    add_records(store, [journal(title="Selection and gene flow on a Timema gradient (v2)")])
    add_records(store, [preprint(version=3, versions=[(3, "2024-02-01")])])
    assert live(store) == {"doi:10.1101/014852", "doi:10.1002/ece3.2314"}
    assert store.merges.unmerge("doi:10.1101/014852") == []
    assert store.merges.unmerge("doi:10.9999/none") is None


def test_unmerging_a_paper_splits_every_record_merged_into_it(store: Store) -> None:
    add_records(store, [arxiv()])
    add_records(store, [preprint()])
    add_records(store, [journal()])
    assert len(store.merges.paper_records("2401.01234")) == 3
    assert store.merges.unmerge("2401.01234") == ["doi:10.1002/ece3.2314", "doi:10.1101/014852"]
    assert live(store) == {"2401.01234", "doi:10.1101/014852", "doi:10.1002/ece3.2314"}


def test_arxiv_duplicates_keep_the_old_rules_with_a_reason(store: Store) -> None:
    add_records(store, [arxiv(doi="10.1000/j.1")])
    add_records(store, [arxiv(id="2403.00001", doi="10.1000/J.1", title="Renamed")])
    records = store.merges.paper_records("2401.01234")
    assert records[1]["merge"]["rule"] == "doi"
    assert records[1]["merge"]["reason"].endswith("the same DOI 10.1000/j.1")


def test_ingest_again_is_idempotent(store: Store) -> None:
    add_records(store, [preprint(), journal(), arxiv()])
    dumped = store.papers.dump()
    merges = store.merges.merges_of("2401.01234")
    again = add_records(store, [preprint(), journal(), arxiv()])
    assert again.unchanged == 3 and not again.new
    assert store.papers.dump() == dumped and store.merges.merges_of("2401.01234") == merges


def test_the_unmerge_command(store: Store) -> None:
    add_records(store, [preprint()])
    add_records(store, [journal()])
    store.close()
    runner = CliRunner()
    done = runner.invoke(app, ["unmerge", "doi:10.1002/ece3.2314", "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["split"] == ["doi:10.1002/ece3.2314"]
    assert result["undone"][0]["reason"].startswith("Crossref says")
    again = runner.invoke(app, ["unmerge", "doi:10.1002/ece3.2314"])
    assert again.exit_code == 1 and "nothing was merged" in again.output
    unknown = runner.invoke(app, ["unmerge", "doi:10.9/none"])
    assert unknown.exit_code == 2 and "no paper" in unknown.output


def test_a_preprint_that_later_says_where_it_was_published_joins_its_journal_version(
        store: Store) -> None:
    add_records(store, [preprint()])
    add_records(store, [journal(relations=[], title="Life history and dispersal in stick insects")])
    assert live(store) == {"doi:10.1101/014852", "doi:10.1002/ece3.2314"}
    add_records(store, [preprint(version=3, versions=[(3, "2024-09-01")],
                                 relations=[("is-preprint-of", "doi:10.1002/ece3.2314")])])
    assert live(store) == {"doi:10.1101/014852"}  # the earlier stored is kept
    merge = store.merges.paper_records("doi:10.1101/014852")[1]["merge"]
    assert merge["rule"] == "relation" and "is preprint of doi:10.1002/ece3.2314" in merge["reason"]


def test_one_batch_with_an_arxiv_paper_then_its_biorxiv_copy(store: Store) -> None:
    report = add_records(store, [arxiv(), preprint()])
    assert live(store) == {"2401.01234"}
    assert report.duplicates == [("doi:10.1101/014852", "2401.01234")]


def test_a_journal_version_with_one_word_changed_finds_its_arxiv_paper_either_way(
        store: Store) -> None:
    title = "Selection and gene flow on a steep Timema elevation gradient"
    edited = "Natural selection and gene flow on a steep Timema elevation gradient"
    add_records(store, [arxiv(title=title)])
    add_records(store, [journal(relations=[], title=edited, abstract=ABSTRACT)])
    assert live(store) == {"2401.01234"}
    add_records(store, [journal(id="doi:10.1002/x.9", doi="10.1002/x.9", relations=[],
                                title="Cortical maps of " + title, abstract=ABSTRACT,
                                authors=["A. Other", "B. Other"])])
    add_records(store, [arxiv(id="2402.00077", title="Cortical maps of " + title + " revisited",
                              authors=["A. Other", "B. Other"])])
    assert "2402.00077" not in live(store)
    assert store.papers.get_paper("2402.00077")["duplicate_of"] == "doi:10.1002/x.9"
