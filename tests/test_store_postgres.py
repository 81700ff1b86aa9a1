"""The PostgreSQL store's own behaviour: its schema and migrations, data_version, many writers at once, keyword queries that match what FTS5 matches, text PostgreSQL cannot hold, the vector index."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from papersift.records import PaperRecord
from papersift.records.prepare import prepare_record
from papersift.store import KeywordQuery, SearchFilters, Store, StoreError, Term, open_store

psycopg = pytest.importorskip("psycopg")


def paper(n: int, title: str | None = None, **fields: Any) -> PaperRecord:
    base: dict[str, Any] = dict(
        id=f"2601.{n:05d}", title=title or f"Paper number {n} about sparse graphs",
        abstract=f"We study problem {n} with message passing.", authors=[f"Author {n} Smith"],
        categories=["cs.LG"], source="file", announced="2026-01-05")
    base.update(fields)
    return PaperRecord(**base)


@pytest.fixture
def pg(postgres_url: str) -> Iterator[Store]:
    with open_store(postgres_url) as store:
        yield store


def test_migrations_are_applied_once_in_papersifts_own_schema(pg: Store) -> None:
    from papersift.store.postgres.db import migrations

    applied = [r[0] for r in pg.conn.execute("SELECT number FROM papersift.schema_migrations")]
    assert applied == [n for n, _, _ in migrations()]
    tables = {r[0] for r in pg.conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
    assert "papers" not in tables  # the database's public schema is left alone
    with open_store(pg.location.replace("postgresql://", "postgres://", 1)) as again:
        assert again.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(
            applied)


def test_a_database_from_a_newer_papersift_is_refused(pg: Store) -> None:
    pg.conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', 'now')")
    with pytest.raises(StoreError, match="newer than this papersift"):
        open_store(pg.location)
    with pytest.raises(StoreError, match="newer than this papersift"):
        open_store(pg.location, readonly=True)


def test_several_processes_may_open_a_new_database_at_once(postgres_server: Any) -> None:
    """Four workers starting against an empty database: one migrates, the others wait."""
    with postgres_server.admin() as admin:
        admin.execute('CREATE DATABASE "fresh_at_once"')
    url = postgres_server.url("fresh_at_once")
    errors: list[BaseException] = []

    def open_it() -> None:
        try:
            open_store(url).close()
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    postgres_server.drop_database("fresh_at_once")
    assert errors == []


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    with pytest.raises(StoreError) as raised:
        open_store("postgresql://ada:s3cret@127.0.0.1:9/papers?connect_timeout=2")
    assert "s3cret" not in str(raised.value) and "127.0.0.1" in str(raised.value)


def test_a_read_only_store_reads_and_refuses_writes(pg: Store, postgres_server: Any) -> None:
    with postgres_server.admin() as admin:
        admin.execute('CREATE DATABASE "never_opened"')
    try:
        with pytest.raises(StoreError, match="holds no papersift store yet"):
            open_store(postgres_server.url("never_opened"), readonly=True)
    finally:
        postgres_server.drop_database("never_opened")
    pg.papers.upsert_papers([prepare_record(paper(1))])
    with open_store(pg.location, readonly=True) as reader:
        assert reader.papers.count_papers() == 1
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            reader.papers.upsert_papers([prepare_record(paper(2))])


def test_data_version_moves_when_page_data_commits_and_not_before(pg: Store) -> None:
    with open_store(pg.location) as writer:
        start = pg.data_version()
        with writer.conn.transaction():
            writer.papers._upsert([prepare_record(paper(1))], _report())  # inside a transaction
            assert pg.data_version() == start  # not committed: a page would not see it yet
        assert pg.data_version() == start + 1  # one transaction, one step, however many rows
        writer.readers.add_reader("ada", None, "hash")  # readers' data is not pages' data
        assert writer.readers.claim_login_attempt([("name:ada", 5)], "a1", "2026-01-04T23:45:00Z",
                                                  "2026-01-05T00:00:00Z")
        assert pg.data_version() == start + 1
        with pytest.raises(psycopg.errors.DivisionByZero), writer.conn.transaction():
            writer.conn.execute("UPDATE papers SET title = 'x'")
            writer.conn.execute("SELECT 1 / 0")
        assert pg.data_version() == start + 1  # rolled back: nothing to see
        writer.summaries.put_summaries([{"paper_id": "2601.00001", "tldr": "t", "blurb": "b",
                                         "writer": "builtin", "input_hash": "h"}])
        assert pg.data_version() == start + 2


def _report() -> Any:
    from papersift.store import UpsertReport

    return UpsertReport()


def _together(*jobs: Callable[[], None]) -> None:
    """Run the jobs in threads that start at the same moment; re-raise the first failure."""
    barrier = threading.Barrier(len(jobs))
    errors: list[BaseException] = []

    def run(job: Callable[[], None]) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 (re-raised below)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a writer hung (a deadlock?)"
    if errors:
        raise errors[0]


def test_two_ingests_of_overlapping_files_lose_and_double_nothing(pg: Store) -> None:
    """Two writers upsert overlapping record sets in small batches, in opposite orders, while
    a reader rates papers: every paper is stored once, newer versions win whoever came first,
    a paper and its duplicate under another id end up linked, and nobody waits forever."""
    first = [paper(n) for n in range(0, 600)]
    second = [paper(n, version=2, title=f"Paper number {n}, revised") if n % 7 == 0 else paper(n)
              for n in range(300, 900)]
    # The same paper under two ids (same title and first author), one in each file.
    first.append(paper(5000, title="A shared title about lattices", authors=["Kim Lee"]))
    second.append(paper(6000, title="A shared title about lattices", authors=["Kim Lee"]))
    reports: dict[str, list[Any]] = {"first": [], "second": []}
    reader_id = pg.readers.add_reader("ada", None, "hash")

    def ingest(name: str, records: list[PaperRecord]) -> Callable[[], None]:
        def job() -> None:
            with open_store(pg.location) as store:
                prepared = [prepare_record(r) for r in records]
                for start in range(0, len(prepared), 40):
                    reports[name].append(store.papers.upsert_papers(prepared[start:start + 40]))
        return job

    def rate() -> None:
        """A reader rating papers as they appear (and reading a page) during the ingests."""
        with open_store(pg.location) as store:
            rated: set[str] = set()
            deadline = time.monotonic() + 60
            while len(rated) < 50 and time.monotonic() < deadline:
                for row in store.pages.day_papers("2026-01-05")[:50]:
                    store.readers.set_reaction(reader_id, row["id"], "up")
                    rated.add(row["id"])

    _together(ingest("first", first), ingest("second", list(reversed(second))), rate)

    ids = {r.id for r in first} | {r.id for r in second}
    new = [pid for name in reports for report in reports[name] for pid in report.new]
    assert sorted(new) == sorted(ids)  # each paper was new exactly once
    assert pg.papers.count_papers(include_duplicates=True) == len(ids)
    assert pg.conn.execute("SELECT count(*), count(DISTINCT id) FROM papers").fetchone() == (
        len(ids), len(ids))
    for n in range(301, 600, 7):  # the revision wins, whichever writer came last
        stored = pg.papers.get_paper(f"2601.{n:05d}")
        assert stored["version"] == 2 and stored["title"].endswith("revised"), n
        assert [v["version"] for v in stored["versions"]] == [2]
    pair = [pg.papers.get_paper(pid)["duplicate_of"] for pid in ("2601.05000", "2601.06000")]
    assert sorted(pair, key=str) == sorted([None, "2601.05000" if pair[1] else "2601.06000"],
                                           key=str)
    authors = pg.conn.execute("SELECT count(*), count(DISTINCT name) FROM authors").fetchone()
    assert authors[0] == authors[1] == len({a for r in first + second for a in r.authors})
    assert len(pg.readers.reactions_of(reader_id)) >= 50


@pytest.fixture
def both(tmp_path: Path, postgres_url: str) -> Iterator[tuple[Store, Store]]:
    """A SQLite and a PostgreSQL store holding the same papers."""
    records = [
        paper(1, "Graph neural networks for molecules", authors=["Ada Lovelace", "Alan Turing"]),
        paper(2, "Diffusion models for images", authors=["Grace Hopper"]),
        paper(3, "Graph transformers at scale", authors=["Ada Lovelace"],
              abstract="Attention over graphs, with diffusion of messages."),
        paper(4, "Reward models for language agents", authors=["Alan Turing", "Kurt Gödel"]),
        paper(5, "Sparse attention for long documents", authors=["Emmy Noether"],
              abstract="Transformers attend to few tokens of the molecule."),
    ]
    stores = open_store(tmp_path / "x.db"), open_store(postgres_url)
    for store in stores:
        store.papers.upsert_papers([prepare_record(r) for r in records])
    yield stores
    for store in stores:
        store.close()


@pytest.mark.parametrize("items", [
    [Term("graph")],
    [Term("graph"), Term("diffusion")],
    [Term("graph"), "OR", Term("diffusion"), "AND", Term("images")],
    [Term("graph"), "NOT", Term("molecules")],
    [Term("graph"), "AND", Term("diffusion"), "OR", Term("reward"), "NOT", Term("language")],
    [Term("graph neural", phrase=True)],
    [Term("molec", prefix=True), "OR", Term("transform", prefix=True)],
    [Term("godel")],  # diacritics removed on both sides
    [Term("turing"), "AND", Term("reward")],
])
def test_keyword_queries_match_what_fts5_matches(both: tuple[Store, Store],
                                                 items: list[Any]) -> None:
    """The same papers match on both backends (FTS5's precedence: NOT, AND, OR)."""
    found = []
    sqlite_store, pg_store = both
    for store in (sqlite_store, pg_store):
        for default in ("AND", "OR"):
            query = KeywordQuery(list(items), default)
            pks = [pk for pk, _ in store.search.keyword_search(query, (2, 1, 0.5))]
            found.append((default, sorted(r["id"] for r in store.search.search_rows(pks).values())))
    assert found[:2] == found[2:], found
    assert found[0][1] or found[1][1], "the query should match something"
    for filters in (SearchFilters(authors=["Ada Lovelace"]), SearchFilters(categories=["cs"]),
                    SearchFilters(until="2026-01")):
        assert sqlite_store.search.filtered_pks(filters) == pg_store.search.filtered_pks(filters)


def test_rarer_words_weigh_more_and_titles_more_than_abstracts(postgres_url: str) -> None:
    with open_store(postgres_url) as store:
        store.papers.upsert_papers([prepare_record(r) for r in [
            paper(1, "Graph methods", abstract="Lattices appear once."),
            paper(2, "Graph models", abstract="Graph graph graph."),
            paper(3, "Lattice graph theory", abstract="Nothing else."),
            *[paper(10 + n, f"Graph study {n}", abstract="More graphs.") for n in range(20)]]])
        hits = store.search.keyword_search(KeywordQuery([Term("graph"), Term("lattice")], "OR"),
                                           (2.0, 1.0, 0.5))
        ranked = [row["id"] for row in map(store.search.search_rows([pk for pk, _ in hits]).get,
                                           [pk for pk, _ in hits])]
        # Both words (the rare one in the title) first; the rare word in an abstract next.
        assert ranked[:2] == ["2601.00003", "2601.00001"]


def test_a_search_plan_reads_what_its_ranking_needs_in_the_same_statement(
        pg: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's term_doc_counts read, in one statement, what the ranking just after needs:
    the counts, and on the postings their state and lists too. Once and only for an instant:
    the next ranking, or one after a write, reads them again."""
    import psycopg

    from papersift.store.postgres import postings as pg_postings

    pg.papers.upsert_papers([prepare_record(paper(n, f"Graph lattices {n}" if n <= 5 else
                                                  f"Sparse codes {n}", abstract="Nothing."))
                             for n in range(1, 31)])
    sent: list[str] = []
    execute = psycopg.Cursor.execute
    monkeypatch.setattr(psycopg.Cursor, "execute", lambda self, sql, *a, **k:
                        sent.append(str(sql)) or execute(self, sql, *a, **k))
    query = KeywordQuery([Term("graph"), Term("lattice")], "OR")
    tokens, weights = ["graph", "lattic"], (2.0, 1.0, 0.5)

    def lexicon_reads() -> int:  # the SQL ranking's own, or postings_read (migration 0017)
        return sum("FROM lexicon" in sql or "postings_read" in sql for sql in sent)

    # Without postings the SQL ranking takes the plan's counts.
    assert pg.search.term_doc_counts(tokens) == {"graph": 5, "lattic": 5}
    first = pg.search.keyword_search(query, weights)
    assert lexicon_reads() == 1 and len(first) == 5
    assert pg.search.keyword_search(query, weights) == first
    assert lexicon_reads() == 2  # used once: this ranking read them itself

    # On the postings the ranking sends nothing after the plan's statement (and the key it
    # read first: whether the store moved since what memory holds was read).
    pg.search.build_keyword_postings()
    sent.clear()
    assert pg.search.term_doc_counts(tokens) == {"graph": 5, "lattic": 5}
    assert [pk for pk, _ in pg.search.keyword_search(query, weights)] == [pk for pk, _ in first]
    assert len(sent) == 2 and "data_version" in sent[0] and "postings_read" in sent[1]
    assert pg.search.keyword_search(query, weights) == first
    # Used once: the next ranking asks again, but the store has not moved and its lists are
    # held, so the key is all it reads.
    assert len(sent) == 3 and "data_version" in sent[2]

    pg.search.term_doc_counts(tokens)
    pg.papers.upsert_papers([prepare_record(paper(n, "Graph theory", abstract="Nothing."))
                             for n in range(31, 51)])
    monkeypatch.setattr(pg_postings, "JUST_READ_SECONDS", 0.0)  # what the plan read is too old
    sent.clear()
    after = pg.search.keyword_search(query, weights, limit=100)
    assert "postings_read" in sent[1]  # the store moved: what memory held is read again
    assert len(after) == 25
    # "graph" is in 25 of 50 papers now: it weighs less than the plan's counts (5 of 30) said.
    assert dict(after)[first[0][0]] < dict(first)[first[0][0]]


def test_what_a_ranking_remembers_follows_the_committed_store(pg: Store) -> None:
    """A ranking's counts and state are kept under the store's data_version, build and tail
    version, and used again only while those stay: never what a transaction saw before it
    committed (data_version moves at the commit), so a rolled-back write leaves no trace."""
    pg.papers.upsert_papers([prepare_record(paper(n, f"Graph lattices {n}" if n <= 5 else
                                                  f"Sparse codes {n}", abstract="Nothing."))
                             for n in range(1, 11)])
    pg.search.build_keyword_postings()
    query, weights = KeywordQuery([Term("graph")], "OR"), (2.0, 1.0, 0.5)
    assert pg.search.term_doc_counts(["graph"]) == {"graph": 5}
    first = pg.search.keyword_search(query, weights)
    with pg.conn.transaction(force_rollback=True):
        pg.conn.execute("UPDATE papers SET abstract = 'A graph.' WHERE id = %s", (paper(9).id,))
        assert pg.search.term_doc_counts(["graph"]) == {"graph": 6}
    assert pg.search.term_doc_counts(["graph"]) == {"graph": 5}
    assert pg.search.keyword_search(query, weights) == first
    pg.papers.upsert_papers([prepare_record(paper(11, "Graph codes", abstract="Nothing."))])
    assert pg.search.term_doc_counts(["graph"]) == {"graph": 6}
    assert len(pg.search.keyword_search(query, weights)) == 6


def test_text_postgresql_cannot_hold_is_stored_without_it(pg: Store) -> None:
    report = pg.papers.upsert_papers([prepare_record(paper(1, "Null\x00 bytes in a title"))])
    assert report.new == ["2601.00001"]
    assert pg.papers.get_paper("2601.00001")["title"] == "Null bytes in a title"
    reader = pg.readers.add_reader("bob", None, "hash")
    assert pg.readers.add_feedback(reader, "more\x00 theory") > 0


def test_a_failed_batch_leaves_nothing_behind(pg: Store) -> None:
    pg.conn.execute("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS"
                    " $$ BEGIN RAISE EXCEPTION 'boom'; END $$")
    pg.conn.execute("CREATE TRIGGER boom BEFORE INSERT ON paper_sources"
                    " FOR EACH STATEMENT EXECUTE FUNCTION boom()")
    with pytest.raises(psycopg.errors.RaiseException):
        pg.papers.upsert_papers([prepare_record(paper(1))])
    assert pg.conn.execute("SELECT (SELECT count(*) FROM papers) + (SELECT count(*) FROM"
                           " authors) + (SELECT count(*) FROM paper_versions)").fetchone()[0] == 0


def test_the_keyword_index_follows_merges(pg: Store) -> None:
    pg.papers.upsert_papers([prepare_record(paper(1, "Sparse retrieval", version=1))])
    pg.papers.upsert_papers([prepare_record(paper(1, "Dense retrieval", version=2))])

    def hits(word: str) -> list[int]:
        return [pk for pk, _ in pg.search.keyword_search(KeywordQuery([Term(word)]), (1, 1, 1))]

    assert hits("sparse") == [] and hits("dense") == [pg.search.pk_of("2601.00001")]


def test_the_lexicon_is_the_index_vocabulary_after_inserts_merges_and_deletes(pg: Store) -> None:
    """The vocabulary the writers keep (prefix* words, document counts) is what ts_stat reads
    out of every stored tsvector, after each kind of write; a word no paper holds is gone."""
    def vocabulary() -> dict[str, int]:
        return dict(pg.conn.execute("SELECT lexeme, papers FROM lexicon").fetchall())

    def truth() -> dict[str, int]:
        return dict(pg.conn.execute(
            "SELECT word, ndoc FROM ts_stat('SELECT fts FROM papers')").fetchall())

    pg.papers.upsert_papers([prepare_record(paper(n)) for n in range(1, 6)])
    assert vocabulary() == truth() and vocabulary()["spars"] == 5
    assert pg.search.prefix_terms("spa", 10) == {"spars": 5}
    assert pg.search.term_doc_counts(["spars", "zebra"]) == {"spars": 5, "zebra": 0}
    # A revised record changes its text (a merge: UPDATE): its old words lose it.
    pg.papers.upsert_papers([prepare_record(paper(1, title="Zebra stripes of dense graphs",
                                                  version=2, source="other"))])
    assert vocabulary() == truth() and vocabulary()["zebra"] == 1
    assert vocabulary()["spars"] == 4 and pg.search.prefix_terms("zeb", 10) == {"zebra": 1}
    pg.conn.execute("UPDATE papers SET sort_date = '2026-02-01'")  # no text changed
    assert vocabulary() == truth()
    pg.conn.execute("DELETE FROM papers WHERE id = '2601.00001'")
    assert vocabulary() == truth() and "zebra" not in vocabulary()
    assert pg.search.prefix_terms("zeb", 10) == {}


def test_the_hnsw_graph_is_built_with_ef_construction_128_by_migration_and_backfill(
        pg: Store) -> None:
    def options() -> list[str] | None:
        row = pg.conn.execute("SELECT reloptions FROM pg_class WHERE relname ="
                              " 'embeddings_hnsw_384'").fetchone()
        return None if row is None else row[0]

    assert "ef_construction=128" in options()
    assert pg.embeddings.drop_vector_index() is True and options() is None
    assert pg.embeddings.build_vector_index(64, 1) is not None
    assert "ef_construction=128" in options() and "m=16" in options()


def test_vectors_round_trip_exactly_and_the_hnsw_index_serves_cosine(pg: Store) -> None:
    pg.papers.upsert_papers([prepare_record(paper(n)) for n in range(1, 4)])
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(3, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    pg.embeddings.put_embeddings("m", [(f"2601.{n:05d}", "h", vectors[n - 1]) for n in range(1, 4)])
    ids, matrix = pg.embeddings.embedding_matrix("m")
    assert ids == ["2601.00001", "2601.00002", "2601.00003"]
    assert matrix.tobytes() == vectors.tobytes()  # full precision: exact, not half
    pg.conn.execute("SET enable_seqscan = off")
    plan = "\n".join(r[0] for r in pg.conn.execute(
        "EXPLAIN SELECT paper_id FROM embeddings WHERE dim = 384"
        " ORDER BY vector::halfvec(384) <=> %s::vector::halfvec(384) LIMIT 2", (vectors[0],)))
    assert "embeddings_hnsw_384" in plan
    nearest = pg.conn.execute(
        "SELECT paper_id FROM embeddings WHERE dim = 384"
        " ORDER BY vector::halfvec(384) <=> %s::vector::halfvec(384) LIMIT 1",
        (vectors[1],)).fetchone()[0]
    assert nearest == "2601.00002"


def _ingest_file(url: str, path: str, batch: int, results: Any) -> None:
    """A separate process ingesting one file, in small batches (what `papersift ingest` runs)."""
    from papersift.ingest.stage import Ingest
    from papersift.settings import load_settings

    settings = load_settings(environ={}, database_url=url)
    with open_store(url) as store:
        report = Ingest([f"file:{path}"], batch_size=batch).run(store, settings)
    results.put(report.as_dict())


def test_two_ingest_processes_of_overlapping_files(tmp_path: Path, postgres_url: str) -> None:
    """The ingest stage in two processes at once, over files sharing a third of their papers."""
    import json
    import multiprocessing

    def write(name: str, numbers: range) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps({
            "id": f"2601.{n:05d}", "title": f"Paper number {n} on sparse graphs",
            "abstract": f"We study problem {n}.", "authors": [f"Author {n % 97} Smith"],
            "categories": ["cs.LG"], "announced": "2026-01-05"}) + "\n" for n in numbers))
        return path

    files = [write("a.jsonl", range(0, 1500)), write("b.jsonl", range(1000, 2500))]
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [context.Process(target=_ingest_file, args=(postgres_url, str(f), 100, results))
               for f in files]
    for worker in workers:
        worker.start()
    reports = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert all(r["ok"] for r in reports), reports
    # Each paper is new once; the shared ones the later writer found as they are.
    assert sum(r["counts"]["new"] for r in reports) == 2500
    assert sum(r["counts"].get("unchanged", 0) for r in reports) == 500
    with open_store(postgres_url) as store:
        assert store.conn.execute("SELECT count(*), count(DISTINCT id) FROM papers").fetchone() == (
            2500, 2500)
        assert store.conn.execute("SELECT count(*) FROM paper_authors").fetchone()[0] == 2500
        assert store.conn.execute("SELECT count(*) FROM ingest_runs").fetchone()[0] == 2


def _clustered_vectors(n: int, seed: int = 11) -> np.ndarray:
    """Unit vectors around 30 centres (as embeddings of papers on a few subjects are)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(30, 384))
    vectors = centres[rng.integers(0, 30, size=n)] + rng.normal(scale=0.6, size=(n, 384))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def _index_scans(pg: Store) -> int:
    pg.conn.execute("SELECT pg_stat_force_next_flush()")
    pg.conn.execute("SELECT pg_stat_clear_snapshot()")
    return int(pg.conn.execute("SELECT idx_scan FROM pg_stat_user_indexes"
                               " WHERE indexrelname = 'embeddings_hnsw_384'").fetchone()[0])


def test_nearest_papers_come_from_the_hnsw_index_and_match_exact_search(
        pg: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """recall@10 against exact search; filters kept, exactly when they leave few papers and
    during the graph walk when they leave many; the answers are scored at full precision."""
    from papersift.store.postgres import embeddings as pg_embeddings

    n = 3000
    pg.papers.upsert_papers([prepare_record(paper(i, categories=["cs.LG" if i % 3 else "cs.CV"]))
                             for i in range(1, n + 1)])
    vectors = _clustered_vectors(n + 20)
    pg.embeddings.put_embeddings("m", [(f"2601.{i:05d}", "h", vectors[i - 1])
                                       for i in range(1, n + 1)])
    pks = np.array([pg.search.pk_of(f"2601.{i:05d}") for i in range(1, n + 1)])
    queries = vectors[n:]
    before = _index_scans(pg)
    hits = 0
    for query in queries:
        exact = set(pks[np.argsort(-(vectors[:n] @ query), kind="stable")[:10]].tolist())
        found = pg.embeddings.nearest_papers("m", query, 10)
        assert len(found) == 10 and [s for _, s in found] == sorted((s for _, s in found),
                                                                    reverse=True)
        hits += len(exact & {pk for pk, _ in found})
        pk, score = found[0]
        assert score == pytest.approx(float(vectors[pk_index(pks, pk)] @ query), abs=1e-5)
    assert hits / (10 * len(queries)) >= 0.95
    assert _index_scans(pg) > before  # the graph answered, not a scan of every vector

    vision = {int(pk) for i, pk in enumerate(pks, start=1) if i % 3 == 0}
    for limit in (20_000, 100):  # exactly over the 1,000 papers; then during the walk
        monkeypatch.setattr(pg_embeddings, "FILTER_EXACT_MAX", limit)
        found = pg.embeddings.nearest_papers("m", queries[0], 50, SearchFilters(categories=["cs.CV"]))
        assert len(found) == 50 and {pk for pk, _ in found} <= vision
        exact = [int(pk) for pk in pks[np.argsort(-(vectors[:n] @ queries[0]), kind="stable")]
                 if int(pk) in vision][:50]
        assert len(set(exact) & {pk for pk, _ in found}) >= 45


def test_a_walk_is_one_statement(pg: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk's settings are set once per session (a search is then one statement), and
    only for the transaction when a search runs inside one."""
    import psycopg

    pg.papers.upsert_papers([prepare_record(paper(i)) for i in range(1, 301)])
    vectors = _clustered_vectors(301)
    pg.embeddings.put_embeddings("m", [(f"2601.{i:05d}", "h", vectors[i - 1])
                                       for i in range(1, 301)])
    first = pg.embeddings.nearest_papers("m", vectors[299], 20)
    assert len(first) == 20
    assert pg.conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "128"
    statements: list[str] = []
    execute = psycopg.Cursor.execute
    monkeypatch.setattr(psycopg.Cursor, "execute",
                        lambda self, sql, *a, **k: statements.append(str(sql)) or
                        execute(self, sql, *a, **k))
    assert pg.embeddings.nearest_papers("m", vectors[299], 20) == first
    assert len(statements) == 1  # the walk, nothing set again
    with pg.db.transaction():  # a wider walk inside a transaction: set for it alone
        assert len(pg.embeddings.nearest_papers("m", vectors[299], 200)) == 200
    monkeypatch.undo()
    assert pg.conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "128"
    assert pg.embeddings.nearest_papers("m", vectors[299], 20) == first


def pk_index(pks: np.ndarray, pk: int) -> int:
    return int(np.flatnonzero(pks == pk)[0])


def test_the_store_and_the_site_outlive_a_restart_of_the_server(
        postgres_server: Any, postgres_url: str, tmp_path: Path) -> None:
    """Stopped under papersift and started again: a 503 while it is down, then service
    again without restarting papersift (before issue 30 every page failed until then)."""
    from starlette.testclient import TestClient

    from papersift.settings import load_settings
    from papersift.store import StoreUnavailable, add_records
    from papersift.web.app import create_app

    settings = load_settings(environ={}, config=tmp_path / "none.toml",
                             data_dir=str(tmp_path / "data"), database_url=postgres_url)
    with open_store(postgres_url) as pg, TestClient(create_app(settings)) as site:
        add_records(pg, [paper(1)])
        reader = pg.readers.add_reader("ada", None, "hash")
        assert site.get("/healthz").status_code == 200
        assert site.get("/papers/2601.00001").status_code == 200
        postgres_server.stop()
        try:
            with pytest.raises(StoreUnavailable):
                pg.readers.get_reader(reader)
            down = site.get("/healthz")
            assert down.status_code == 503 and down.headers["retry-after"] == "5"
            assert site.get("/papers/2601.00001.json").status_code == 503
        finally:
            postgres_server.start()
        assert pg.readers.get_reader(reader)["name"] == "ada"
        assert site.get("/healthz").status_code == 200
        assert site.get("/papers/2601.00001").status_code == 200
        assert site.get("/topics").status_code == 200


def test_a_connection_the_server_ended_is_replaced_before_it_is_used(
        postgres_server: Any, pg: Store) -> None:
    reader = pg.readers.add_reader("ada", None, "hash")
    before = pg.conn.info.backend_pid
    with postgres_server.admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (before,))
    time.sleep(0.2)  # the server's notice reaches the idle socket
    assert pg.readers.get_reader(reader)["name"] == "ada"  # no error on the first use
    assert pg.conn.info.backend_pid != before


def test_a_query_the_server_cuts_off_is_unavailable_not_a_driver_error(
        postgres_server: Any, pg: Store) -> None:
    """A shutdown that ends a statement mid-way (the drill's one 500 of issue 30)."""
    import threading

    from papersift.store import StoreUnavailable

    pid = pg.conn.info.backend_pid
    outcome: list[BaseException | None] = []

    def slow_read() -> None:
        try:
            pg.db.value("SELECT 1 FROM (SELECT pg_sleep(5)) AS s")
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 (what it raised is the point)
            outcome.append(exc)

    reading = threading.Thread(target=slow_read)
    reading.start()
    time.sleep(0.5)
    with postgres_server.admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    reading.join(10)
    assert outcome and isinstance(outcome[0], StoreUnavailable), outcome
    assert pg.readers.list_readers() == []  # and the next statement has a new connection
