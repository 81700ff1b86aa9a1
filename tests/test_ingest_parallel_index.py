"""A bulk load's indexes, built by a helper process and at the end: same indexes, replayed changes, resume."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from papersift.ingest.stage import Ingest
from papersift.records import PaperRecord
from papersift.settings import Settings
from papersift.store import Store, StoreError, add_records, open_store
from papersift.store.sqlite import fulltext
from papersift.store.sqlite.bulk import DEFERRABLE_INDEXES, build_deferred_indexes, defer_indexes
from papersift.store.sqlite.db import transaction
from papersift.store.sqlite.fulltext import ScratchIndex, adopt_index, scratch_path
from tests.test_ingest_files import RECENT, SNAPSHOT, head_lines, write_jsonl


def paper(paper_id: str, title: str, version: int = 1) -> PaperRecord:
    return PaperRecord(id=paper_id, title=title, abstract=f"On {title.lower()}.", version=version,
                       authors=["Ada Lovelace"], categories=["cs.LG"], source="arxiv")


def check_index(store: Store) -> None:
    store.conn.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES('integrity-check', 1)")
    assert store.conn.execute("SELECT count(*) FROM fulltext_deferred").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM fulltext_log").fetchone()[0] == 0
    assert not scratch_path(store.path).exists()


def index_names(store: Store) -> set[str]:
    return {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}


def matches(store: Store, query: str) -> list[str]:
    return [r[0] for r in store.conn.execute(
        "SELECT p.id FROM papers_fts JOIN papers p ON p.pk = papers_fts.rowid"
        " WHERE papers_fts MATCH ? ORDER BY p.id", (query,))]


def test_parallel_index_is_the_index_an_inline_load_builds(tmp_path: Path,
                                                           settings: Settings) -> None:
    # Both layouts, and the snapshot lines twice: the second copy must count as unchanged.
    lines = head_lines(RECENT, 1200) + head_lines(SNAPSHOT, 600) + head_lines(SNAPSHOT, 600)
    source = write_jsonl(tmp_path / "mixed.jsonl", lines)
    with open_store(tmp_path / "a" / "papersift.db") as parallel, \
            open_store(tmp_path / "b" / "papersift.db") as inline:
        first = Ingest([f"file:{source}"], batch_size=300, parallel_index=True).run(parallel, settings)
        second = Ingest([f"file:{source}"], batch_size=300, parallel_index=False).run(inline, settings)
        assert first.details["parallel_index"] and not second.details["parallel_index"]
        assert (first.counts["new"], first.counts["updated"], first.counts["unchanged"]) == (
            second.counts["new"], second.counts["updated"], second.counts["unchanged"])
        check_index(parallel)
        assert parallel.papers.dump() == inline.papers.dump()
        # The keys of the lines read, held back during the bulk load, are all written.
        lines = "SELECT * FROM source_lines ORDER BY line_key"
        assert parallel.conn.execute(lines).fetchall() == inline.conn.execute(lines).fetchall()
        assert len(parallel.conn.execute(lines).fetchall()) == 1800
        # The connection that was open while the index was copied in sees it.
        assert matches(parallel, "learning") == matches(inline, "learning") != []


def test_text_changes_during_the_build_are_replayed(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fulltext, "_ROWS_PER_READ", 2)  # rows are read a few at a time
    def load(store: Store, index: ScratchIndex | None) -> None:
        add_records(store, [paper(f"2401.0000{i}", f"Graphs number {i}") for i in range(1, 6)])
        if index:
            assert index.catch_up() == 5
        add_records(store, [paper("2401.00002", "Trees and forests", version=2),  # indexed
                             paper("2401.00006", "Meshes and lattices")])
        with transaction(store.conn):
            store.conn.execute("DELETE FROM papers WHERE id = '2401.00003'")
        add_records(store, [paper("2401.00006", "Lattices alone", version=2)])  # not yet
        if index:
            assert index.catch_up() == 1
        add_records(store, [paper("2401.00004", "Sheaves at last", version=3)])

    with open_store(tmp_path / "a" / "papersift.db") as deferred, \
            open_store(tmp_path / "b" / "papersift.db") as inline:
        assert defer_indexes(deferred.conn)
        index = ScratchIndex(deferred.path, scratch_path(deferred.path))
        load(deferred, index)
        load(inline, None)
        assert deferred.conn.execute("SELECT count(*) FROM fulltext_log").fetchone()[0] == 4
        assert matches(deferred, "graphs") == []  # the store's own index waits
        index.close()
        assert build_deferred_indexes(deferred.conn) == sorted(DEFERRABLE_INDEXES)
        assert adopt_index(deferred.path, scratch_path(deferred.path), *index.position)
        scratch_path(deferred.path).unlink()
        check_index(deferred)
        assert deferred.papers.dump() == inline.papers.dump()
        assert matches(deferred, "lattices") == ["2401.00006"]
        assert matches(deferred, "meshes OR forests") == ["2401.00002"]
        assert matches(deferred, "graphs") == ["2401.00001", "2401.00005"]


def test_a_store_with_papers_is_indexed_inline(store: Store) -> None:
    add_records(store, [paper("2401.00001", "Graphs")])
    with store.papers.bulk_load(True) as parallel:
        assert not parallel
    assert not defer_indexes(store.conn)


def test_an_interrupted_build_is_finished_by_the_next_ingest(
    tmp_path: Path, store: Store, settings: Settings
) -> None:
    # What a killed bulk load leaves: papers committed, the index not yet built.
    assert defer_indexes(store.conn)
    add_records(store, [paper("2401.00001", "Graphs before the kill")])
    assert store.papers.stats()["full_text_index_pending"]
    assert store.papers.stats()["indexes_pending"] == sorted(DEFERRABLE_INDEXES)
    assert not index_names(store) & set(DEFERRABLE_INDEXES)
    source = write_jsonl(tmp_path / "small.jsonl", head_lines(RECENT, 50))
    report = Ingest([f"file:{source}"]).run(store, settings)  # small: would be indexed inline
    assert report.details["parallel_index"]
    check_index(store)
    assert matches(store, "kill") == ["2401.00001"]
    assert not store.papers.stats()["full_text_index_pending"]
    assert store.papers.stats()["indexes_pending"] == []
    assert index_names(store) >= set(DEFERRABLE_INDEXES)
    assert store.conn.execute("SELECT count(*) FROM papers_fts_docsize").fetchone()[0] == 51


def test_a_helper_that_dies_is_reported_and_the_next_ingest_builds_the_index(
    tmp_path: Path, store: Store, settings: Settings
) -> None:
    with pytest.raises(StoreError, match="helper died.*ingest. again"), \
            store.papers.bulk_load(True) as parallel:
        assert parallel
        add_records(store, [paper("2401.00001", "Graphs before the crash")])
        for process in multiprocessing.active_children():
            if process.name == "papersift-fulltext":
                process.kill()
                process.join()
    assert store.papers.stats()["full_text_index_pending"]
    assert not scratch_path(store.path).exists()
    source = write_jsonl(tmp_path / "small.jsonl", head_lines(RECENT, 20))
    assert Ingest([f"file:{source}"]).run(store, settings).details["parallel_index"]
    check_index(store)
    assert matches(store, "crash") == ["2401.00001"]
