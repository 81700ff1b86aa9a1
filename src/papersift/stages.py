"""What every stage reports: one Progress event type and one Report type (the Stage shape itself is in pipeline.py).

A stage (ingest, embed, topics, summarize) is an object holding its options; its `run`
finds what is missing or stale, works in committed batches (so it can be killed and run
again), reports progress as Progress events and returns a Report. The pipeline is a list
of stages; the command line renders every Progress and Report the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Progress:
    """Where a stage is: `done` of `total` units (None while unknown), and what it is doing.

    `unit` says what is counted when it is not the stage's items: "steps" (a few unequal
    steps, whose rate would mean nothing), "pages"...
    """

    stage: str
    done: int = 0
    total: int | None = None
    note: str = ""
    unit: str = ""


OnProgress = Callable[[Progress], None]


def no_progress(event: Progress) -> None:
    """The on_progress of a caller that does not watch."""


@dataclass
class Report:
    """What one run of a stage did, the same shape for every stage.

    `counts` are the headline figures in the order to show them ("new", "updated", ...);
    `skipped` lists records left out ({source, where, reason}); `failures` lists parts that
    failed while the rest went on ({source, error}); `error` says why the stage as a whole
    stopped early; `details` holds what only this stage reports.
    """

    stage: str
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, str]] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.failures

    def line(self) -> str:
        """The counts as one line: the headline always, the others when not zero
        ('new 5,000 · duplicates 3 · skipped 2')."""
        shown = [(name, value) for i, (name, value) in enumerate(self.counts.items())
                 if i == 0 or value]
        return " · ".join(f"{name.replace('_', ' ')} {value:,}" for name, value in shown)

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "ok": self.ok, "seconds": round(self.seconds, 2),
                "counts": dict(self.counts), "skipped": list(self.skipped),
                "failures": list(self.failures), "error": self.error,
                "details": dict(self.details)}
