"""Deciding whether two records are one paper: identifiers first, then title and authors, each verdict with its reason."""

from __future__ import annotations

import dataclasses

import pytest

from papersift.records import PaperRecord
from papersift.sources import crossref
from papersift.sources.matching import author_overlap, candidate_keys, name_key, same_paper
from tests.upstream_journals import recorded_works

TITLE = "Deep reinforcement learning for conservation decisions"
ABSTRACT = ("Conservation decisions under uncertainty are hard. We frame them as a sequential "
            "decision problem and train agents with deep reinforcement learning, finding "
            "policies that beat classical management rules on fisheries and invasive species.")


def paper(paper_id: str = "2611.00001", source: str = "arxiv", **fields) -> PaperRecord:
    values = {"id": paper_id, "title": TITLE, "abstract": ABSTRACT, "source": source,
              "authors": ["Marcus Lapeyrolerie", "Melissa S. Chapman", "Carl Boettiger"],
              "categories": ["cs.LG"]}
    values.update(fields)
    return PaperRecord(**values)


def journal(**fields) -> PaperRecord:
    return paper("doi:10.1111/2041-210x.13954", "crossref", doi="10.1111/2041-210x.13954",
                 **fields)


def test_the_same_id_is_one_paper() -> None:
    verdict = same_paper(paper(version=1), paper(version=2, source="oai"))
    assert verdict.same and verdict.rule == "id"


def test_an_arxiv_papers_journal_doi_is_one_paper() -> None:
    verdict = same_paper(paper(doi="10.1111/2041-210X.13954", title="Other words"), journal())
    assert verdict.same and "10.1111/2041-210x.13954" in verdict.reason


def test_arxivs_own_doi_is_one_paper() -> None:
    datacite = paper("doi:10.48550/arxiv.2611.00001", "crossref", title="x")
    assert same_paper(paper(), datacite).same


def test_biorxiv_published_and_crossref_relation_link_both_ways() -> None:
    preprint = paper("doi:10.1101/014852", "biorxiv", relations=[
        ("is-preprint-of", "doi:10.1111/2041-210x.13954")], title="An earlier title")
    for a, b in ((preprint, journal()), (journal(), preprint)):
        verdict = same_paper(a, b)
        assert verdict.same and verdict.rule == "relation"
        assert verdict.reason == ("bioRxiv says doi:10.1101/014852 is preprint of "
                                  "doi:10.1111/2041-210x.13954")


def test_the_real_crossref_has_preprint_pair() -> None:
    works = {r.id: r for r in map(crossref.parse_item, recorded_works())}
    published, preprint = works["doi:10.1002/ece3.2314"], works["doi:10.1101/014852"]
    assert same_paper(preprint, published).rule == "relation"
    # Without the link, the title (a U+2010 hyphen against "-") and the authors still agree.
    unlinked = same_paper(preprint, dataclasses.replace(published, relations=[]))
    assert unlinked.same and unlinked.rule == "title-authors" and "3 of 3" in unlinked.reason


def test_reordered_and_abbreviated_authors_and_a_jats_abstract() -> None:
    copy = journal(authors=["Boettiger, C.", "Lapeyrolerie M", "M. S. Chapman"],
                   abstract=f"<jats:title>Abstract</jats:title><jats:p>{ABSTRACT}</jats:p>",
                   title="Deep reinforcement learning for <i>conservation</i> decisions.")
    verdict = same_paper(paper(), copy)
    assert verdict.same and verdict.author_overlap == 1.0 and verdict.title_similarity == 1.0


def test_a_title_edited_on_publication_needs_the_abstract_to_agree() -> None:
    edited = journal(title="Deep reinforcement learning for conservation decision making")
    assert same_paper(paper(), edited).same
    other_abstract = dataclasses.replace(edited, abstract="We survey coral reefs across the "
                                         "Pacific and count fish species by hand in transects.")
    assert not same_paper(paper(), other_abstract).same


def test_same_title_other_authors_stay_apart() -> None:
    verdict = same_paper(paper(), journal(authors=["Jane Doe", "Rahul Gupta"]))
    assert not verdict.same and verdict.rule == "authors" and "0 of 2" in verdict.reason


def test_a_comment_or_reply_is_not_the_paper() -> None:
    for title in (f"Comment on \u201c{TITLE}\u201d", f"Reply to: {TITLE}", f"Erratum: {TITLE}"):
        verdict = same_paper(paper(), journal(title=title))
        assert not verdict.same and verdict.rule == "response", title


def test_two_arxiv_papers_or_two_dois_of_one_registrant_stay_apart() -> None:
    assert same_paper(paper(), paper("2611.00002")).rule == "arxiv-ids"
    twin = paper("doi:10.1111/2041-210x.99999", "crossref", doi="10.1111/2041-210x.99999")
    assert same_paper(journal(), twin).rule == "doi-registrant"


def test_a_short_title_needs_more_than_the_title() -> None:
    a = journal(title="The forecast trap", authors=["Carl Boettiger", "Ann Other"])
    b = paper(title="The forecast trap", authors=["Carl Boettiger", "Someone Else"])
    assert not same_paper(a, b).same


@pytest.mark.parametrize(("name", "key"), [
    ("Kevin M. Wright", ("wright", "k")), ("Wright, K. M.", ("wright", "k")),
    ("Wright KM", ("wright", "k")), ("Tim\u00e9e Poisot", ("poisot", "t")),
    ("Perry de Valpine", ("valpine", "p")), ("Consortium", ("consortium", ""))])
def test_name_keys(name: str, key: tuple[str, str]) -> None:
    assert name_key(name) == key


def test_author_overlap_counts_each_name_once() -> None:
    overlap, matched = author_overlap(["A. Smith", "A. Smith"], ["Alice Smith", "Bob Jones"])
    assert overlap == 0.5 and matched == ["A. Smith"]
    assert author_overlap([], ["X"]) == (None, [])


def test_candidate_keys_meet_for_linked_and_retitled_records() -> None:
    preprint = paper("doi:10.1101/014852", "biorxiv",
                     relations=[("is-preprint-of", "doi:10.1111/2041-210x.13954")])
    assert candidate_keys(preprint) & candidate_keys(journal())
    assert candidate_keys(paper(title=TITLE.upper() + ".")) & candidate_keys(paper("2611.00009"))


def test_parts_of_a_series_stay_apart_even_when_numbered_twice() -> None:
    base = "Mechanistic Interpretability -- The Strange Science Part I.ii"
    verdict = same_paper(paper(title=f"{base}: Part I"), journal(title=f"{base}: Part II"))
    assert not verdict.same and verdict.rule == "numbering"


def test_one_shared_common_name_is_chance() -> None:
    verdict = same_paper(paper(authors=["Yu Wang", "Ada Lovelace"]),
                         journal(authors=["Yu Wang", "Alan Turing"]))
    assert not verdict.same and verdict.rule == "authors"


def test_names_in_the_other_order_or_with_initials_elsewhere_match() -> None:
    overlap, _ = author_overlap(["Wang Yu", "S. Harini S"], ["Yu Wang", "Sasmita Harini S"])
    assert overlap == 1.0
    assert author_overlap(["A. Smith"], ["B. Smith"])[0] == 0.0
