"""Undoing a merge across sources: `unmerge`, what `papersift unmerge ID` runs."""

from __future__ import annotations

from typing import Any

from papersift.errors import PapersiftError, UsageError
from papersift.store import Store


class NothingToUnmerge(PapersiftError):
    """The paper exists but nothing was merged into it, nor it into another (exit 1)."""


def unmerge(store: Store, paper_id: str) -> dict[str, Any]:
    """Split `paper_id` from the paper it was merged into (or, for a paper others were merged
    into, split them all); the pairs stay apart in later ingests.

    Returns {"id", "split": the ids that became papers of their own, "undone": the merges
    undone with their reasons}. UsageError for an id the store does not hold (exit 2),
    NothingToUnmerge when nothing was merged (exit 1).
    """
    paper_id = paper_id.strip()
    before = {m["record_id"]: m for m in store.merges.merges_of(paper_id)
              if m["unmerged_at"] is None}
    split = store.merges.unmerge(paper_id)
    if split is None:
        raise UsageError(f"no paper {paper_id!r} in the store")
    if not split:
        raise NothingToUnmerge(f"{paper_id}: nothing was merged into it, nor it into another")
    undone = [{"record_id": r, "paper_id": before[r]["paper_id"] if r in before else None,
               "reason": before[r]["reason"] if r in before else None} for r in split]
    return {"id": paper_id, "split": split, "undone": undone}
