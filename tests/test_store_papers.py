"""The paper store: migrations, merge rules, duplicates, version history, sources and the FTS index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from papersift.records import PaperRecord
from papersift.store import KeywordQuery, Store, StoreError, Term, add_records, open_store
from papersift.store.sqlite.db import PAGE_SIZE, migrations
from tests.store_sql import run_sql

# Every test that uses the store runs on each backend (tests/conftest.py), but those that look
# into SQLite itself (the PostgreSQL store's own are in test_store_postgres.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")
SQLITE_ONLY = pytest.mark.backends("sqlite")


def paper(**fields: object) -> PaperRecord:
    base: dict[str, object] = dict(
        id="2401.00001", title="Sparse Attention for Long Documents", abstract="We study attention.",
        authors=["Ada Lovelace", "Alan Turing"], categories=["cs.CL", "cs.LG"], source="file",
    )
    base.update(fields)
    return PaperRecord(**base)  # type: ignore[arg-type]


@SQLITE_ONLY
def test_migrations_are_applied_once_and_recorded(store: Store) -> None:
    applied = [r[0] for r in store.conn.execute("SELECT number FROM schema_migrations")]
    assert applied == [n for n, _, _ in migrations()]
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reopened = open_store(store.path)  # a second open applies nothing new
    assert reopened.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(applied)
    reopened.close()


@SQLITE_ONLY
def test_new_stores_use_8k_pages_and_older_ones_keep_theirs(store: Store, tmp_path: Path) -> None:
    assert store.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 8192
    older = sqlite3.connect(tmp_path / "older.db")
    older.execute("PRAGMA journal_mode = WAL")  # made with the default 4 KiB pages
    older.close()
    with open_store(tmp_path / "older.db") as reopened:
        assert reopened.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        add_records(reopened, [paper()])
        assert reopened.papers.count_papers() == 1


@SQLITE_ONLY
def test_a_database_from_a_newer_papersift_is_refused(store: Store) -> None:
    store.conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', 'now')")
    with pytest.raises(StoreError, match="newer"):
        open_store(store.path)


def test_insert_then_same_record_is_unchanged(store: Store) -> None:
    first = add_records(store, [paper()])
    again = add_records(store, [paper()])
    assert first.new == ["2401.00001"] and again.new == [] and again.unchanged == 1
    stored = store.papers.get_paper("2401.00001")
    assert stored is not None
    assert [a["name"] for a in stored["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert [a["slug"] for a in stored["authors"]] == ["ada-lovelace", "alan-turing"]
    assert stored["categories"] == ["cs.CL", "cs.LG"] and stored["primary_category"] == "cs.CL"


def test_newest_version_wins_text_and_history_is_kept(store: Store) -> None:
    add_records(store, [paper(version=2, title="Second title", source="arxiv",
                               versions=[(1, "2024-01-01"), (2, "2024-02-01")])])
    report = add_records(store, [paper(version=1, title="First title", source="oai",
                                        comment="old comment")])
    stored = store.papers.get_paper("2401.00001")
    assert stored["title"] == "Second title" and stored["version"] == 2
    assert stored["comment"] == "old comment"  # an older record still fills a gap
    assert [v["version"] for v in stored["versions"]] == [1, 2]
    assert set(stored["sources"]) == {"arxiv", "oai"}
    assert report.updated == ["2401.00001"]
    add_records(store, [paper(version=3, title="Third title", authors=["Ada Lovelace"],
                               source="oai")])
    stored = store.papers.get_paper("2401.00001")
    assert stored["title"] == "Third title"
    assert [a["name"] for a in stored["authors"]] == ["Ada Lovelace"]
    assert [v["version"] for v in stored["versions"]] == [1, 2, 3]


def test_a_lower_ranked_source_attaches_without_overwriting(store: Store) -> None:
    add_records(store, [paper(source="file", announced="2025-03-18")])
    add_records(store, [paper(title="HF's title", source="hf", extras={"upvotes": 12},
                               announced="2025-03-20")])
    stored = store.papers.get_paper("2401.00001")
    assert stored["title"] == "Sparse Attention for Long Documents"
    assert stored["sources"]["hf"] == {"upvotes": 12}
    assert stored["announced"] == "2025-03-18"  # the first announcement is the news
    changed = add_records(store, [paper(title="HF's title", source="hf", extras={"upvotes": 40},
                                         announced="2025-03-20")])
    assert changed.updated == ["2401.00001"]
    assert store.papers.get_paper("2401.00001")["sources"]["hf"] == {"upvotes": 40}


def test_links_written_by_older_versions_are_not_a_change(store: Store) -> None:
    add_records(store, [paper(links={"pdf": "https://arxiv.org/pdf/2401.00001",
                                      "abs": "https://arxiv.org/abs/2401.00001"})])
    # Earlier papersift wrote links with json.dumps: the same object, spaced out.
    spaced = '{"abs": "https://arxiv.org/abs/2401.00001", "pdf": "https://arxiv.org/pdf/2401.00001"}'
    run_sql(store, "UPDATE papers SET links = ?", (spaced,))
    report = add_records(store, [paper(source="arxiv", links={
        "abs": "https://arxiv.org/abs/2401.00001", "pdf": "https://arxiv.org/pdf/2401.00001"})])
    assert (report.updated, report.unchanged) == ([], 1)
    assert run_sql(store, "SELECT links FROM papers") == [(spaced,)]
    report = add_records(store, [paper(source="arxiv", links={"doi": "https://doi.org/10.1/x"})])
    assert report.updated == ["2401.00001"]
    assert store.papers.get_paper("2401.00001")["links"] == {
        "abs": "https://arxiv.org/abs/2401.00001", "doi": "https://doi.org/10.1/x",
        "pdf": "https://arxiv.org/pdf/2401.00001"}


def test_empty_fields_never_erase_known_ones(store: Store) -> None:
    add_records(store, [paper(doi="10.1/x", journal_ref="J. Stuff 1", version=1, source="arxiv")])
    add_records(store, [paper(version=2, source="arxiv")])
    stored = store.papers.get_paper("2401.00001")
    assert stored["doi"] == "10.1/x" and stored["journal_ref"] == "J. Stuff 1"


@pytest.mark.parametrize("same", [
    {"doi": "10.5555/ABC"},
    {"title": "Sparse attention for long  documents!", "doi": None},
    {"title": "\\emph{Sparse} attention for long documents", "doi": None},  # LaTeX commands go
    {"title": "Sparse attention for long documents\u2009\u2014", "doi": None},  # not ASCII
])
def test_duplicates_under_another_id_are_linked_not_shown_twice(
    store: Store, same: dict[str, object]
) -> None:
    add_records(store, [paper(doi="10.5555/abc")])
    report = add_records(store, [paper(id="2402.00002", **same)])
    assert report.duplicates == [("2402.00002", "2401.00001")]
    assert store.papers.get_paper("2402.00002")["duplicate_of"] == "2401.00001"
    assert store.papers.get_paper("2401.00001")["duplicates"] == ["2402.00002"]
    assert store.papers.count_papers() == 1 and store.papers.count_papers(include_duplicates=True) == 2
    assert [p["id"] for p in store.papers.iter_papers()] == ["2401.00001"]


def test_same_title_by_another_first_author_is_another_paper(store: Store) -> None:
    """Two papers may share a title ("Attention is all you need" has sequels): the duplicate
    key is the title and the first author's surname, so a reader sees both."""
    add_records(store, [paper()])
    other = paper(id="2402.00002", authors=["Grace Hopper", "Alan Turing"])
    same_lead = paper(id="2403.00003", authors=["A. Lovelace"])
    report = add_records(store, [other, same_lead])
    assert report.duplicates == [("2403.00003", "2401.00001")]
    assert store.papers.get_paper("2402.00002")["duplicate_of"] is None
    assert store.papers.count_papers() == 2
    assert [p["id"] for p in store.papers.iter_papers()] == ["2401.00001", "2402.00002"]
    # In one batch as in two.
    batch = add_records(store, [paper(id="2404.00004", title="Dense retrieval for long documents"),
                                paper(id="2404.00005", title="Dense retrieval for long documents",
                                      authors=["Edsger Dijkstra"])])
    assert batch.duplicates == [] and store.papers.count_papers() == 4


def test_duplicates_within_one_batch_link_to_the_first(store: Store) -> None:
    report = add_records(store, [paper(), paper(id="2402.00002"), paper(id="2403.00003",
                                                                       title="Another paper here")])
    assert report.duplicates == [("2402.00002", "2401.00001")]
    assert len(report.new) == 3


def test_the_same_doi_under_another_title_is_a_duplicate_in_one_batch_or_two(
        store: Store) -> None:
    add_records(store, [paper(doi="10.5555/A"), paper(id="2401.00009", doi="10.5555/b",
                                                      title="Dense retrieval of long texts")])
    report = add_records(store, [
        paper(id="2402.00002", doi="10.5555/a", title="A renamed preprint", authors=["X Y"]),
        paper(id="2402.00003", doi="10.5555/B", title="Another renamed one", authors=["Z W"]),
        paper(id="2402.00004", doi="10.5555/c", title="A new paper on parsing", authors=["Q R"]),
        paper(id="2402.00005", doi="10.5555/C", title="The same, retitled", authors=["S T"]),
    ])
    assert sorted(report.duplicates) == [("2402.00002", "2401.00001"),
                                         ("2402.00003", "2401.00009"),
                                         ("2402.00005", "2402.00004")]


def test_every_paper_of_a_batch_keeps_its_authors_categories_and_versions(store: Store) -> None:
    add_records(store, [paper(version=2, versions=[(1, "2024-01-01"), (2, "2024-02-01")]),
                        paper(id="2402.00002", title="Another paper entirely", version=1,
                              authors=["Grace Hopper"], categories=["cs.AI"])])
    first = store.papers.get_paper("2401.00001")
    assert [a["name"] for a in first["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert first["categories"] == ["cs.CL", "cs.LG"] and len(first["versions"]) == 2
    second = store.papers.get_paper("2402.00002")
    assert [a["name"] for a in second["authors"]] == ["Grace Hopper"]
    assert second["categories"] == ["cs.AI"] and len(second["versions"]) == 1


def test_same_id_twice_in_a_batch_merges(store: Store) -> None:
    report = add_records(store, [paper(version=1, source="arxiv"),
                                  paper(version=2, title="Revised", source="arxiv")])
    assert report.new == ["2401.00001"]
    assert store.papers.get_paper("2401.00001")["title"] == "Revised"


def test_one_batch_of_merges_new_papers_and_repeats(store: Store) -> None:
    add_records(store, [paper(id=f"2401.0000{i}", title=f"Paper number {i} on graphs",
                               source="arxiv") for i in range(1, 4)])
    report = add_records(store, [
        paper(id="2401.00003", title="Paper number 3 on trees", version=2, source="arxiv"),
        paper(id="2402.00001", title="A new paper on lattices", source="arxiv"),
        paper(id="2401.00001", title="Paper number 1 on forests", version=2, source="arxiv"),
        paper(id="2402.00001", title="A new paper on meshes", version=2, source="arxiv"),
    ])
    assert sorted(report.updated) == ["2401.00001", "2401.00003", "2402.00001"]
    assert report.new == ["2402.00001"]
    titles = {p["id"]: p["title"] for p in store.papers.iter_papers()}
    assert titles["2401.00003"].endswith("trees") and titles["2401.00001"].endswith("forests")
    assert titles["2402.00001"].endswith("meshes")
    if store.location.endswith(".db"):
        store.conn.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES('integrity-check', 1)")

    def matching(*words: str) -> set[str]:
        query = KeywordQuery([Term(w) for w in words], "OR")
        pks = [pk for pk, _ in store.search.keyword_search(query, (1, 1, 1))]
        return {row["id"] for row in store.search.search_rows(pks).values()}

    assert matching("trees", "forests", "meshes", "lattices", "graphs") == {
        "2401.00001", "2401.00002", "2401.00003", "2402.00001"}
    assert matching("lattices") == set()


def test_author_slugs_stay_unique(store: Store) -> None:
    add_records(store, [paper(authors=["José Núñez", "Jose Nunez", "jose nunez"])])
    slugs = [a["slug"] for a in store.papers.get_paper("2401.00001")["authors"]]
    assert slugs == ["jose-nunez", "jose-nunez-2", "jose-nunez-3"]


@SQLITE_ONLY
def test_full_text_index_follows_inserts_and_updates(store: Store) -> None:
    def hits(term: str) -> list[str]:
        return [r[0] for r in store.conn.execute(
            "SELECT p.id FROM papers_fts JOIN papers p ON p.pk = papers_fts.rowid"
            " WHERE papers_fts MATCH ?", (term,))]

    add_records(store, [paper(version=1, source="arxiv")])
    assert hits("sparse") == ["2401.00001"] and hits("turing") == ["2401.00001"]
    add_records(store, [paper(version=2, title="Dense retrieval", source="arxiv")])
    assert hits("sparse") == [] and hits("dense") == ["2401.00001"]
    store.conn.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES('integrity-check', 1)")


def test_text_is_stored_as_given(store: Store) -> None:
    title = "<script>alert(1)</script> $\\alpha$-nets"
    add_records(store, [paper(title=title, abstract="Line one\nline two with \\textbf{x}")])
    stored = store.papers.get_paper("2401.00001")
    assert stored["title"] == title and stored["abstract"] == "Line one\nline two with \\textbf{x}"


def test_stats_count_by_source_category_and_month(store: Store) -> None:
    add_records(store, [paper(announced="2025-03-18"),
                         paper(id="2402.00002", title="Other work on graphs", source="arxiv",
                               categories=["cs.LG"], submitted="2025-04-02")])
    stats = store.papers.stats()
    assert stats["papers"] == 2 and stats["by_source"] == {"arxiv": 1, "file": 1}
    assert stats["by_category"] == {"cs.CL": 1, "cs.LG": 1}
    assert stats["by_month"] == {"2025-03": 1, "2025-04": 1}


@SQLITE_ONLY
def test_a_failed_batch_leaves_nothing_behind(store: Store) -> None:
    store.conn.execute("CREATE TRIGGER boom BEFORE INSERT ON paper_sources BEGIN"
                       " SELECT RAISE(ABORT, 'disk on fire'); END")
    with pytest.raises(sqlite3.IntegrityError):
        add_records(store, [paper()])
    assert store.papers.count_papers(include_duplicates=True) == 0
    assert store.conn.execute("SELECT count(*) FROM authors").fetchone()[0] == 0
