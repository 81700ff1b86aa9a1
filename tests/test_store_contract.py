"""The store contract (papersift.store.contracts), as every backend must honour it: one small store, each concern's answers.

Parametrized by backend: each one registered as a store plugin is run through the same
tests (a new backend adds its location below; tests/test_architecture.py checks that every
registered backend is here).
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from papersift.records import PaperRecord
from papersift.records.prepare import prepare_record
from papersift.store import KeywordQuery, SearchFilters, Store, StoreQueryError, Term, open_store

MODEL = "test:model"


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"sqlite://{tmp_path / 'contract.db'}"


def _postgresql(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return request.getfixturevalue("postgres_url")


BACKENDS = {"sqlite": _sqlite, "postgresql": _postgresql}


def record(n: int, title: str, day: str, authors: list[str], categories: list[str],
           **fields: object) -> PaperRecord:
    return PaperRecord(id=f"2601.{n:05d}", title=title, abstract=f"{title}. We study it well.",
                       authors=authors, categories=categories, source="file", announced=day,
                       **fields)  # type: ignore[arg-type]


PAPERS = [
    record(1, "Graph neural networks for molecules", "2026-01-05", ["Ada Lovelace", "Alan Turing"],
           ["cs.LG", "q-bio.BM"]),
    record(2, "Diffusion models for images", "2026-01-05", ["Grace Hopper"], ["cs.CV"]),
    record(3, "Graph transformers at scale", "2026-01-12", ["Ada Lovelace"], ["cs.LG"]),
    record(4, "Reward models for language agents", "2026-01-13", ["Alan Turing", "Kurt Goedel",
                                                                  "Emmy Noether"], ["cs.CL"]),
]
# The same paper as the first (same title and first author) under another id.
DUPLICATE = record(9, "Graph neural networks for molecules", "2026-01-20",
                   ["Ada Lovelace"], ["cs.LG"])


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    store = open_store(BACKENDS[request.param](request, tmp_path))
    report = store.papers.upsert_papers([prepare_record(r) for r in [*PAPERS, DUPLICATE]])
    assert report.duplicates == [("2601.00009", "2601.00001")]
    yield store
    store.close()


def _vector(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=8).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _embed(store: Store) -> None:
    store.embeddings.put_embeddings(MODEL, [(p.id, f"h{i}", _vector(i))
                                            for i, p in enumerate(PAPERS)])


def _topics(store: Store) -> dict[str, int]:
    """Two topics in one section and the "other" bucket; returns {key: topic id}."""
    written = store.topics.replace_topics({
        "method": "test", "params": {"k": 2}, "n_papers": 4, "report": {"topics": 2},
        "sections": [{"key": "s", "slug": "learning", "label": "Learning", "position": 0}],
        "topics": [
            {"key": "g", "id": None, "slug": "graphs", "label": "Graphs, molecules",
             "key_phrases": ["graphs", "molecules"], "section": "s", "centroid": _vector(1)},
            {"key": "v", "id": None, "slug": "vision", "label": "Diffusion, images",
             "key_phrases": ["diffusion", "images"], "section": "s", "centroid": _vector(2)},
            {"key": "o", "id": None, "slug": "other", "label": "Other papers",
             "key_phrases": [], "is_other": True, "centroid": None},
        ],
        "retired": [],
        "assignments": [("2601.00001", "g", 0.9), ("2601.00003", "g", 0.8),
                        ("2601.00002", "v", 0.7), ("2601.00004", "o", 0.1)],
    })
    return written["topic_ids"]


# ---------------------------------------------------------------------- papers
def test_papers(backend: Store) -> None:
    papers = backend.papers
    assert papers.count_papers() == 4 and papers.count_papers(include_duplicates=True) == 5
    paper = papers.get_paper("2601.00001")
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert paper["categories"] == ["cs.LG", "q-bio.BM"] and paper["duplicates"] == ["2601.00009"]
    assert papers.get_paper("2601.99999") is None
    assert [p["id"] for p in papers.iter_papers()] == [p.id for p in PAPERS]
    assert [p["id"] for p in papers.iter_papers(since="2026-01-12")] == ["2601.00003", "2601.00004"]
    assert papers.iter_papers(ids=["2601.00002"]).__iter__().__next__()["authors"] == ["Grace Hopper"]
    assert papers.paper_dates(["2601.00003"]) == {"2601.00003": "2026-01-12"}
    assert papers.primary_categories()["2601.00004"] == "cs.CL"
    stats = papers.stats()
    assert (stats["papers"], stats["distinct_papers"], stats["duplicates"]) == (5, 4, 1)
    assert stats["by_month"] == {"2026-01": 4}


def test_upserting_the_same_records_changes_nothing(backend: Store) -> None:
    before = backend.papers.dump()
    again = backend.papers.upsert_papers([prepare_record(r) for r in PAPERS])
    assert (again.new, again.updated, again.unchanged) == ([], [], 4)
    assert backend.papers.dump() == before
    newer = record(2, "Diffusion models for images, revised", "2026-01-05", ["Grace Hopper"],
                   ["cs.CV"], version=2)
    assert backend.papers.upsert_papers([prepare_record(newer)]).updated == ["2601.00002"]
    assert backend.papers.get_paper("2601.00002")["title"].endswith("revised")


def test_lines_known_unchanged(backend: Store) -> None:
    line = prepare_record(record(5, "A paper read from a line", "2026-01-14", ["X Y"], ["cs.AI"]),
                          line_key=42)
    backend.papers.upsert_papers([line])
    assert backend.papers.current_lines([42, 43]) == {42}
    with backend.papers.bulk_load(wanted=True) as deferred:  # not empty: nothing to defer
        assert deferred is False
    assert backend.papers.record_ingest_run(["file:x"], "2026-01-14T00:00:00Z", {"ok": True}) > 0


# ---------------------------------------------------------------------- search
def test_a_word_is_asked_of_the_tokenizer_once_whatever_its_ascii_case(
        backend: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[str]] = []
    tokenize = backend.search._tokenize

    def counted(words: list[str]) -> list[list[str]]:
        asked.append(list(words))
        return tokenize(words)

    monkeypatch.setattr(backend.search, "_tokenize", counted)
    # A word no other test asked (the memory is the process's): letters, as both index.
    word = "Tok" + "".join(random.choice(string.ascii_lowercase) for _ in range(12))
    assert backend.search.index_tokens([word]) == backend.search.index_tokens([word.lower()])
    assert backend.search.index_tokens([word.upper()]) == backend.search.index_tokens([word])
    assert asked == [[word.lower()]]
    assert backend.search.index_tokens(["Graphs", "graphs"]) == [["graph"], ["graph"]]


def test_keyword_search_and_filters(backend: Store) -> None:
    search = backend.search
    tokens = search.index_tokens(["Graphs", "modelling"])
    assert tokens[0] == ["graph"] and len(tokens[1]) == 1
    assert search.term_doc_counts(["graph"]) == {"graph": 3}  # the duplicate counts too
    graphs = KeywordQuery([Term("graph")])
    hits = search.keyword_search(graphs, (2.0, 1.0, 0.5))
    pk_of = {search.pk_of(p.id): p.id for p in PAPERS}
    assert {pk_of[pk] for pk, _ in hits} == {"2601.00001", "2601.00003"}  # not the duplicate
    assert all(score > 0 for _, score in hits)
    since = SearchFilters(since="2026-01-10")
    assert [pk_of[pk] for pk, _ in search.keyword_search(graphs, (2, 1, 0.5), since)] == [
        "2601.00003"]
    by_author = SearchFilters(authors=["Alan Turing"])
    assert {pk_of[pk] for pk, _ in search.keyword_search(graphs, (2, 1, 0.5), by_author)} == {
        "2601.00001"}
    assert {pk_of[pk] for pk in search.filtered_pks(SearchFilters(categories=["cs"]))} == {
        p.id for p in PAPERS if p.categories[0].startswith("cs")}
    assert [pk_of[pk] for pk in search.recent_pks(SearchFilters(categories=["cs.LG"]), 5)] == [
        "2601.00003", "2601.00001"]
    both = KeywordQuery([Term("graph"), "AND", Term("molecul", prefix=True)])
    assert [pk_of[pk] for pk, _ in search.keyword_search(both, (1, 1, 1))] == ["2601.00001"]
    rows = search.search_rows(list(pk_of))
    assert {r["id"] for r in rows.values()} == set(pk_of.values())
    assert search.pk_of("2601.99999") is None


def test_prefix_terms_weights_and_the_newest_window(backend: Store) -> None:
    search = backend.search
    assert search.prefix_terms("graph", 10) == {"graph": 3}
    assert set(search.prefix_terms("mo", 10)) == {"model", "molecul"}
    assert len(search.prefix_terms("m", 1)) == 1 and search.prefix_terms("zzz", 10) == {}
    pk_of = {search.pk_of(p.id): p.id for p in PAPERS}
    one = dict(search.keyword_search(KeywordQuery([Term("graph"), Term("molecul")]), (1, 1, 1)))
    two = dict(search.keyword_search(
        KeywordQuery([Term("graph"), Term("molecul", weight=2)]), (1, 1, 1)))
    assert set(one) == set(two)  # a weight changes the score, not what matches
    first = search.pk_of("2601.00001")
    assert two[first] > one[first]
    graphs = KeywordQuery([Term("graph")], newest_share=0.5)  # pks 1-4 and the duplicate, 5
    assert [pk_of[pk] for pk, _ in search.keyword_search(graphs, (1, 1, 1))] == ["2601.00003"]
    graphs.newest_share = 1.0
    assert len(search.keyword_search(graphs, (1, 1, 1), SearchFilters(categories=["cs"]))) == 2


def test_a_prefixs_words_are_current_after_any_commit(backend: Store) -> None:
    """A search asks for a prefix's words twice (its plan, its ranking), and SQLite keeps
    them; a new word under the prefix still counts at once, whoever committed it."""
    search = backend.search
    assert search.prefix_terms("graph", 10) == {"graph": 3}
    backend.papers.upsert_papers([prepare_record(record(
        5, "Graphene sheets", "2026-01-14", ["Marie Curie"], ["cond-mat"]))])
    assert search.prefix_terms("graph", 10) == {"graph": 3, "graphen": 1}
    with open_store(backend.location) as other:
        other.papers.upsert_papers([prepare_record(record(
            6, "Graphite and graphs", "2026-01-15", ["Lise Meitner"], ["cond-mat"]))])
    assert search.prefix_terms("graph", 10) == {"graph": 4, "graphen": 1, "graphit": 1}
    found = search.keyword_search(KeywordQuery([Term("graphit", prefix=True)]), (1, 1, 1))
    assert [search.pk_of("2601.00006")] == [pk for pk, _ in found]


def test_a_prefix_is_ranked_as_its_stem_matches(backend: Store) -> None:
    """'molecules*' matches what 'molecul*' matches (the index stems a prefix too), so both
    rank alike: the same papers, the same scores, the same idf beside another word."""
    search = backend.search
    assert search.index_tokens(["molecules"]) == [["molecul"]]
    ranked = [search.keyword_search(KeywordQuery([Term("graph"), Term(prefix, prefix=True)]),
                                    (2.0, 1.0, 0.5)) for prefix in ("molecules", "molecul")]
    assert len(ranked[0]) == 2 and ranked[0] == ranked[1]


def test_a_query_the_index_rejects_is_a_store_query_error(backend: Store) -> None:
    with pytest.raises(StoreQueryError):
        backend.search.keyword_search(KeywordQuery([Term("graph"), "NEAR/x"]), (1, 1, 1))


# ------------------------------------------------------------------ embeddings
def test_embeddings(backend: Store) -> None:
    embeddings = backend.embeddings
    assert not embeddings.has_embedding("2601.00001") and embeddings.embedding_models() == []
    _embed(backend)
    assert embeddings.count_embeddings(MODEL) == 4 and embeddings.embedding_models() == [MODEL]
    ids, matrix = embeddings.embedding_matrix(MODEL)
    assert ids == [p.id for p in PAPERS] and matrix.shape == (4, 8) and matrix.dtype == np.float32
    assert np.allclose(embeddings.get_embedding("2601.00002", MODEL), _vector(1))
    pk = backend.search.pk_of("2601.00003")
    assert embeddings.embedding_state(MODEL)[pk] == "h2"
    found, vectors = embeddings.embedding_vectors(MODEL, [pk, 10**9])
    assert found == [pk] and np.allclose(vectors[0], _vector(2))
    inputs = [row for batch in embeddings.iter_embedding_inputs(MODEL, batch=2) for row in batch]
    assert [(r[0], r[3]) for r in inputs] == [(p.id, f"h{i}") for i, p in enumerate(PAPERS)]


def test_nearest_papers_exact_on_a_small_store(backend: Store) -> None:
    """The k live papers by inner product, best first, under filters; a duplicate's vector is
    never an answer. (8 dimensions: no index covers them, so both backends are exact here.)"""
    _embed(backend)
    backend.embeddings.put_embeddings(MODEL, [("2601.00009", "hd", _vector(0))])
    query = _vector(7)
    pks = {backend.search.pk_of(p.id): i for i, p in enumerate(PAPERS)}
    expected = sorted(((pk, float(_vector(i) @ query)) for pk, i in pks.items()),
                      key=lambda r: -r[1])
    found = backend.embeddings.nearest_papers(MODEL, query, 3)
    assert [pk for pk, _ in found] == [pk for pk, _ in expected[:3]]
    assert np.allclose([s for _, s in found], [s for _, s in expected[:3]], atol=1e-5)
    graphs = backend.embeddings.nearest_papers(MODEL, query, 10, SearchFilters(categories=["cs.LG"]))
    assert sorted(pk for pk, _ in graphs) == sorted(backend.search.pk_of(i) for i in
                                                   ("2601.00001", "2601.00003"))
    assert backend.embeddings.nearest_papers(MODEL, query, 0) == []
    assert backend.embeddings.nearest_papers("other:model", query, 5) == []
    assert backend.embeddings.indexes_vectors() is (backend.location.startswith("postgresql"))


# ------------------------------------------------------------------- summaries
def test_summaries(backend: Store) -> None:
    summaries = backend.summaries
    assert summaries.put_summaries([
        {"paper_id": p.id, "tldr": f"TL;DR {p.id}", "blurb": f"Blurb {p.id}", "writer": "builtin",
         "input_hash": "x"} for p in PAPERS]) == 4
    states = {s["id"]: s for s in summaries.summary_states()}
    assert states["2601.00001"]["summary_hash"] == "x" and not states["2601.00001"]["flagged"]
    assert summaries.flag_summary("2601.00001", "wrong") and not summaries.flag_summary("nope", "x")
    assert summaries.get_summary("2601.00001")["flag_reason"] == "wrong"
    assert summaries.hide_summary("2601.00002", "hidden for a test")
    assert set(summaries.summaries_for(["2601.00001", "2601.00002"])) == {"2601.00001"}
    assert summaries.get_summary("2601.00002")["hidden"]  # still there, not shown
    assert [(s["id"], s["flagged"], s["hidden"]) for s in summaries.summary_states()] == [
        ("2601.00001", 1, 0), ("2601.00002", 0, 1), ("2601.00003", 0, 0), ("2601.00004", 0, 0)]


# ---------------------------------------------------------------------- topics
def test_topics(backend: Store) -> None:
    topics = backend.topics
    assert not topics.has_topics() and topics.latest_topic_build() is None
    ids = _topics(backend)
    assert topics.has_topics() and topics.latest_topic_build()["report"] == {"topics": 2}
    listed = topics.list_topics()
    assert [t["slug"] for t in listed] == ["graphs", "vision", "other"]
    assert listed[0]["size"] == 2 and listed[0]["key_phrases"] == ["graphs", "molecules"]
    assert [t["slug"] for t in topics.list_topics(include_other=False)] == ["graphs", "vision"]
    [section] = topics.list_sections()
    assert section["size"] == 3 and [t["slug"] for t in section["topics"]] == ["graphs", "vision"]
    assert topics.find_section("learning")["label"] == "Learning"
    centroid_ids, centroids, other = topics.topic_centroids()
    assert centroid_ids == [ids["g"], ids["v"]] and centroids.shape == (2, 8) and other == ids["o"]
    assert topics.assigned_paper_ids() == {p.id for p in PAPERS}
    assert topics.topic_sample_titles(ids["g"], 1) == ["Graph neural networks for molecules"]
    assert sorted(topics.topic_assignments())[-1] == ("2601.00004", ids["o"], True)
    assert topics.weekly_topic_counts(topic_id=ids["g"]) == {
        ids["g"]: {"2026-01-05": 1, "2026-01-12": 1}}
    assert topics.topic_counts_between("2026-01-10", "2026-01-20") == {ids["g"]: 1, ids["o"]: 1}
    assert topics.topic_state()["assignments"]["2601.00002"] == ids["v"]


def test_topic_labels_redirects_and_assignment(backend: Store) -> None:
    ids = _topics(backend)
    backend.topics.set_topic_llm_labels([(ids["g"], "Graph learning")])
    topic = backend.topics.find_topic("graphs")
    assert (topic["label"], topic["key_label"]) == ("Graph learning", "Graphs, molecules")
    assert backend.topics.paper_topic("2601.00003")["label"] == "Graph learning"
    assert backend.topics.find_topic("no-such-topic") is None
    assert backend.topics.cached_topic_label("h") == (False, None)
    backend.topics.put_topic_label("h", None, "m")
    assert backend.topics.cached_topic_label("h") == (True, None)
    # A rebuild that merges "vision" into "graphs": the old slug leads to where its papers went.
    backend.topics.replace_topics({
        "method": "test", "n_papers": 4, "sections": [],
        "topics": [{"key": "g", "id": ids["g"], "slug": "graphs", "label": "Graphs",
                    "key_phrases": ["graphs"], "centroid": _vector(1)},
                   {"key": "o", "id": ids["o"], "slug": "other", "label": "Other papers",
                    "key_phrases": [], "is_other": True}],
        "retired": [{"id": ids["v"], "redirect_to": "g", "reason": "merge"}],
        "assignments": [(p.id, "g", 0.5) for p in PAPERS[:3]] + [("2601.00004", "o", 0.1)]})
    moved = backend.topics.find_topic("vision")
    assert moved["slug"] == "graphs" and moved["redirected_from"] == "vision"
    assert moved["redirect_reason"] == "merge"
    assert backend.topics.assign_papers([("2601.00004", ids["g"], 0.6)]) == 1
    assert backend.topics.paper_topic("2601.00004")["slug"] == "graphs"


# ----------------------------------------------------------------------- pages
def test_pages(backend: Store) -> None:
    _topics(backend)
    backend.summaries.put_summaries([{"paper_id": "2601.00001", "tldr": "t", "blurb": "b",
                                      "writer": "builtin", "input_hash": "x"}])
    pages = backend.pages
    assert pages.latest_day() == "2026-01-13" and pages.all_days() == [
        "2026-01-13", "2026-01-12", "2026-01-05"]
    assert pages.day_neighbours("2026-01-12") == ("2026-01-05", "2026-01-13")
    day = pages.day_papers("2026-01-05")
    assert [r["id"] for r in day] == ["2601.00001", "2601.00002"]
    first = day[0]
    assert [a["name"] for a in first["lead_authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert first["summary"]["blurb"] == "b" and first["topic"]["slug"] == "graphs"
    assert pages.day_papers_page("2026-01-05", 1, 1)[0] == 2
    graphs = backend.topics.find_topic("graphs")
    total, rows = pages.topic_papers_page(graphs["id"], 10, 0)
    assert total == 2 and [r["id"] for r in rows] == ["2601.00003", "2601.00001"]
    section = backend.topics.find_section("learning")
    assert len(pages.section_papers_page(section["id"], 10, 0)) == 3
    total, rows = pages.category_papers_page("cs.LG", 10, 0)
    assert total == 2 and rows[0]["id"] == "2601.00003"
    assert dict(pages.category_sizes())["cs.LG"] == 2
    ada = pages.find_author("ada-lovelace")
    assert pages.author_papers_page(ada["id"], 10, 0)[0] == 2
    assert pages.coauthors(ada["id"])[0]["name"] == "Alan Turing"
    assert pages.author_topics(ada["id"])[0]["slug"] == "graphs"
    assert pages.author_categories(ada["id"]) == [{"category": "cs.LG", "papers": 2}]
    assert set(pages.listing_by_ids(["2601.00002", "2601.00009"])) == {"2601.00002"}
    assert pages.sitemap_counts() == {"papers": 4, "authors": 5, "topics": 3}
    assert [key for key, _ in pages.sitemap_slice("papers", 2, 0)] == ["2601.00001", "2601.00002"]
    assert "grace-hopper" in set(pages.authors_with_papers())


def test_a_far_future_day_stored_before_dates_were_checked_heads_no_listing(
        backend: Store) -> None:
    backend.papers.upsert_papers([prepare_record(record(7, "A paper from year 9999",
                                                        "9999-12-31", ["Ada"], ["cs.LG"]))])
    pages = backend.pages
    assert pages.latest_day() == "2026-01-13"
    assert pages.all_days()[0] == "2026-01-13"
    assert pages.day_neighbours("2026-01-13") == ("2026-01-12", None)
    assert pages.day_papers("9999-12-31")  # still stored, and its page still answers


def test_the_store_as_a_whole(backend: Store) -> None:
    assert isinstance(backend, Store) and backend.location
    with open_store(backend.location) as other:
        before = backend.data_version()
        other.papers.upsert_papers([prepare_record(
            record(7, "Another paper from another connection", "2026-01-15", ["Z"], ["cs.AI"]))])
        assert backend.data_version() != before  # what the page cache watches


def test_data_version_moves_for_what_pages_show_not_for_readers(backend: Store) -> None:
    """The page cache keys on data_version: a reader's writes (another worker's, here another
    connection's) keep every anonymous page; a paper, a summary or a topic empties them."""
    with open_store(backend.location) as worker:
        before = backend.data_version()
        ada = worker.readers.add_reader("ada", None, "hash")
        worker.readers.add_session(ada, "token", "csrf", "2099-01-01T00:00:00Z")
        worker.readers.set_reaction(ada, "2601.00001", "up")
        worker.readers.add_follow(ada, "author", "ada-lovelace")
        worker.readers.add_to_collection(ada, "Reading list", "2601.00002")
        worker.readers.mark_shown(ada, ["2601.00003"], "2026-01-14T00:00:00Z")
        assert worker.readers.add_claim(ada, "ada-lovelace")
        assert backend.data_version() == before
        worker.summaries.put_summaries([{"paper_id": "2601.00001", "tldr": "TL;DR",
                                         "blurb": "Blurb", "writer": "builtin",
                                         "input_hash": "x"}])
        summarized = backend.data_version()
        assert summarized != before
        worker.papers.upsert_papers([prepare_record(
            record(8, "A paper announced later", "2026-01-14", ["Ada Lovelace"], ["cs.LG"]))])
        assert backend.data_version() != summarized
        papered = backend.data_version()
        worker.papers.upsert_papers([prepare_record(  # the same paper under new authors
            record(8, "A paper announced later", "2026-01-14", ["Ada Lovelace", "Bo"], ["cs.LG"]))])
        assert backend.data_version() != papered
        authored = backend.data_version()
        _topics(worker)
        assert backend.data_version() != authored
    own = backend.data_version()
    backend.readers.set_reaction(ada, "2601.00002", "down")  # this connection's own write
    assert backend.data_version() == own


def test_claims_and_saved_papers_are_each_readers_own(backend: Store) -> None:
    ada = backend.readers.add_reader("ada", None, "hash")
    bob = backend.readers.add_reader("bob", None, "hash")
    version = backend.readers.get_reader(ada)["signals_version"]
    assert backend.readers.add_claim(ada, "ada-lovelace")
    assert not backend.readers.add_claim(ada, "ada-lovelace")  # claimed already
    assert backend.readers.get_reader(ada)["signals_version"] > version
    assert [c["author_slug"] for c in backend.readers.claims_of(ada)] == ["ada-lovelace"]
    assert backend.readers.claims_of(bob) == []
    assert not backend.readers.remove_claim(bob, "ada-lovelace")
    backend.readers.add_to_collection(ada, "To read", PAPERS[0].id)
    backend.readers.add_to_collection(ada, "Best", PAPERS[0].id)
    backend.readers.add_to_collection(bob, "Mine", PAPERS[1].id)
    assert backend.readers.saved_in(ada, [PAPERS[0].id, PAPERS[1].id]) == {
        PAPERS[0].id: ["Best", "To read"]}
    assert backend.readers.saved_in(ada, []) == {}
    assert backend.readers.remove_claim(ada, "ada-lovelace")
    assert backend.readers.claims_of(ada) == []
    assert backend.readers.remove_reader(ada)
