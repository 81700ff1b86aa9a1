"""papersift migrate: a store copied into PostgreSQL and back is the same store, a copy stopped halfway goes on when run again, and a target holding other data is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.records.prepare import prepare_record
from papersift.stages import Progress
from papersift.store import Store, open_store
from papersift.store.migrate import MigrateError, compare, migrate_store
from papersift.store.tables import TABLES
from tests.store_sql import run_sql
from tests.test_store_contract import DUPLICATE, MODEL, PAPERS, _topics, record

pytest.importorskip("psycopg")


def fill(store: Store) -> None:
    """Something in every table: papers with a duplicate, vectors, summaries, topics (with a
    redirect), a reader with signals, sessions, invitations and a sent digest."""
    store.papers.upsert_papers([prepare_record(r, line_key=i) for i, r in
                                enumerate([*PAPERS, DUPLICATE])])
    store.papers.record_ingest_run(["file:x"], "2026-01-14T00:00:00Z", {"new": 5})
    rng = np.random.default_rng(3)
    store.embeddings.put_embeddings(MODEL, [(p.id, f"h{i}", rng.normal(size=384).astype(np.float32))
                                            for i, p in enumerate(PAPERS)])
    store.summaries.put_summaries([{"paper_id": p.id, "tldr": f"TL;DR {i}", "blurb": "Blurb.",
                                    "writer": "builtin", "input_hash": "x", "seconds": 0.25,
                                    "notes": ["a", "b"]} for i, p in enumerate(PAPERS)])
    ids = _topics(store)
    store.topics.put_topic_label("hash", "A label", "m", "notes")
    store.topics.replace_topics({
        "method": "test", "n_papers": 4, "sections": [],
        "topics": [{"key": "g", "id": ids["g"], "slug": "graphs", "label": "Graphs",
                    "key_phrases": ["graphs"], "centroid": np.ones(8, np.float32)},
                   {"key": "o", "id": ids["o"], "slug": "other", "label": "Other",
                    "key_phrases": [], "is_other": True}],
        "retired": [{"id": ids["v"], "redirect_to": "g", "reason": "merge"}],
        "assignments": [(p.id, "g", 0.5) for p in PAPERS[:3]] + [(PAPERS[3].id, "o", None)]})
    reader = store.readers.add_reader("Ada", "ada@example.org", "argon2-hash")
    store.readers.add_session(reader, "token", "csrf", "2030-01-01T00:00:00Z")
    store.readers.add_invitation("code", "2030-01-01T00:00:00Z")
    store.readers.add_follow(reader, "topic", "graphs")
    store.readers.add_claim(reader, "ada-lovelace")
    store.readers.set_reaction(reader, PAPERS[0].id, "up")
    store.readers.add_to_collection(reader, "To read", PAPERS[1].id)
    feedback = store.readers.add_feedback(reader, "more about graphs")
    store.readers.add_profile_entry(reader, "more", "graphs", feedback)
    store.readers.mark_shown(reader, [PAPERS[2].id], "2026-01-14T00:00:00Z")
    store.delivery.set_delivery_settings(reader, "weekly", ["mon", "thu"], False)
    digest = store.delivery.start_digest(reader, "2026-01-14", "<m@x>", [PAPERS[0].id])
    store.delivery.mark_digest_sent(digest["id"], "2026-01-14T08:00:00Z")
    store.delivery.use_link("nonce", reader, "2026-01-14T09:00:00Z")


def answers(store: Store) -> dict[str, Any]:
    """What the contracts answer about the filled store (pks and ids as each store has them)."""
    ids, matrix = store.embeddings.embedding_matrix(MODEL)
    reader = store.readers.find_reader("ada")
    return {
        "papers": [store.papers.get_paper(p.id) for p in [*PAPERS, DUPLICATE]],
        "vectors": (ids, matrix.tobytes()),
        "topics": store.topics.list_topics(), "moved": store.topics.find_topic("vision"),
        "sections": store.topics.list_sections(), "day": store.pages.day_papers("2026-01-05"),
        "reader": reader, "reactions": store.readers.reactions_of(reader["id"]),
        "claims": store.readers.claims_of(reader["id"]),
        "digests": store.delivery.digests_of(reader["id"]),
        "label": store.topics.cached_topic_label("hash"),
        "summaries": [store.summaries.get_summary(p.id) for p in PAPERS],
    }


def test_a_store_copied_into_postgresql_and_back_is_the_same_store(
        tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source_path = tmp_path / "source.db"
    with open_store(source_path) as source:
        fill(source)
        before, dump = answers(source), source.papers.dump()
    monkeypatch.setenv("PAPERSIFT_DATABASE_URL", f"sqlite://{source_path}")
    result = CliRunner().invoke(app, ["migrate", "--to", postgres_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["counts"]["tables"] == len(TABLES)
    assert all(t["same"] for t in report["details"]["tables"].values())
    with open_store(postgres_url) as copy:
        assert answers(copy) == before
    back = tmp_path / "back.db"
    monkeypatch.setenv("PAPERSIFT_DATABASE_URL", postgres_url)
    result = CliRunner().invoke(app, ["migrate", "--to", f"sqlite://{back}"])
    assert result.exit_code == 0, result.output
    with open_store(back) as returned:
        # Every row, and the keyword index's terms as the SQLite store itself wrote them.
        assert returned.papers.dump() == dump
        assert answers(returned) == before
    with open_store(postgres_url) as copy:  # the copy carries on: new ids follow the copied
        copy.papers.upsert_papers([prepare_record(record(8, "A paper after the move",
                                                         "2026-01-20", ["New Author"], ["cs.AI"]))])
        assert copy.search.pk_of("2601.00008") > max(copy.search.pk_of(p.id) for p in PAPERS)
        assert copy.readers.add_reader("bob", None, "h") > before["reader"]["id"]


def test_a_copy_stopped_halfway_goes_on_when_run_again(tmp_path: Path, postgres_url: str) -> None:
    with open_store(tmp_path / "source.db") as source, open_store(postgres_url) as target:
        fill(source)
        def stop_in_embeddings(event: Progress) -> None:
            if event.note == "embeddings" and event.done >= 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            migrate_store(source, target, batch=2, on_progress=stop_in_embeddings)
        assert target.tables.count_rows("embeddings") == 2
        assert target.tables.count_rows("summaries") == 0
        report = migrate_store(source, target, batch=2)
        total = sum(source.tables.count_rows(t) for t in source.tables.table_names())
        assert report.ok and report.counts["rows"] == total - _copied_before(source)
        assert target.tables.count_rows("embeddings") == 4


def _copied_before(source: Store) -> int:
    """Rows of the tables before embeddings, plus the two embeddings: what the first run did."""
    names = source.tables.table_names()
    return sum(source.tables.count_rows(t) for t in names[:names.index("embeddings")]) + 2


def test_a_target_holding_other_data_is_refused(tmp_path: Path, postgres_url: str) -> None:
    with open_store(tmp_path / "source.db") as source, open_store(postgres_url) as target:
        fill(source)
        target.papers.upsert_papers([prepare_record(record(7, "Someone else's paper here",
                                                           "2026-01-01", ["Z Z"], ["cs.AI"]))])
        with pytest.raises(MigrateError, match="already holds other data"):
            migrate_store(source, target)
        with pytest.raises(MigrateError, match="the same store"):
            migrate_store(source, source)


def test_the_comparison_finds_a_changed_row(tmp_path: Path, postgres_url: str) -> None:
    with open_store(tmp_path / "source.db") as source, open_store(postgres_url) as target:
        fill(source)
        assert migrate_store(source, target).ok
        run_sql(target, "UPDATE summaries SET blurb = 'Changed.' WHERE paper_id = ?",
                (PAPERS[0].id,))
        check = compare(source, target, "summaries")
        assert check.source_rows == check.target_rows and not check.same


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_rows_are_written_many_a_statement_and_a_stored_key_adds_nothing(
        tmp_path: Path, postgres_url: str, backend: str) -> None:
    """write_rows sends a batch in statements of many rows (here 7,000 rows of 5 columns: two
    statements): a row whose key is stored already, or came earlier in the batch (in the
    same statement or the one before), adds nothing and is not counted; the first one wins."""
    rows = [(f"h{i:05d}", f"label {i}", "m", "2026-01-01", None) for i in range(7000)]
    with open_store(tmp_path / "t.db" if backend == "sqlite" else postgres_url) as target:
        assert target.tables.write_rows("topic_label_cache", rows[:10]) == 10
        again = [(*rows[3][:1], "other", "m", "2026-01-02", None),  # stored before
                 *rows[10:], (*rows[20][:1], "later", "m", "2026-01-03", None),  # in this batch
                 (*rows[6500][:1], "later", "m", "2026-01-03", None)]  # in its statement
        assert target.tables.write_rows("topic_label_cache", again) == 6990
        assert target.tables.count_rows("topic_label_cache") == 7000
        stored = target.tables.read_rows("topic_label_cache", None, 10_000)
    assert [row[:2] for row in stored] == [row[:2] for row in rows]
