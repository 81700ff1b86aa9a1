"""TL;DRs and blurbs in PostgreSQL, with provenance, staleness and flags."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store.postgres.db import Concern, dedupe_last, snapshot, transaction

_COLUMNS = (
    "paper_id", "tldr", "blurb", "writer", "model", "prompt_version", "input_hash", "created_at",
    "notes", "tokens", "seconds", "flagged", "flag_reason", "hidden",
)


class Summaries(Concern):
    """Summaries with their provenance and flags (contract: SummariesStore)."""

    # ----------------------------------------------------------------- reads
    def summary_states(
        self, since: str | None = None, batch: int = 1000
    ) -> Iterable[dict[str, Any]]:
        """Every paper (not duplicates) with what the summaries stage needs to judge staleness,
        in pk order (see SummariesStore.summary_states)."""
        clauses, params = ["p.duplicate_of IS NULL"], []
        if since:
            clauses.append("p.sort_date >= %s")
            params.append(since)
        where = " AND ".join(clauses)
        last = 0
        while True:
            rows = self.dicts(
                "SELECT p.pk, p.id, p.title, p.abstract, p.authors_text, p.sort_date,"
                " s.input_hash AS summary_hash, s.flagged, s.hidden"
                " FROM papers p LEFT JOIN summaries s ON s.paper_id = p.id"
                f" WHERE p.pk > %s AND {where} ORDER BY p.pk LIMIT %s",
                (last, *params, batch))
            if not rows:
                return
            for state in rows:
                state["authors"] = [a for a in state.pop("authors_text").split(", ") if a]
                yield state
            last = rows[-1]["pk"]

    def get_summary(self, paper_id: str) -> dict[str, Any] | None:
        """The stored summary of a paper with its provenance and flags (hidden ones too)."""
        rows = self.dicts("SELECT * FROM summaries WHERE paper_id = %s", (paper_id,))
        return _summary_dict(rows[0]) if rows else None

    def summaries_for(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Visible (not hidden) summaries of these papers, by paper id."""
        return {row["paper_id"]: _summary_dict(row) for row in self.dicts(
            "SELECT * FROM summaries WHERE hidden = 0 AND paper_id = ANY(%s::text[])",
            (list(dict.fromkeys(ids)),))}

    def summary_stats(self) -> dict[str, Any]:
        """How many papers have summaries, by writer, and how many are flagged or hidden."""
        with snapshot(self.conn):
            papers = self.value("SELECT count(*) FROM papers WHERE duplicate_of IS NULL")
            summarized = self.value(
                "SELECT count(*) FROM summaries s JOIN papers p ON p.id = s.paper_id"
                " WHERE p.duplicate_of IS NULL")
            flagged, hidden, with_notes = self.one(
                "SELECT count(*) FILTER (WHERE flagged = 1), count(*) FILTER (WHERE hidden = 1),"
                " count(notes) FROM summaries")
            by_writer = dict(self.rows(
                "SELECT writer, count(*) FROM summaries GROUP BY writer ORDER BY writer"))
        return {"papers": papers, "summarized": summarized, "missing": papers - summarized,
                "by_writer": by_writer, "flagged": flagged, "hidden": hidden,
                "with_notes": with_notes}

    # ---------------------------------------------------------------- writes
    def put_summaries(self, rows: Sequence[dict[str, Any]]) -> int:
        """Insert or replace summaries in one transaction; flags reset unless the row sets them."""
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
                notes or None, row.get("tokens"), row.get("seconds"),
                int(bool(row.get("flagged", False))), row.get("flag_reason"),
                int(bool(row.get("hidden", False))),
            ))
        assignments = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[1:])
        with transaction(self.conn), self.conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO summaries ({', '.join(_COLUMNS)})"
                f" VALUES ({', '.join(['%s'] * len(_COLUMNS))})"
                f" ON CONFLICT (paper_id) DO UPDATE SET {assignments}",
                dedupe_last(values, key=lambda r: r[0]))
        return len(values)

    def flag_summary(self, paper_id: str, reason: str) -> bool:
        """Mark a summary as wrong (a reader's report); False when the paper has no summary."""
        with transaction(self.conn):
            cursor = self.conn.execute(
                "UPDATE summaries SET flagged = 1, flag_reason = %s WHERE paper_id = %s",
                (reason.strip() or "flagged", paper_id))
        return cursor.rowcount > 0

    def hide_summary(self, paper_id: str, note: str | None = None) -> bool:
        """Stop showing a summary (kept for the record, with the reason appended to its notes)."""
        with transaction(self.conn):
            cursor = self.conn.execute(
                "UPDATE summaries SET hidden = 1,"
                " notes = CASE WHEN %(note)s::text IS NULL THEN notes"
                "  WHEN notes IS NULL THEN %(note)s ELSE notes || '; ' || %(note)s END"
                " WHERE paper_id = %(id)s", {"note": note, "id": paper_id})
        return cursor.rowcount > 0


def _summary_dict(row: dict[str, Any]) -> dict[str, Any]:
    row["flagged"] = bool(row["flagged"])
    row["hidden"] = bool(row["hidden"])
    return row
