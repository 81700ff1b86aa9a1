"""The helper process of a file ingest: reads, parses and prepares lines so the writer only runs SQL."""

from __future__ import annotations

import contextlib
import gc
import marshal
import multiprocessing
import pickle
import queue
import sys
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from papersift.records import PaperRecord, RecordLimits, Skipped
from papersift.records.prepare import PreparedRecord, prepare_record
from papersift.sources import SourceOptions
from papersift.sources.files import KnownLine, batches, read_lines
from papersift.store import open_store

# Lines per message: big enough that encoding and pipe hand-offs cost little per line.
_CHUNK_LINES = 1000
# Chunks the helper may run ahead of the writer (bounds memory: ~2 MB encoded per chunk).
# Three batches' worth, so that parsing goes on while the writer runs a batch's SQL.
_AHEAD = 32


Item = PreparedRecord | KnownLine | Skipped


def _start_method() -> str:
    """fork, which starts at once, where it is safe: on Linux, from a process of one thread.
    A lock another thread holds at the fork (SQLite's, while a server thread reads) stays
    held in the child for good: an ingest run by a serving process (`serve --update-every`),
    or beside a test's readers, hung in the helper's first sqlite3.connect. Elsewhere spawn
    (macOS and Windows lack a safe fork)."""
    return "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"


def file_items(path: Path, options: SourceOptions, store_location: str,
               limits: RecordLimits) -> Iterator[Item]:
    """The items of a JSON-lines file, read, parsed and prepared in a helper process.

    Without --since/--until/--limit, lines already ingested unchanged are recognised by their
    key and not parsed at all. Errors of the helper are raised here.
    """
    context = multiprocessing.get_context(_start_method())
    receiver, sender = context.Pipe(duplex=False)
    helper = context.Process(
        target=_produce, args=(path, options, store_location, limits, sender, receiver),
        name="papersift-ingest-reader", daemon=True)
    helper.start()
    sender.close()
    try:
        while True:
            try:
                message = receiver.recv_bytes()
            except EOFError:
                helper.join(timeout=5)
                raise RuntimeError(
                    f"ingest helper for {path} died (exit code {helper.exitcode})") from None
            if message[:1] == _ITEMS:
                yield from _decode_items(message)
                continue
            kind, payload = pickle.loads(message)
            if kind == "error":
                raise payload
            else:
                return
    finally:
        receiver.close()  # a helper still writing gets a broken pipe and ends
        helper.join(timeout=5)
        if helper.is_alive():
            helper.kill()


# A chunk of items is sent as plain tuples with marshal, which encodes them in about half
# the time pickle takes for the same NamedTuples (the helper is the load's busiest process).
# Other messages, ('done', None) or ('error', exception), are pickled.
_ITEMS = b"I"
_PREPARED, _CACHED, _SKIPPED = 0, 1, 2


def _encode_items(chunk: list[Item]) -> bytes:
    rows: list[tuple[Any, ...]] = []
    for item in chunk:
        if isinstance(item, PreparedRecord):
            rows.append((_PREPARED, *item))
        elif isinstance(item, KnownLine):
            rows.append((_CACHED, *item))
        else:
            rows.append((_SKIPPED, item.source, item.where, item.reason))
    return _ITEMS + marshal.dumps(rows)


def _decode_items(message: bytes) -> list[Item]:
    # A chunk is ~100k small containers: with the collector on, their creation triggers
    # collections that walk them again and again (measured: 5x the cost of decoding).
    enabled = gc.isenabled()
    gc.disable()
    try:
        items: list[Item] = []
        for kind, *fields in marshal.loads(memoryview(message)[1:]):
            if kind == _PREPARED:
                items.append(PreparedRecord._make(fields))
            elif kind == _CACHED:
                items.append(KnownLine._make(fields))
            else:
                items.append(Skipped(*fields))
        return items
    finally:
        if enabled:
            gc.enable()


def _produce(
    path: Path, options: SourceOptions, store_location: str, limits: RecordLimits,
    sender: Connection, receiver: Connection,
) -> None:
    """Helper process: send chunks of items (_encode_items), then ('done', None) or
    ('error', exc), pickled."""
    receiver.close()  # so that the pipe breaks when the writer goes away, even if killed
    # Parsing builds no reference cycles worth collecting, only millions of short-lived
    # containers that make the cyclic collector churn (see _decode_items).
    gc.disable()
    outbox: queue.Queue[bytes | None] = queue.Queue(maxsize=_AHEAD)

    def send_all() -> None:
        # Writing to the pipe releases the GIL, so parsing goes on while a chunk is sent.
        try:
            while (message := outbox.get()) is not None:
                sender.send_bytes(message)
        except OSError:  # the writer is gone: nothing more to do
            pass

    courier = threading.Thread(target=send_all, daemon=True)
    courier.start()

    def post(message: bytes | None) -> None:
        while courier.is_alive():
            try:
                outbox.put(message, timeout=0.5)
                return
            except queue.Full:
                continue
        raise SystemExit(0)  # the writer went away

    def put(kind: str, payload: object) -> None:
        post(pickle.dumps((kind, payload), pickle.HIGHEST_PROTOCOL))

    try:
        for chunk in batches(_prepare(path, options, store_location, limits), _CHUNK_LINES):
            post(_encode_items(chunk))
        put("done", None)
    except SystemExit:
        raise
    except BaseException as exc:  # noqa: BLE001 (handed to the writer)
        put("error", exc)
    finally:
        with contextlib.suppress(SystemExit):
            post(None)
        courier.join()
        sender.close()


def _prepare(path: Path, options: SourceOptions, store_location: str,
             limits: RecordLimits) -> Iterator[Item]:
    """Lines -> items: the records, skips and limit of the file source, prepared."""
    filtered = bool(options.since or options.until or options.limit)
    # Lines known unchanged are only worth skipping on a whole-file run: with a date range or
    # a limit, which lines count depends on their parsed content.
    known = None if filtered else open_store(store_location, readonly=True)
    emitted = 0
    try:
        unchanged = known.papers.current_lines if known else None
        for key, item in read_lines(path, options, limits, unchanged):
            if not isinstance(item, PaperRecord):
                yield item
                continue
            yield prepare_record(item, key)
            emitted += 1
            if options.limit and emitted >= options.limit:
                return
    finally:
        if known is not None:
            known.close()
