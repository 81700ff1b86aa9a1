"""Copy a store into another of any backend (SQLite to PostgreSQL and back), resumably, then prove the copy: every table's row count and content digest on both sides.

The copy goes table by table in key order, in batches that each commit (store.tables), so a copy
that is stopped holds a prefix of every table it reached: run again, it goes on after the target's
last key. Nothing should write to the source meanwhile: the final comparison would say so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from papersift.errors import PapersiftError
from papersift.stages import OnProgress, Progress, Report, no_progress
from papersift.store.contracts import Store
from papersift.store.tables import row_digest, table

BATCH = 2000


class MigrateError(PapersiftError):
    """The target cannot take this copy (it holds other data, or is the source itself)."""


@dataclass
class TableCheck:
    """One table after a copy: its rows and content digest on each side."""

    table: str
    source_rows: int
    source_digest: str
    target_rows: int
    target_digest: str

    @property
    def same(self) -> bool:
        return (self.source_rows, self.source_digest) == (self.target_rows, self.target_digest)


def check_target(source: Store, target: Store) -> None:
    """Refuse a target that is not empty, nor a copy of this source cut short: each of its
    tables must hold as many rows as the source holds up to the target's last key."""
    if source.location == target.location:
        raise MigrateError("the source and the target are the same store")
    for name in source.tables.table_names():
        last = target.tables.last_key(name)
        if last is not None and (target.tables.count_rows(name)
                                 != source.tables.count_rows(name, through=last)):
            raise MigrateError(
                f"the target already holds other data (table {name}); migrate into an empty "
                "database, or into the one an interrupted migrate of this store left")


def _batches(store: Store, name: str, after: Sequence[Any] | None, batch: int
             ) -> Iterator[list[tuple[Any, ...]]]:
    """A table's rows after a key (all, for None), a batch at a time, in key order."""
    spec = table(name)
    while rows := store.tables.read_rows(name, after, batch):
        yield rows
        after = tuple(rows[-1][spec.columns.index(k)] for k in spec.key)


def copy_table(source: Store, target: Store, name: str, batch: int = BATCH,
               on_progress: OnProgress = no_progress) -> int:
    """Copy the rows of one table the target lacks, from after its last key; returns how many."""
    total = source.tables.count_rows(name)
    done = target.tables.count_rows(name)
    copied = 0
    for rows in _batches(source, name, target.tables.last_key(name), batch):
        copied += target.tables.write_rows(name, rows)
        done += len(rows)
        on_progress(Progress("migrate", done, total, name))
    return copied


def compare(source: Store, target: Store, name: str, batch: int = BATCH) -> TableCheck:
    """Rows and content digests of one table on both sides."""
    def digest(store: Store) -> tuple[int, str]:
        return row_digest(row for rows in _batches(store, name, None, batch) for row in rows)

    return TableCheck(name, *digest(source), *digest(target))


def migrate_store(source: Store, target: Store, batch: int = BATCH,
                  on_progress: OnProgress = no_progress) -> Report:
    """Copy `source` into `target` and compare every table; the Report's failures name the
    tables that differ (exit code 1), its details hold each table's figures."""
    started = time.perf_counter()
    report = Report("migrate", counts={"rows": 0, "tables": 0})
    check_target(source, target)
    checks = []
    for name in source.tables.table_names():
        report.counts["rows"] += copy_table(source, target, name, batch, on_progress)
        report.counts["tables"] += 1
    for name in source.tables.table_names():
        on_progress(Progress("migrate", report.counts["tables"], report.counts["tables"],
                             f"comparing {name}"))
        check = compare(source, target, name, batch)
        checks.append(check)
        if not check.same:
            report.failures.append({
                "source": name,
                "error": f"{check.source_rows:,} rows ({check.source_digest}) in the source,"
                         f" {check.target_rows:,} ({check.target_digest}) in the target"})
    report.details["tables"] = {c.table: {"rows": c.target_rows, "digest": c.target_digest,
                                          "same": c.same} for c in checks}
    report.seconds = time.perf_counter() - started
    return report
