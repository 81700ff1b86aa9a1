"""A bulk load's full-text index, built from committed papers by a helper process and copied in at the end.

Indexing for FTS5 is about a quarter of what a bulk insert costs the writer. A store with no papers
has an empty index, so a helper can build it in a scratch database (Papers.bulk_load runs this).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NamedTuple

from papersift.store.sql import marks
from papersift.store.sqlite.db import PAGE_SIZE, snapshot, transaction
from papersift.store.values import StoreError

# FTS5 settings that only shape how an index is written: the helper builds with the store's.
_BUILD_SETTINGS = ("hashsize", "automerge", "crisismerge", "usermerge", "pgsz")
# Where an FTS5 index lives (papers_fts_config, its settings, stays the store's own).
_INDEX_TABLES = ("papers_fts_data", "papers_fts_idx", "papers_fts_docsize")
# Rows the helper reads at a time: a bound on its memory (~1.5 KB each, ~8 MB in all).
_ROWS_PER_READ = 5_000
# How often an idle helper looks for newly committed papers.
_POLL_SECONDS = 0.25
# The helper's scheduling priority relative to the writer (see _build).
_NICENESS = 15


def fulltext_deferred(conn: sqlite3.Connection) -> bool:
    """True while a parallel build owns the index: paper writes then leave papers_fts alone."""
    return conn.execute("SELECT 1 FROM fulltext_deferred").fetchone() is not None


def scratch_path(db_path: Path) -> Path:
    """The helper's own database, next to the store's (it is removed when the build ends)."""
    return db_path.with_name(db_path.name + "-fulltext")


class News(NamedTuple):
    """What the store committed after a position of an index (see read_news)."""

    changes: list[tuple[Any, ...]]  # (pk, old title, abstract, authors, new ones or NULLs)
    rows: list[tuple[Any, ...]]  # (pk, title, abstract, authors_text) above the watermark
    watermark: int
    last_seq: int


def read_news(conn: sqlite3.Connection, store: str, watermark: int, last_seq: int,
              limit: int | None = None) -> News:
    """The changes and rows that bring an index at (watermark, last_seq) up to the papers of schema
    `store`, read in the caller's one transaction. Rows up to `watermark` were indexed as they were
    at the log's sequence `last_seq`: the changes logged since are replayed on them. Rows above it
    are indexed as they are now, at most `limit` (the returned watermark is the last one's)."""
    seq = conn.execute(f"SELECT coalesce(max(seq), 0) FROM {store}.fulltext_log").fetchone()[0]
    changes = conn.execute(
        f"SELECT pk, old_title, old_abstract, old_authors_text, new_title, new_abstract,"
        f" new_authors_text FROM {store}.fulltext_log WHERE seq > ? AND seq <= ? AND pk <= ?"
        " ORDER BY seq", (last_seq, seq, watermark)).fetchall()
    rows = conn.execute(
        f"SELECT pk, title, abstract, authors_text FROM {store}.papers WHERE pk > ? ORDER BY pk"
        " LIMIT ?", (watermark, -1 if limit is None else limit)).fetchall()
    return News(changes, rows, rows[-1][0] if rows else watermark, seq)


def apply_news(conn: sqlite3.Connection, index: str, news: News) -> int:
    """Write what read_news found into the index in schema `index`; returns the rows indexed."""
    insert = (f"INSERT INTO {index}.papers_fts(rowid, title, abstract, authors_text)"
              " VALUES (?, ?, ?, ?)")
    for pk, *texts in news.changes:
        conn.execute(
            f"INSERT INTO {index}.papers_fts(papers_fts, rowid, title, abstract, authors_text)"
            " VALUES ('delete', ?, ?, ?, ?)", (pk, *texts[:3]))
        if texts[3] is not None:
            conn.execute(insert, (pk, *texts[3:]))
    conn.executemany(insert, news.rows)
    return len(news.rows)


def adopt_index(db_path: Path, scratch: Path, watermark: int, last_seq: int) -> bool:
    """Copy the helper's index into the store, bring it up to date and end the deferral;
    False if the copy did not cover every paper and the index was rebuilt instead."""
    # A connection of its own: FTS5 caches an index's structure per connection, and the
    # store's connection sees the new one as a change made by another connection.
    with contextlib.closing(sqlite3.connect(db_path, isolation_level=None, timeout=30)) as conn:
        conn.execute("ATTACH DATABASE ? AS built", (str(scratch),))
        with transaction(conn):
            for table in _INDEX_TABLES:
                conn.execute(f"DELETE FROM main.{table}")
                conn.execute(f"INSERT INTO main.{table} SELECT * FROM built.{table}")
            apply_news(conn, "main", read_news(conn, "main", watermark, last_seq))
            documents = conn.execute("SELECT count(*) FROM papers_fts_docsize").fetchone()[0]
            complete = documents == conn.execute("SELECT count(*) FROM papers").fetchone()[0]
            if not complete:
                # Only if papers were deleted and their pks reused mid-build: slow but exact.
                conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")
            conn.execute("DELETE FROM fulltext_log")
            conn.execute("DELETE FROM fulltext_deferred")
        conn.execute("DETACH DATABASE built")
    return complete


class FulltextBuilder:
    """The helper process that builds a bulk load's full-text index, and the two pipes to it."""

    def __init__(self, db_path: Path) -> None:
        self.scratch = scratch_path(db_path)
        # fork starts at once; elsewhere (macOS, Windows) fork is unsafe or missing.
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        commands, self._commands = context.Pipe(duplex=False)
        self._replies, replies = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_build, args=(db_path, self.scratch, commands, replies, os.getpid()),
            name="papersift-fulltext", daemon=True)
        self._process.start()
        commands.close()
        replies.close()

    def request_finish(self) -> None:
        """Tell the helper every paper is committed (it then indexes the last ones)."""
        with contextlib.suppress(OSError):  # a helper that died is reported by finish()
            self._commands.send("finish")

    def finish(self) -> tuple[int, int]:
        """After request_finish, wait for the helper to index every committed paper: (watermark,
        last_seq). StoreError if it failed (the store stays marked: the next ingest builds it)."""
        again = "the papers are stored; run `papersift ingest` again to build the index"
        try:
            kind, payload = self._replies.recv()
        except (EOFError, OSError):
            self._process.join(timeout=5)
            raise StoreError(f"the full-text index helper died (exit code "
                             f"{self._process.exitcode}); {again}") from None
        if kind == "error":
            raise StoreError(f"the full-text index could not be built ({payload}); {again}"
                             ) from payload
        return payload  # type: ignore[no-any-return]

    def close(self) -> None:
        self._commands.close()
        self._replies.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self.scratch.unlink(missing_ok=True)


def _build(db_path: Path, scratch: Path, commands: Connection, replies: Connection,
           parent: int) -> None:
    """Helper process: index committed papers until told to finish, then reply."""
    # On two cores shared by three processes this helper takes CPU the parser and the writer
    # need. Low priority lets it use what they leave idle, and it catches up at the end,
    # while the writer builds the deferred indexes on the other core (measured: the load
    # ends ~9% sooner at nice 10 to 19 than at 5; 15 was the most consistent).
    with contextlib.suppress(AttributeError, OSError):  # os.nice is POSIX-only
        os.nice(_NICENESS)
    try:
        result = _index_until_finished(db_path, scratch, commands, parent)
        if result is not None:
            replies.send(("done", result))
    except BaseException as exc:  # noqa: BLE001 (handed to the writer)
        with contextlib.suppress(OSError):
            replies.send(("error", exc))
    finally:
        replies.close()


def _index_until_finished(db_path: Path, scratch: Path, commands: Connection, parent: int
                          ) -> tuple[int, int] | None:
    with contextlib.closing(ScratchIndex(db_path, scratch)) as index:
        while True:
            index.catch_up()
            try:
                if commands.poll(_POLL_SECONDS) and commands.recv() == "finish":
                    index.catch_up()  # the writer has committed its last paper
                    return index.position
            except EOFError:
                return None  # the writer is gone
            if os.getppid() != parent:
                return None


class ScratchIndex:
    """The helper's index: a scratch database holding papers_fts as the store defines it,
    with the store attached (read only) as `store`."""

    def __init__(self, db_path: Path, scratch: Path) -> None:
        scratch.unlink(missing_ok=True)
        self.conn = sqlite3.connect(scratch.resolve().as_uri(), isolation_level=None, uri=True)
        # A scratch file: if anything goes wrong it is thrown away and built again.
        for pragma in (f"page_size = {PAGE_SIZE}", "journal_mode = OFF", "synchronous = OFF"):
            self.conn.execute(f"PRAGMA {pragma}")
        self.conn.execute("ATTACH DATABASE ? AS store", (db_path.resolve().as_uri() + "?mode=ro",))
        self.conn.execute(self.conn.execute(
            "SELECT sql FROM store.sqlite_master WHERE name = 'papers_fts'").fetchone()[0])
        settings = self.conn.execute(
            f"SELECT k, v FROM store.papers_fts_config WHERE k IN ({marks(_BUILD_SETTINGS)})",
            _BUILD_SETTINGS).fetchall()
        self.conn.executemany("INSERT INTO papers_fts(papers_fts, rank) VALUES (?, ?)", settings)
        self.position = (0, 0)  # (watermark, last_seq): see read_news

    def catch_up(self) -> int:
        """Index what the store has committed since the last call; returns the rows indexed."""
        indexed = 0
        while True:
            # Read in one short transaction, then index with the store let go: while a reader
            # holds its snapshot, the writer's checkpoints cannot reuse the WAL, which grew to
            # ~1 GB when rows were indexed inside it (~120 MB now).
            # A deferred BEGIN: IMMEDIATE would also lock the store against its writer.
            with snapshot(self.conn):
                news = read_news(self.conn, "store", *self.position, limit=_ROWS_PER_READ)
            self.conn.execute("BEGIN")
            indexed += apply_news(self.conn, "main", news)
            self.conn.execute("COMMIT")
            self.position = (news.watermark, news.last_seq)
            if len(news.rows) < _ROWS_PER_READ:
                return indexed

    def close(self) -> None:
        self.conn.close()
