"""TL;DRs and blurbs with provenance, staleness and flags."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store.sql import Concern, dedupe_last, live_since, marks
from papersift.store.tables import BY_NAME

_COLUMNS = BY_NAME["summaries"].columns


class Summaries(Concern):
    def summary_states(self, since: str | None = None, batch: int = 1000
                       ) -> Iterable[dict[str, Any]]:
        """Live papers in pk order with what the summaries stage judges staleness by: id, title,
        abstract, authors (list), sort_date, and the stored summary's summary_hash, flagged,
        hidden (None when the paper has no summary)."""
        where, params = live_since(since)
        for rows in self.db.walk(
                "SELECT p.pk, p.id, p.title, p.abstract, p.authors_text, p.sort_date,"
                " s.input_hash AS summary_hash, s.flagged, s.hidden"
                f" FROM papers p LEFT JOIN summaries s ON s.paper_id = p.id WHERE {where}",
                params, batch):
            for state in rows:
                state["authors"] = [a for a in state.pop("authors_text").split(", ") if a]
                yield state

    def get_summary(self, paper_id: str) -> dict[str, Any] | None:
        """The stored summary of a paper with its provenance and flags (hidden ones too)."""
        row = self.db.one("SELECT * FROM summaries WHERE paper_id = ?", (paper_id,))
        return _summary_dict(row) if row else None

    def summaries_for(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Visible (not hidden) summaries of these papers, by paper id; papers without one are absent."""
        among, params = self.db.any_of("paper_id", list(dict.fromkeys(ids)))
        return {row["paper_id"]: _summary_dict(row) for row in self.db.dicts(
            f"SELECT * FROM summaries WHERE hidden = 0 AND {among}", params)}

    def put_summaries(self, rows: Sequence[dict[str, Any]]) -> int:
        """Insert or replace summaries in one transaction; flags reset unless the row sets them.
        Each row: paper_id, tldr, blurb, writer, input_hash, and optionally model, prompt_version,
        created_at (default now), notes, tokens, seconds, flagged, flag_reason, hidden."""
        if not rows:
            return 0
        now = utc_now()
        values = []
        for row in rows:
            notes = row.get("notes")
            if isinstance(notes, list | dict):
                notes = json.dumps(notes, ensure_ascii=False)
            values.append((
                row["paper_id"], row["tldr"], row["blurb"], row["writer"], row.get("model"),
                row.get("prompt_version"), row["input_hash"], row.get("created_at") or now,
                notes or None, row.get("tokens"), row.get("seconds"), int(bool(row.get("flagged"))),
                row.get("flag_reason"), int(bool(row.get("hidden")))))
        assignments = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])
        with self.db.transaction():
            self.db.executemany(
                f"INSERT INTO summaries ({', '.join(_COLUMNS)}) VALUES ({marks(_COLUMNS)})"
                f" ON CONFLICT (paper_id) DO UPDATE SET {assignments}",
                dedupe_last(values, key=lambda r: r[0]))
        return len(rows)

    def flag_summary(self, paper_id: str, reason: str) -> bool:
        """Mark a summary as wrong (a reader's report); False when the paper has no summary."""
        return self.db.execute(
            "UPDATE summaries SET flagged = 1, flag_reason = ? WHERE paper_id = ?",
            (reason.strip() or "flagged", paper_id)) > 0

    def hide_summary(self, paper_id: str, note: str | None = None) -> bool:
        """Stop showing a summary (kept for the record, with the reason appended to its notes)."""
        return self.db.execute(
            "UPDATE summaries SET hidden = 1, notes = coalesce(notes || '; ' || ?, ?, notes)"
            " WHERE paper_id = ?", (note, note, paper_id)) > 0


def _summary_dict(row: dict[str, Any]) -> dict[str, Any]:
    return row | {"flagged": bool(row["flagged"]), "hidden": bool(row["hidden"])}
