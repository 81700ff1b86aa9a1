"""What every writer returns (a summary with its provenance) and the built-in writer as a batch writer."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from papersift.errors import UsageError
from papersift.plugins import Plugins, WriterPlugin
from papersift.settings import Settings
from papersift.summarize.builtin import WRITER_VERSION, Summary, write_builtin_checked


class SummarizeError(UsageError):
    """A writer cannot be used as asked (unknown, or its settings are missing)."""


@dataclass(slots=True)
class Written:
    """One paper's summary as a writer produced it, with what the store records about it."""

    paper_id: str
    summary: Summary
    writer: str                       # who wrote the stored text: 'builtin' or 'llm'
    model: str | None
    prompt_version: str | None
    notes: list[str] = field(default_factory=list)  # fallbacks and gate failures
    tokens: int | None = None
    seconds: float = 0.0
    passed: bool = True               # the final text passed the faithfulness gate
    retry_later: bool = False         # a stand-in (the endpoint failed): the next run tries again


class Writer(Protocol):
    """What the summaries stage asks of a writer."""

    name: str
    identity: str  # changes whenever output for the same input may change (goes into input_hash)
    batch_size: int  # papers per committed batch
    failure: str | None  # set when the writer's service looks down: the stage stops early

    def write_many(self, papers: Sequence[dict[str, Any]]) -> list[Written]: ...

    def close(self) -> None: ...


def input_hash(paper: dict[str, Any], identity: str) -> str:
    """Hash of what a summary depends on: title, abstract, authors and the writer's identity."""
    parts = "\x1f".join((
        paper.get("title") or "", paper.get("abstract") or "",
        "\x1e".join(paper.get("authors") or []), identity,
    ))
    return hashlib.blake2b(parts.encode("utf-8"), digest_size=16).hexdigest()


def builtin_written(paper: dict[str, Any]) -> Written:
    started = time.perf_counter()
    summary, reasons = write_builtin_checked(paper)
    return Written(
        paper_id=paper["id"], summary=summary, writer="builtin", model=WRITER_VERSION,
        prompt_version=None, notes=[f"gate: {r}" for r in reasons],
        seconds=time.perf_counter() - started, passed=not reasons,
    )


class BuiltinWriter:
    """The offline writer (see papersift.summarize.builtin), one paper after another."""

    name = "builtin"
    identity = WRITER_VERSION
    batch_size = 500
    failure = None  # nothing remote to fail

    def __init__(self, settings: Settings | None = None) -> None:
        """Needs no settings (it takes them to be made like every writer)."""

    def write_many(self, papers: Sequence[dict[str, Any]]) -> list[Written]:
        return [builtin_written(paper) for paper in papers]

    def close(self) -> None:
        """Holds nothing to release."""


def register(plugins: Plugins) -> None:
    plugins.writers.add(WriterPlugin(
        "builtin", "offline and deterministic: extractive, rewritten in third person",
        BuiltinWriter))
