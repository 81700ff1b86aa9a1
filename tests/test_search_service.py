"""Semantic and hybrid search, the nearest-neighbour index, similar papers, the CLI and the eval command."""

from __future__ import annotations

import gzip
import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.search import Embed, ann, search, similar_papers
from papersift.search.ann import SavedVectors, VectorIndex, load_index, update_index
from papersift.search.embed import LocalEmbedder
from papersift.search.neighbours import (
    LocalNeighbours,
    StoreNeighbours,
    open_neighbours,
    refresh_local_index,
)
from papersift.settings import SETTINGS, Settings, SettingsError
from papersift.store import Store, add_records, open_store
from tests.store_sql import run_sql
from tests.test_search_embed import local_embedder, model_root, paper, search_settings  # noqa: F401

# Every test that uses the store runs on each backend (tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")

PAPERS = [
    ("2503.00001", "Training language agents from natural language critiques",
     "Instead of scalar rewards, the agent learns from written feedback that explains its "
     "mistakes.", ["cs.CL"], "2025-03-20"),
    ("2503.00002", "Protein structure prediction with transformers",
     "Amino acid sequences are mapped to three-dimensional folds.", ["q-bio.BM"], "2025-04-02"),
    ("2503.00003", "Image denoising with diffusion models",
     "A diffusion prior removes sensor noise from photographs.", ["cs.CV"], "2025-05-11"),
    ("2503.00004", "Advantage collapse in GRPO",
     "Group relative policy optimization loses its learning signal when all samples in a group "
     "share the same reward.", ["cs.LG"], "2026-01-05"),
    ("2503.00005", "Speech recognition for low-resource languages",
     "Self-supervised audio encoders transcribe speech in languages with little labelled data.",
     ["cs.CL", "eess.AS"], "2026-02-14"),
]


@pytest.fixture
def corpus(store: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> Store:  # noqa: F811
    add_records(store, [paper(pid, t, a, ["Ada Lovelace"], c, d) for pid, t, a, c, d in PAPERS])
    Embed(embedder=local_embedder).run(store, search_settings)
    return store


def ids(results) -> list[str]:  # noqa: ANN001
    return [hit.paper_id for hit in results.hits]


@pytest.mark.slow
def test_semantic_search_finds_papers_by_meaning(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    query = "teaching an agent with written criticism rather than numeric scores"
    results = search(corpus, search_settings, query, mode="semantic", embedder=local_embedder)
    assert ids(results)[0] == "2503.00001"
    assert results.hits[0].semantic_score > results.hits[-1].semantic_score
    # The same query by keywords alone misses nothing it should not, but ranks by words.
    hybrid = search(corpus, search_settings, query, embedder=local_embedder)
    assert ids(hybrid)[0] == "2503.00001"
    assert ids(search(corpus, search_settings, "folding proteins", embedder=local_embedder))[0] == (
        "2503.00002")


@pytest.mark.slow
def test_filters_apply_to_semantic_and_hybrid(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    for mode in ("semantic", "hybrid"):
        results = search(corpus, search_settings, "learning from feedback", mode=mode,
                         category="cs.CL", embedder=local_embedder)
        assert set(ids(results)) <= {"2503.00001", "2503.00005"} and ids(results)
        results = search(corpus, search_settings, "learning year:2026", mode=mode,
                         embedder=local_embedder)
        assert set(ids(results)) <= {"2503.00004", "2503.00005"} and ids(results)


@pytest.mark.slow
def test_bad_input_in_hybrid_mode(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    def run(raw: str):  # noqa: ANN202
        return search(corpus, search_settings, raw, embedder=local_embedder)

    assert run("").message == "type some words to search for"
    assert run("protein " * 2000).hits  # 16,000 characters: cut, still answered
    assert ids(run("pro\x00tein\x1b fold\u200bing"))[:1] == ["2503.00002"]
    assert run("'; DROP TABLE papers; --").message in (None, "no papers match")
    assert run('"unbalanced AND (').notes
    assert run("Распознавание речи").hits  # semantic side still answers
    assert run("蛋白质结构预测").hits
    assert corpus.papers.count_papers() == 5


def test_hybrid_scores_a_paper_without_a_vector_by_its_words(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    """A paper added after `embed` has no vector yet: hybrid search still finds it by its
    words, with no cosine (its semantic part is 0), beside papers scored on both sides."""
    add_records(corpus, [paper("2503.00006", "Advantage estimation in GRPO without a critic",
                               "Group relative baselines replace the value network.",
                               ["Ada Lovelace"], ["cs.LG"], "2026-03-01")])
    results = search(corpus, search_settings, "GRPO advantage", embedder=local_embedder)
    hits = {hit.paper_id: hit for hit in results.hits}
    late, known = hits["2503.00006"], hits["2503.00004"]
    assert late.semantic_score is None and late.keyword_score > 0
    assert known.semantic_score is not None and known.keyword_score > 0
    best = max(hit.keyword_score or 0.0 for hit in results.hits)
    assert late.score == pytest.approx(0.4 * late.keyword_score / best, abs=1e-3)
    assert all(hit.semantic_score is not None for hit in results.hits if hit is not late)


@pytest.mark.slow
def test_hybrid_search_embeds_the_query_while_the_keyword_side_runs(
        corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The query's vector is computed on the searching thread while a helper thread ranks
    the keywords and reads the keyword candidates' vectors: an embedder that waits for the
    keyword ranking to begin, or for those vectors to be read, still answers (run one after
    the other, it would wait out its timeout)."""
    from papersift.search import neighbours

    ranking, reading, seen = threading.Event(), threading.Event(), {}
    keyword_search = corpus.search.keyword_search

    def spied(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen["ranked on"] = threading.current_thread()
        ranking.set()
        return keyword_search(*args, **kwargs)

    def reader(vectors):  # noqa: ANN001, ANN202
        def read(self, pks):  # noqa: ANN001, ANN202
            seen.setdefault("read", []).append(list(pks))
            reading.set()
            return vectors(self, pks)
        return read

    class Waiting:
        model_id, dim = local_embedder.model_id, local_embedder.dim

        def __init__(self, event: threading.Event) -> None:
            self.event = event

        def embed(self, texts: list[str]) -> np.ndarray:
            seen["thread"] = threading.current_thread()
            seen["overlapped"] = self.event.wait(timeout=10)
            return local_embedder.embed(texts)

    monkeypatch.setattr(corpus.search, "keyword_search", spied)
    for kind in (neighbours.LocalNeighbours, neighbours.StoreNeighbours):
        monkeypatch.setattr(kind, "vectors", reader(kind.vectors))
    for event in (ranking, reading):
        event.clear()
        seen.clear()
        results = search(corpus, search_settings, "learning from written feedback",
                         embedder=Waiting(event))
        assert seen["overlapped"] and seen["thread"] is threading.current_thread()
        assert seen["ranked on"] is not threading.current_thread()
        assert ids(results)[0] == "2503.00001" and results.hits[0].semantic_score > 0
        assert "2503.00001" in [corpus.search.search_rows(seen["read"][0])[pk]["id"]
                                for pk in seen["read"][0]]  # the keyword side's, first
    # Keyword search ranks on the searching thread and computes no vector; a filters-only
    # query computes none either.
    seen.clear()
    search(corpus, search_settings, "feedback", mode="keyword", embedder=Waiting(ranking))
    assert seen["ranked on"] is threading.current_thread()
    search(corpus, search_settings, "cat:cs.CL", embedder=Waiting(ranking))
    assert "thread" not in seen


def test_the_store_side_runs_off_the_core_the_search_started_on(
        corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Linux would wake the helper on the searching thread's core, beside the model's run:
    it is kept off that core while it works, and free to run anywhere after."""
    from papersift.search import cores, service

    if cores.current_core() is None or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs sched_getcpu and two cores")
    started_on, seen, working = [], {}, threading.Event()
    store_side = service._store_side

    def spied(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        seen.update(allowed=os.sched_getaffinity(0), core=cores.current_core(),
                    thread=threading.get_native_id())
        working.set()
        return store_side(*args, **kwargs)

    class Waiting:  # the vector waits for the helper to start: it is not called off
        model_id, dim = local_embedder.model_id, local_embedder.dim

        def embed(self, texts: list[str]) -> np.ndarray:
            assert working.wait(timeout=10)
            return local_embedder.embed(texts)

    monkeypatch.setattr(service, "_store_side", spied)
    monkeypatch.setattr(service, "current_core",
                        lambda: started_on.append(cores.current_core()) or started_on[-1])
    results = search(corpus, search_settings, "learning from written feedback",
                     embedder=Waiting())
    assert ids(results)[0] == "2503.00001"
    assert seen["thread"] != threading.get_native_id()
    assert started_on[0] not in seen["allowed"] and seen["core"] != started_on[0]
    assert seen["allowed"] == os.sched_getaffinity(0) - {started_on[0]}
    assert os.sched_getaffinity(seen["thread"]) == os.sched_getaffinity(0)  # free again
    assert cores.off_core(None, os.sched_getaffinity, 0) == os.sched_getaffinity(0)


def test_a_system_that_will_not_move_threads_still_searches(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """Where a sandbox refuses to set a thread's cores (EPERM), the work runs once, as it is."""
    from papersift.search import cores

    def refused(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    calls = []
    monkeypatch.setattr(os, "sched_setaffinity", refused)
    assert cores.off_core(0, lambda x: calls.append(x) or x * 2, 21) == 42 and calls == [21]


@pytest.mark.slow
def test_a_helper_not_started_by_the_time_the_vector_is_there_is_called_off(
        corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With every helper thread busy (as a core still waking from idle), the store's side is
    not waited for: the searching thread calls it off and does it itself, with the same
    results."""
    from papersift.search import service

    expected = search(corpus, search_settings, "learning from written feedback",
                      embedder=local_embedder)
    sides: list[threading.Thread] = []
    store_side = service._store_side

    def spied(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        sides.append(threading.current_thread())
        return store_side(*args, **kwargs)

    monkeypatch.setattr(service, "_store_side", spied)
    release = threading.Event()
    busy = [service._helpers().submit(release.wait, 30)
            for _ in range(service.STORE_SIDE_THREADS)]
    try:
        found = search(corpus, search_settings, "learning from written feedback",
                       embedder=local_embedder)
    finally:
        release.set()
        for future in busy:
            future.result(timeout=30)
    assert sides == [threading.current_thread()]
    assert [(h.paper_id, h.score, h.snippet_html) for h in found.hits] == [
        (h.paper_id, h.score, h.snippet_html) for h in expected.hits]


def test_a_store_without_vectors_yet_answers_by_keywords_and_says_why(
        store: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    """Before `papersift embed`: hybrid search gives the keyword ranking with a note (the
    query's vector, computed beside the store's side, is not walked), semantic search says
    what to run, and both backends agree."""
    add_records(store, [paper(pid, t, a, ["Ada Lovelace"], c, d) for pid, t, a, c, d in PAPERS])
    hybrid = search(store, search_settings, "written feedback", embedder=local_embedder)
    keyword = search(store, search_settings, "written feedback", mode="keyword",
                     embedder=local_embedder)
    assert ids(hybrid) == ids(keyword) == ["2503.00001"]
    assert [h.score for h in hybrid.hits] == [h.score for h in keyword.hits]
    assert hybrid.hits[0].semantic_score is None
    assert "semantic search needs embeddings (`papersift embed`); keyword only" in hybrid.notes
    semantic = search(store, search_settings, "written feedback", mode="semantic",
                      embedder=local_embedder)
    assert semantic.hits == [] and semantic.message == (
        "semantic search needs embeddings: run `papersift embed`")


@pytest.mark.slow
def test_snippets_highlight_semantic_hits_safely(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    results = search(corpus, search_settings, "diffusion <b>noise</b>", embedder=local_embedder)
    hit = next(h for h in results.hits if h.paper_id == "2503.00003")
    assert "<mark>diffusion</mark>" in hit.snippet_html.lower() or "<mark>Diffusion</mark>" in hit.title_html
    stripped = hit.snippet_html.replace("<mark>", "").replace("</mark>", "")
    assert "<" not in stripped and "<" not in hit.title_html.replace("<mark>", "").replace("</mark>", "")


@pytest.mark.slow
def test_similar_papers_and_index_updates(corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    near = similar_papers(corpus, search_settings, "2503.00004", limit=3, embedder=local_embedder)
    assert len(near) == 3 and "2503.00004" not in [h.paper_id for h in near]
    assert similar_papers(corpus, search_settings, "no-such-paper", embedder=local_embedder) == []

    model = local_embedder.model_id
    in_store = corpus.embeddings.indexes_vectors()
    if in_store:  # PostgreSQL: its HNSW index answers; no local file is built
        assert load_index(search_settings, model) is None
    else:
        assert isinstance(load_index(search_settings, model), VectorIndex)
    assert open_neighbours(corpus, search_settings, model).count == 5
    # A duplicate disappears from the index; a new paper appears, without a rebuild.
    run_sql(corpus, "UPDATE papers SET duplicate_of = '2503.00001' WHERE id = '2503.00005'")
    add_records(corpus, [paper("2503.00006", "Graph neural networks for molecules",
                                "Message passing predicts molecular properties.")])
    report = Embed(embedder=local_embedder).run(corpus, search_settings)
    if in_store:
        assert report.details["index"] == {"model": model, "in_store": True,
                                           "dropped_for_backfill": False, "built_seconds": None}
    else:
        assert report.details["index"]["added"] == 1 and report.details["index"]["removed"] == 1
        assert update_index(corpus, search_settings, model)["added"] == 0
    neighbours = open_neighbours(corpus, search_settings, model)
    assert neighbours.count in (5, 6)  # the store counts the duplicate's stored vector
    found = [pk for pk, _ in neighbours.search(local_embedder.embed(["molecules"])[0], 10)]
    assert len(found) == 5
    assert corpus.search.pk_of("2503.00006") in found and corpus.search.pk_of("2503.00005") not in found


@pytest.mark.slow
def test_vector_search_local_walks_this_machines_file_on_either_backend(
        corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    """`vector_search = local`: the embed stage keeps a hnswlib file of the store's vectors
    (PostgreSQL's too, beside its own HNSW index), and search walks it, finding what the
    store's index finds. A value that is neither setting is an error that names it."""
    local = search_settings.replace(vector_search="local")
    model = local_embedder.model_id
    in_store = corpus.embeddings.indexes_vectors()
    report = Embed(embedder=local_embedder).run(corpus, local)
    assert report.details["local_index" if in_store else "index"]["size"] == 5
    if in_store:  # the store's own index is still kept (other machines may walk it)
        assert report.details["index"]["in_store"] is True
    assert isinstance(open_neighbours(corpus, local, model), LocalNeighbours)
    assert isinstance(open_neighbours(corpus, search_settings, model),
                      StoreNeighbours if in_store else LocalNeighbours)
    for query in ("teaching an agent with written criticism", "folding proteins"):
        for mode in ("semantic", "hybrid"):
            by_store = search(corpus, search_settings, query, mode=mode, embedder=local_embedder)
            by_file = search(corpus, local, query, mode=mode, embedder=local_embedder)
            assert ids(by_file) == ids(by_store) and len(ids(by_file)) >= 3
    with pytest.raises(SettingsError, match="vector_search is 'nearby'"):
        open_neighbours(corpus, search_settings.replace(vector_search="nearby"), model)


@pytest.mark.slow
def test_auto_walks_the_local_file_up_to_local_index_max_vectors_then_the_stores_index(
        corpus: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    """`vector_search = auto`, the default: PostgreSQL's search walks this machine's file
    (kept by the embed stage) while the store holds at most `local_index_max_vectors` of the
    model's vectors, and its own HNSW index above; SQLite always walks its file. Either way
    search finds the same papers."""
    assert next(s for s in SETTINGS if s.name == "vector_search").default == "auto"
    model = local_embedder.model_id
    in_store = corpus.embeddings.indexes_vectors()
    held = corpus.embeddings.count_embeddings(model)
    below = search_settings.replace(vector_search="auto", local_index_max_vectors=held)
    above = below.replace(local_index_max_vectors=held - 1)
    if in_store:  # above the limit the embed stage leaves this machine's file alone
        assert "local_index" not in Embed(embedder=local_embedder).run(corpus, above).details
        assert load_index(above, model) is None
    report = Embed(embedder=local_embedder).run(corpus, below)
    assert report.details["local_index" if in_store else "index"]["size"] == 5
    assert isinstance(open_neighbours(corpus, below, model), LocalNeighbours)
    assert isinstance(open_neighbours(corpus, above, model),
                      StoreNeighbours if in_store else LocalNeighbours)
    for query in ("teaching an agent with written criticism", "folding proteins"):
        by_file = search(corpus, below, query, embedder=local_embedder)
        assert ids(by_file) == ids(search(corpus, above, query, embedder=local_embedder))
        assert len(ids(by_file)) >= 3


@pytest.mark.slow
def test_serve_builds_this_machines_file_first_by_default_on_postgresql(
        corpus: Store, search_settings: Settings,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before serving, `serve` brings this machine's file up to date with the store's vectors
    when search walks it: by default (auto) on a small PostgreSQL store, which `embed` under
    `vector_search = store` left without one. SQLite's file is `embed`'s alone."""
    from papersift.cli import common, web
    from papersift.search.embed import default_embedder

    auto = search_settings.replace(vector_search="auto", local_index_refresh=0.0)
    monkeypatch.setitem(common._state, "settings", auto)
    model = default_embedder(auto).model_id
    in_store = corpus.embeddings.indexes_vectors()
    before = load_index(auto, model)
    assert (before is None) == in_store
    web._keep_local_index(auto)
    after = load_index(auto, model)
    assert after is not None and after.count == 5
    if not in_store:
        assert after.meta == before.meta  # untouched


@pytest.mark.slow
def test_a_backfill_builds_the_store_index_once_and_the_next_run_mends_a_stopped_one(
        store: Store, search_settings: Settings, local_embedder: LocalEmbedder) -> None:  # noqa: F811
    """`embed --backfill` drops PostgreSQL's HNSW index, writes, and builds it once; a run
    stopped before the build leaves it missing, and the next run (any embed) builds it.
    Search answers the same all along. SQLite keeps no index in the store: nothing to drop."""
    add_records(store, [paper(pid, t, a, ["Ada Lovelace"], c, d) for pid, t, a, c, d in PAPERS])
    index = Embed(embedder=local_embedder, backfill=True).run(store, search_settings).details["index"]
    in_store = store.embeddings.indexes_vectors()
    if not in_store:
        assert "dropped_for_backfill" not in index and index["added"] == 5
        assert store.embeddings.drop_vector_index() is False
        assert store.embeddings.build_vector_index(64, 1) is None
        return
    assert index["dropped_for_backfill"] is True and index["built_seconds"] >= 0
    query = local_embedder.embed(["written feedback for agents"])[0]
    indexed = store.embeddings.nearest_papers(local_embedder.model_id, query, 3)
    assert store.embeddings.drop_vector_index() is True  # a backfill stopped before its build
    assert store.embeddings.drop_vector_index() is False
    assert store.embeddings.nearest_papers(local_embedder.model_id, query, 3) == indexed
    mended = Embed(embedder=local_embedder).run(store, search_settings)
    assert mended.counts["embedded"] == 0 and mended.details["index"]["built_seconds"] >= 0
    again = Embed(embedder=local_embedder, backfill=True).run(store, search_settings)
    assert again.details["index"] == {"model": local_embedder.model_id, "in_store": True,
                                      "dropped_for_backfill": False, "built_seconds": None}
    assert store.embeddings.nearest_papers(local_embedder.model_id, query, 3) == indexed
    assert [h.paper_id for h in search(store, search_settings, "written feedback for agents",
                                       mode="semantic", embedder=local_embedder).hits][:1] \
        == ["2503.00001"]


def test_refresh_local_index_keeps_a_machines_file_current_with_the_stores_vectors(
        settings: Settings, store: Store) -> None:
    """`vector_search = local` on a store with an index of its own: refresh_local_index builds
    this machine's file, does nothing while nothing commits, and adds what another machine
    wrote; two updates at once take turns. A store without an index of its own (SQLite)
    leaves it to `embed`."""
    import threading

    local = settings.replace(vector_search="local")
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    add_records(store, [paper(f"2504.{i:05d}", f"t{i}", f"a{i}") for i in range(40)])
    store.embeddings.put_embeddings("test:model", [(f"2504.{i:05d}", "h", vectors[i])
                                                   for i in range(30)])
    version, report = refresh_local_index(store, local, "test:model")
    if not store.embeddings.indexes_vectors():
        assert report is None and load_index(local, "test:model") is None
        return
    assert report is not None and report["added"] == 30
    assert refresh_local_index(store, local, "test:model", version) == (version, None)
    walk_store = settings.replace(vector_search="store")
    assert refresh_local_index(store, walk_store, "test:model")[1] is None  # the HNSW
    store.embeddings.put_embeddings("test:model", [(f"2504.{i:05d}", "h", vectors[i])
                                                   for i in range(30, 40)])
    reports: list[dict] = []

    def another_worker() -> None:
        with open_store(local) as own:
            reports.append(refresh_local_index(own, local, "test:model", version)[1])

    threads = [threading.Thread(target=another_worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r["added"] for r in reports) == [0, 10]  # one after the other
    index = load_index(local, "test:model")
    assert index.count == 40
    assert index.search(vectors[35], 1)[0][0] == store.search.pk_of("2504.00035")


def test_exact_and_graph_search_agree(tmp_path: Path, settings: Settings, store: Store) -> None:
    """Above EXACT_MAX the graph answers; below, a dot product. Both must find the same neighbours."""
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    add_records(store, [paper(f"2504.{i:05d}", f"t{i}", f"a{i}") for i in range(300)])
    store.embeddings.put_embeddings("test:model", [(f"2504.{i:05d}", "h", vectors[i]) for i in range(300)])
    update_index(store, settings, "test:model")
    index = VectorIndex(settings.paths.vector_index("test:model"))
    assert index._saved is not None  # vectors read from the file, not through hnswlib
    exact = index.search(vectors[7], 10)
    index._dense = None  # force the graph
    graph = index.search(vectors[7], 10)
    assert [pk for pk, _ in exact][:5] == [pk for pk, _ in graph][:5]
    assert exact[0][0] == store.search.pk_of("2504.00007") and exact[0][1] == pytest.approx(1.0, abs=1e-5)
    allowed = {store.search.pk_of(f"2504.{i:05d}") for i in range(0, 300, 3)}
    assert all(pk in allowed for pk, _ in index.search(vectors[7], 10, allowed))


def test_vectors_are_read_from_the_saved_file_as_hnswlib_holds_them(tmp_path: Path) -> None:
    """SavedVectors reads hnswlib's file in place; a changed and a deleted then revived
    vector read as hnswlib has them, and a file of another layout is not read."""
    import hnswlib

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(500, 24)).astype(np.float32)
    index = hnswlib.Index(space="ip", dim=24)
    index.init_index(max_elements=600, M=8, ef_construction=50, random_seed=1)
    labels = np.arange(1000, 1500, dtype=np.int64)
    index.add_items(vectors, labels)
    index.add_items(vectors[:1] * 2, labels[7:8])  # a changed vector, same label
    index.mark_deleted(1009)
    index.unmark_deleted(1009)
    index.mark_deleted(1011)  # deleted for good: in the file, never asked
    path = tmp_path / "hnsw.bin"
    index.save_index(str(path))
    loaded = hnswlib.Index(space="ip", dim=24)
    loaded.load_index(str(path))
    saved = SavedVectors.open(path, loaded, 24, labels[labels != 1011])
    assert saved is not None
    asked = labels[[7, 9, 499, 0, 250]]
    assert np.array_equal(saved.get(asked), loaded.get_items(asked, return_type="numpy"))
    assert np.array_equal(saved.get(labels[7:8])[0], vectors[0] * 2)
    path.write_bytes(path.read_bytes()[:5000])  # cut short: not hnswlib's whole file
    assert SavedVectors.open(path, loaded, 24, labels) is None


@pytest.mark.slow
def test_cli_embed_search_and_eval(tmp_path: Path, search_settings: Settings) -> None:  # noqa: F811
    runner = CliRunner()
    data = tmp_path / "papers.jsonl"
    data.write_text("\n".join(json.dumps({
        "id": pid, "title": t, "abstract": a, "authors": ["Ada Lovelace"], "categories": c,
        "announced": d}) for pid, t, a, c, d in PAPERS) + "\n")
    base = ["--data-dir", str(search_settings.data_path)]
    assert runner.invoke(app, [*base, "ingest", f"file:{data}"]).exit_code == 0
    result = runner.invoke(app, [*base, "embed", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["embedded"] == 5
    result = runner.invoke(app, [*base, "search", "protein folding", "--json", "--limit", "2"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["hits"][0]["paper_id"] == "2503.00002" and len(found["hits"]) == 2
    result = runner.invoke(app, [*base, "search", "x", "--mode", "fuzzy"])
    assert result.exit_code == 2

    corpus = tmp_path / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt") as handle:
        for pid, t, a, _, _ in PAPERS:
            handle.write(json.dumps({"_id": pid, "title": t, "text": a}) + "\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "protein folds"}) + "\n"
                       + json.dumps({"_id": "q2", "text": "speech in rare languages"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\t2503.00002\t1\nq2\t2503.00005\t2\n")
    before = sorted(p.name for p in search_settings.data_path.iterdir())
    result = runner.invoke(app, [*base, "eval", "search", "--corpus", str(corpus), "--queries",
                                 str(queries), "--qrels", str(qrels), "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["config"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"keyword", "semantic", "rrf", "hybrid"}
    assert rows["hybrid"]["ndcg@10"] == pytest.approx(1.0) and rows["hybrid"]["queries"] == 2
    assert sorted(p.name for p in search_settings.data_path.iterdir()) == before  # not the user's
    result = runner.invoke(app, [*base, "eval", "search", "--corpus", str(tmp_path / "nope"),
                                 "--queries", str(queries), "--qrels", str(qrels)])
    assert result.exit_code == 2 and "not found" in result.output


def test_dot_takes_one_vector_or_several() -> None:
    # The feed multiplies candidates by every liked paper at once (a matrix), search by one
    # query vector; both go through ann.dot, small or large.
    rng = np.random.default_rng(3)
    for rows in (10, ann.SMALL_PRODUCT + 1):
        matrix = rng.standard_normal((rows, 8)).astype(np.float32)
        vector, vectors = matrix[0], matrix[:3].T
        assert np.allclose(ann.dot(matrix, vector), matrix @ vector, atol=1e-5)
        assert np.allclose(ann.dot(matrix, vectors), matrix @ vectors, atol=1e-5)
