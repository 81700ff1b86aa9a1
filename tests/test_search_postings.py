"""papersift's own keyword postings rank as each backend's index does (FTS5, PostgreSQL's tsvector), through a build, a tail and papers added since, on real papers."""

from __future__ import annotations

import functools
import gzip
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.ingest.stage import Ingest
from papersift.search.keyword import parse_query, plan_keywords
from papersift.search.keywords_stage import Keywords
from papersift.settings import Settings, load_settings
from papersift.store import KeywordQuery, SearchFilters, Store, StoreError, open_store, postings
from papersift.store.postgres.postings import LENGTH
from papersift.store.postings import Postings, best_first, bm25, idf
from papersift.store.sqlite.postings import averages
from tests.conftest import shared_file
from tests.store_sql import run_sql

WEIGHTS = (2.0, 1.0, 0.5)  # search's field weights (FusionParams)


def real_rows(count: int, skip: int = 0) -> list[dict]:
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in itertools.islice(handle, skip, skip + count)]


def ingest(store: Store, settings: Settings, rows: list[dict], path: Path) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report = Ingest([f"file:{path}"]).run(store, settings)
    assert report.ok, report


@pytest.fixture(params=["sqlite", "postgresql"])
def twins(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, Store, Settings]:
    """Two stores of the same 2,500 real papers on one backend: the first will keep
    postings, the second ranks in the backend's own index alone (the reference)."""
    settings = load_settings(data_dir=str(tmp_path / "a"), keyword_postings_min_papers=0)
    if request.param == "sqlite":
        locations = [str(tmp_path / name / "papersift.db") for name in ("a", "b")]
    else:
        server = request.getfixturevalue("postgres_server")
        names = [server.new_database() for _ in range(2)]
        request.addfinalizer(lambda: [server.drop_database(name) for name in names])
        locations = [server.url(name) for name in names]
    own, plain = (open_store(location) for location in locations)
    rows = real_rows(2500)
    for store in (own, plain):
        ingest(store, settings, rows, tmp_path / "first.jsonl")
    yield own, plain, settings
    own.close()
    plain.close()


def average_length(store: Store) -> float:
    """Every paper's length averaged as the backend's index counts it."""
    if store.location.startswith("postgresql"):
        return float(run_sql(store, f"SELECT avg{LENGTH} FROM papers p")[0][0])
    rows, tokens = averages(store.conn)  # type: ignore[attr-defined]
    return tokens / rows


def tolerance(store: Store) -> float:
    """PostgreSQL's ranking takes each word's frequency from ts_rank_cd as a float4."""
    return 1e-6 if store.location.startswith("postgresql") else 1e-9


@functools.cache
def query_texts() -> tuple[str, ...]:
    """Titles and abstracts of papers not in the stores (long ones repeat words, so weights
    > 1 occur), one-word queries and prefixes (the postings rank those too)."""
    return (*(r["title"] for r in real_rows(80, skip=5000)),
            *(r["abstract"][:600] for r in real_rows(20, skip=5100)),
            "learning", "diffusion", "transformer", "graph", "quantum", "diffus*", "transform*",
            "quant*")


def queries(store: Store) -> list[KeywordQuery]:
    """The query texts planned as search plans them, on the store's current counts."""
    planned = [plan_keywords(store.search, parse_query(text)).query for text in query_texts()]
    return [q for q in planned if q is not None]


def same(mine: list[tuple[int, float]], theirs: list[tuple[int, float]], label: object,
         rel: float = 1e-9) -> None:
    """The same papers with the same scores, up to the last score (where ties may be cut
    differently)."""
    assert len(mine) == len(theirs), label
    if not theirs:
        return
    found = dict(mine)
    floor = theirs[-1][1]
    for pk, score in theirs:
        if score > floor * (1 + 10 * rel) + 1e-9:
            assert pk in found and found[pk] == pytest.approx(score, rel=rel), (label, pk)
    assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=rel), label


def ranking_statements(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements one ranking on the postings sends to PostgreSQL."""
    import psycopg

    sent: list[str] = []
    execute = psycopg.Cursor.execute
    with monkeypatch.context() as patch:
        patch.setattr(psycopg.Cursor, "execute", lambda self, sql, *a, **k:
                      sent.append(str(sql)) or execute(self, sql, *a, **k))
        found = store.search._postings.rank(  # type: ignore[attr-defined]
            [["learn"], ["graph"]], WEIGHTS, 10, 0, lambda after: [],
            lambda lists, after: ([1.0, 1.0], 100.0))
    assert found and len(found) == 10
    return sent


def assert_same_ranking(own: Store, plain: Store, limit: int = 50) -> int:
    """Each query's best `limit` are the same on both stores; returns the queries compared."""
    compared = 0
    for query in queries(plain):
        theirs = plain.search.keyword_search(query, WEIGHTS, None, limit)
        same(own.search.keyword_search(query, WEIGHTS, None, limit), theirs, query,
             tolerance(own))
        compared += bool(theirs)
    return compared


@pytest.mark.slow
def test_postings_rank_as_fts5_through_builds_tails_and_new_papers(
        twins: tuple[Store, Store, Settings], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own, plain, settings = twins
    ranked = []  # the postings' rankings, to know the comparisons below compare them

    def counted(*args: object, **kwargs: object) -> object:
        ranked.append(1)
        return bm25(*args, **kwargs)

    monkeypatch.setattr(postings, "bm25", counted)  # both backends rank in store.postings
    before = Keywords().run(own, settings)
    assert before.counts["built"] == 2500 and before.details["build"] == 1
    assert own.search.keyword_postings_status()["built"]
    assert plain.search.keyword_postings_status() == {
        "built": False, "papers": 0, "tail": 0, "behind": plain.papers.count_papers()}
    assert assert_same_ranking(own, plain) >= 90
    assert len(ranked) >= 90
    # A prefix ranks on its words' lists, summed, on both backends (as FTS5 and tsquery do).
    prefix = plan_keywords(plain.search, parse_query("quant*")).query
    assert len(plain.search.prefix_terms("quant", 10)) > 1
    before_prefix = len(ranked)
    assert own.search.keyword_search(prefix, WEIGHTS) and len(ranked) == before_prefix + 1
    # The build keeps each paper's length, and so the average that ranking needs: reading it
    # from every paper cost each process's first query 0.74 s at a million on PostgreSQL.
    assert own.search._postings.average_length() == pytest.approx(average_length(plain))

    # Papers added since the build are ranked by FTS5 until the stage adds them to the tail.
    added = real_rows(300, skip=2500)
    # ... and papers whose text changed (a new version), whose built postings are stale.
    changed = [dict(r, abstract=r["abstract"] + " A graph diffusion transformer for quantum"
                    " learning, and more learning.", version=(r.get("version") or 1) + 1)
               for r in real_rows(25, skip=100)]
    for store in (own, plain):
        ingest(store, settings, added, tmp_path / "added.jsonl")
    assert assert_same_ranking(own, plain) >= 90
    for store in (own, plain):
        ingest(store, settings, changed, tmp_path / "changed.jsonl")
    assert own.search.keyword_postings_status()["behind"] == 300 + 25
    tail = Keywords().run(own, settings.replace(keyword_postings_rebuild_share=0.5))
    assert (tail.counts["added"], tail.counts["changed"], tail.counts["tail"]) == (300, 25, 325)
    assert "built" not in tail.counts
    if own.location.startswith("postgresql"):
        # One statement after the key, and no transaction, though no cache holds this tail's
        # changed papers yet: they come with the state, the lists and the tail (five round
        # trips before, BEGIN and COMMIT among them), from a function the server plans once.
        sent = ranking_statements(own, monkeypatch)
        assert len(sent) == 2 and "data_version" in sent[0] and "postings_read" in sent[1]
        # Again: the store has not moved and the lists are held, so the key is all it reads.
        assert ["postings_read" in sql for sql in ranking_statements(own, monkeypatch)] == [False]
    assert assert_same_ranking(own, plain) >= 90

    # Duplicates are left out, as FTS5's ranking leaves them out.
    top = plain.search.keyword_search(queries(plain)[0], WEIGHTS, None, 5)
    for store in (own, plain):
        run_sql(store, "UPDATE papers SET duplicate_of = '0000.00000' WHERE pk IN (?, ?)",
                (top[0][0], top[2][0]))
    assert top[0][0] not in dict(own.search.keyword_search(queries(plain)[0], WEIGHTS, None, 5))
    assert assert_same_ranking(own, plain) >= 90

    # Past the rebuild share, the stage builds anew and empties the tail.
    rebuilt = Keywords().run(own, settings.replace(keyword_postings_rebuild_share=0.01))
    assert rebuilt.details["build"] == 2 and rebuilt.counts["built"] == 2800
    assert rebuilt.counts["tail"] == 0
    assert run_sql(own, "SELECT DISTINCT build FROM keyword_postings") == [(2,)]
    assert assert_same_ranking(own, plain) >= 90


@pytest.mark.slow
def test_what_the_postings_cannot_rank_goes_to_fts5(twins: tuple[Store, Store, Settings]
                                                    ) -> None:
    own, plain, settings = twins
    Keywords().run(own, settings)
    for text in ['"language model"', "diffus* model*", "graph NOT neural",
                 "reinforcement AND reward", "x²-divergence"]:
        query = plan_keywords(plain.search, parse_query(text)).query
        same(own.search.keyword_search(query, WEIGHTS, None, 20),
             plain.search.keyword_search(query, WEIGHTS, None, 20), text, tolerance(own))
    query = plan_keywords(plain.search, parse_query("learning")).query
    filters = SearchFilters(categories=["cs.LG"], since="2025-06-01")
    same(own.search.keyword_search(query, WEIGHTS, filters, 20),
         plain.search.keyword_search(query, WEIGHTS, filters, 20), filters, tolerance(own))
    # Only the newest share of the papers, as the plan asks of a query that matches too much.
    query.newest_share = 0.3
    mine = own.search.keyword_search(query, WEIGHTS, None, 30)
    same(mine, plain.search.keyword_search(query, WEIGHTS, None, 30), query, tolerance(own))
    assert min(pk for pk, _ in mine) >= own.search._newest_from(0.3)


def built_lists_read(store: Store, monkeypatch: pytest.MonkeyPatch,
                     tokens: list[str]) -> set[str]:
    """The tokens whose build lists one ranking of them reads out of the database (SQLite
    asks for them in its own statement, PostgreSQL's postings_read sends them along)."""
    kept = store.search._postings  # type: ignore[attr-defined]
    read: set[str] = set()
    rank_state, list_rows = kept._rank_state, kept._list_rows

    def state_read(*args: object) -> object:
        found = rank_state(*args)
        if found is not None and found[3] is not None:
            read.update(row[0] for row in found[3][0])
        return found

    def rows_read(*args: object) -> object:
        found = list_rows(*args)
        read.update(row[0] for row in found[0])
        return found

    with monkeypatch.context() as patch:
        patch.setattr(kept, "_rank_state", state_read)
        patch.setattr(kept, "_list_rows", rows_read)
        assert kept.rank([[token] for token in tokens], WEIGHTS, 10, 0, lambda after: [],
                         lambda lists, after: ([1.0] * len(tokens), 100.0))
    return read


@pytest.mark.slow
def test_a_builds_lists_are_read_once_then_held_in_memory(
        twins: tuple[Store, Store, Settings], monkeypatch: pytest.MonkeyPatch) -> None:
    """A build never changes: its decoded lists are kept (up to BUILT_LISTS_BYTES), read
    again only for a new build, and the rankings stay the index's own throughout."""
    own, plain, settings = twins
    Keywords().run(own, settings)
    words = ["learn", "graph"]
    assert built_lists_read(own, monkeypatch, words) == set(words)
    assert built_lists_read(own, monkeypatch, words) == set()
    assert built_lists_read(own, monkeypatch, [*words, "quantum"]) == {"quantum"}
    assert assert_same_ranking(own, plain) >= 90
    assert assert_same_ranking(own, plain) >= 90  # every list held now

    assert Keywords(rebuild=True).run(own, settings).details["build"] == 2
    assert built_lists_read(own, monkeypatch, words) == set(words)
    # The memory's bound: the least recently used lists go (the previous build's first),
    # and are read again when asked.
    monkeypatch.setattr(postings, "BUILT_LISTS_BYTES", 20_000)
    assert assert_same_ranking(own, plain) >= 90
    assert 0 < postings._built_bytes <= 20_000
    held = postings.built_lists_held(own.location, 2, words)
    assert len(held) < len(words)
    assert built_lists_read(own, monkeypatch, words) == set(words) - set(held)


@pytest.mark.slow
def test_a_killed_build_leaves_the_previous_postings_in_use(
        twins: tuple[Store, Store, Settings], tmp_path: Path) -> None:
    own, plain, settings = twins
    Keywords().run(own, settings)

    def killed(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        own.search.build_keyword_postings(killed)
    assert own.search.keyword_postings_status()["build"] == 1

    # A tail update by another stage during a build: the build does not take over (it would
    # empty a tail holding changes its snapshot has not seen).
    changed = [dict(r, abstract="Quantum diffusion of graphs.", version=(r.get("version") or 1) + 1)
               for r in real_rows(3, skip=10)]
    ran: list[bool] = []

    def meanwhile(done: int, total: int) -> None:
        if not ran:
            ran.append(True)
            with open_store(str(own.location)) as other:
                ingest(other, settings, changed, tmp_path / "changed.jsonl")
                other.search.update_keyword_postings()

    with pytest.raises(StoreError, match="tail changed during the build"):
        own.search.build_keyword_postings(meanwhile)
    assert own.search.keyword_postings_status()["build"] == 1
    ingest(plain, settings, changed, tmp_path / "changed-plain.jsonl")
    assert assert_same_ranking(own, plain) >= 90
    again = Keywords(rebuild=True).run(own, settings)
    assert again.details["build"] == 2
    assert run_sql(own, "SELECT DISTINCT build FROM keyword_postings") == [(2,)]


@pytest.mark.slow
def test_the_stage_waits_for_enough_papers_and_the_command_reports(
        twins: tuple[Store, Store, Settings], tmp_path: Path) -> None:
    own, _, settings = twins
    small = Keywords().run(own, settings.replace(keyword_postings_min_papers=10_000))
    assert "not_run" in small.details and own.search.keyword_postings_status()["built"] is False
    with pytest.raises(StoreError, match="no keyword postings"):
        own.search.update_keyword_postings()
    runner = CliRunner()
    env = {"PAPERSIFT_DATA_DIR": str(tmp_path / "a"), "PAPERSIFT_KEYWORD_POSTINGS_MIN_PAPERS": "0",
           "PAPERSIFT_DATABASE_URL": "" if own.location.endswith(".db") else own.location}
    result = runner.invoke(app, ["keywords", "--json"], env=env)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["counts"]["built"] == 2500 and report["ok"]


def test_bm25_of_lists_follows_fts5s_formula() -> None:
    first = Postings(np.array([3, 7]), np.array([[1, 2, 0], [0, 1, 1]], np.uint8),
                     np.array([100, 50]))
    second = Postings(np.array([7]), np.array([[2, 0, 0]], np.uint8), np.array([50]))
    pks, scores = bm25([(first, 2.0), (second, 1.5)], WEIGHTS, 80.0)

    def part(freq: float, length: int) -> float:
        return freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * length / 80.0))

    assert pks.tolist() == [3, 7]
    assert scores == pytest.approx([2.0 * part(4.0, 100), 2.0 * part(1.5, 50) + 1.5 * part(4.0, 50)])
    # A prefix's words: each paper once, its counts summed before the saturation.
    both = Postings.join([first, second], summed=True)
    assert both.pks.tolist() == [3, 7] and both.counts.tolist() == [[1, 2, 0], [2, 1, 1]]
    assert both.lengths.tolist() == [100, 50]
    assert Postings.join([first, second]).pks.tolist() == [3, 7, 7]  # a tail's: as they come
    assert idf(1000, 10) == pytest.approx(np.log(990.5 / 10.5))
    assert idf(1000, 600) == 1e-6  # in most papers: FTS5's floor
    assert best_first(np.array([5, 4, 9]), np.array([1.0, 2.0, 2.0]), 2).tolist() == [1, 2]
