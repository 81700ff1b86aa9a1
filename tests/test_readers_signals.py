"""What readers tell papersift: feedback read into entries, imports, follows and reactions checked, one reader's data kept from another's."""

from __future__ import annotations

import pytest

from papersift.readers import accounts, signals
from papersift.readers.feedback import Entry, FeedbackTooLong, read_feedback
from papersift.readers.imports import NothingToImport, read_bibtex, read_ids, read_import
from papersift.records import PaperRecord
from papersift.store import Store, add_records

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")


@pytest.mark.parametrize(("text", "entries", "missed"), [
    ("less about benchmarks, more about theory",
     [Entry("less", "benchmarks"), Entry("more", "theory")], []),
    ("nothing on autonomous driving", [Entry("exclude", "autonomous driving")], []),
    ("I like graph neural networks and less LLM agents please",
     [Entry("more", "graph neural networks"), Entry("less", "LLM agents")], []),
    ("No more surveys. Fewer benchmark papers; more theory!",
     [Entry("exclude", "surveys"), Entry("less", "benchmark"), Entry("more", "theory")], []),
    ("more: diffusion models\nexclude: medical imaging",
     [Entry("more", "diffusion models"), Entry("exclude", "medical imaging")], []),
    ("hello there, more about theory", [Entry("more", "theory")], ["hello there"]),
])
def test_feedback_is_read_into_entries(text: str, entries: list[Entry], missed: list[str]) -> None:
    reading = read_feedback(text)
    assert reading.entries == entries and reading.not_understood == missed


def test_feedback_of_100_kb_is_refused() -> None:
    with pytest.raises(FeedbackTooLong, match="at most 2,000"):
        read_feedback("more theory " * 10_000)


def test_ids_and_links_are_found_in_pasted_text() -> None:
    found = read_ids("see 2401.01234v2, https://arxiv.org/abs/2502.00001 and arXiv:hep-th/9901001;"
                     " 2401.01234 again")
    assert found.ids == ["2401.01234", "2502.00001", "hep-th/9901001"]


def test_bibtex_entries_give_their_arxiv_papers() -> None:
    text = """@article{a, title={One}, eprint={2401.01234}, archivePrefix={arXiv}}
    @misc{b, title = "Two", url = {https://arxiv.org/abs/2502.00001v3}}
    @inproceedings{c, title={No arXiv}, doi={10.1/xyz}}
    @comment{ignored}"""
    found = read_bibtex(text)
    assert found.ids == ["2401.01234", "2502.00001"] and found.unreadable == ["c: no arXiv id in it"]


@pytest.mark.parametrize("text", ["", "this is not BibTeX at all", "\x00\x01 binary junk"])
def test_an_import_with_nothing_in_it_says_so(text: str) -> None:
    with pytest.raises(NothingToImport, match="no arXiv ids found"):
        read_import(text)


def _papers(store: Store) -> None:
    add_records(store, [
        PaperRecord(id="2601.00001", title="Graph learning for molecules at scale",
                    abstract="Graphs.", authors=["Ada Lovelace"], categories=["cs.LG"],
                    source="file", announced="2026-01-05"),
        PaperRecord(id="2601.00002", title="Graph learning for molecules at scale",
                    abstract="Graphs.", authors=["Ada Lovelace"], categories=["cs.LG"],
                    source="file", announced="2026-01-06"),  # a duplicate of the first
    ])


def test_signals_are_checked_and_duplicates_count_as_their_original(store: Store) -> None:
    _papers(store)
    reader = accounts.add_reader(store, "ada", "correct horse battery")
    assert signals.react(store, reader, "2601.00002", "up") == "2601.00001"
    assert store.readers.reactions_of(reader)[0]["paper_id"] == "2601.00001"
    version = store.readers.get_reader(reader)["signals_version"]
    with pytest.raises(signals.SignalError, match="no paper"):
        signals.react(store, reader, "2601.99999", "up")
    with pytest.raises(signals.SignalError, match="a reaction is one of"):
        signals.react(store, reader, "2601.00001", "love")
    for bad in ("topic:no-such-topic", "author:nobody", "category:xx.YY", "planet:mars",
                "search:-only -exclusions"):
        with pytest.raises(signals.SignalError):
            signals.follow(store, reader, bad)
    assert store.readers.get_reader(reader)["signals_version"] == version  # nothing changed
    assert signals.follow(store, reader, "author:ada-lovelace") == ("author", "ada-lovelace")
    assert signals.follow(store, reader, 'search:"graph -protein"') == ("search", "graph -protein")
    # A search followed from a result page keeps the page's filters, quotes inside it too.
    saved = signals.saved_search('graph au:"Ada Lovelace"', "cs.LG", None, "2026-01-01", "")
    assert saved == 'graph au:"Ada Lovelace" cat:cs.LG since:2026-01-01'
    assert signals.follow(store, reader, f"search:{saved}") == ("search", saved)
    assert signals.search_words(saved) == (["graph"], [])
    assert signals.follow(store, reader, "search:au:Lovelace") == ("search", "au:Lovelace")
    result = signals.import_liked(store, reader, "2601.00001 2607.00009")
    assert result["liked"] == ["2601.00001"] and result["unknown"] == ["2607.00009"]


def test_one_reader_never_reaches_another_readers_data(store: Store) -> None:
    _papers(store)
    ada = accounts.add_reader(store, "ada", "correct horse battery")
    bob = accounts.add_reader(store, "bob", "another fine password")
    signals.react(store, ada, "2601.00001", "up")
    signals.save(store, ada, "To read", "2601.00001")
    signals.give_feedback(store, ada, "more about graphs")
    signals.follow(store, ada, "category:cs.LG")
    assert store.readers.reactions_of(bob) == [] and store.readers.follows_of(bob) == []
    assert store.readers.collections_of(bob) == []
    assert store.readers.collection_papers(bob, "To read") is None
    assert store.readers.profile_entries(bob) == [] and store.readers.feedback_of(bob) == []
    entry = store.readers.profile_entries(ada)[0]
    assert not store.readers.remove_profile_entry(bob, entry["id"])  # not bob's to remove
    assert store.readers.profile_entries(ada) == [entry]
    assert store.readers.remove_reader(ada)
    assert store.readers.profile_entries(ada) == [] and store.readers.reactions_of(ada) == []
    assert [r["name"] for r in store.readers.list_readers()] == ["bob"]
