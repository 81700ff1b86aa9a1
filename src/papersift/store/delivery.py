"""Delivery: digest schedules, digests and the papers they sent, used links, private feed tokens."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store import readers
from papersift.store.sql import Concern
from papersift.store.tables import BY_NAME

DEFAULTS = {"schedule": "daily", "days": ["mon"], "paused": False}
_READER = "r." + readers.READER.replace(", ", ", r.")  # a reader as Readers gives one
_DIGEST = ", ".join(BY_NAME["digests"].columns)


def _digest(row: dict[str, Any]) -> dict[str, Any]:
    return row | {"papers": json.loads(row["papers"])}


class Delivery(Concern):
    """How each reader is reached (the module says what is kept); no paper is sent twice."""

    def delivery_settings(self, reader_id: int) -> dict[str, Any]:
        """{schedule ('daily', 'weekly', 'off'), days (['mon', ...]), paused}: DEFAULTS if unset."""
        row = self.db.one("SELECT schedule, days, paused FROM delivery_settings"
                          " WHERE reader_id = ?", (reader_id,))
        if row is None:
            return dict(DEFAULTS, days=list(DEFAULTS["days"]))
        return {"schedule": row["schedule"], "days": [d for d in row["days"].split(",") if d],
                "paused": bool(row["paused"])}

    def set_delivery_settings(self, reader_id: int, schedule: str, days: Sequence[str],
                              paused: bool) -> None:
        self.db.execute(
            "INSERT INTO delivery_settings (reader_id, schedule, days, paused)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (reader_id) DO UPDATE SET"
            " schedule = excluded.schedule, days = excluded.days, paused = excluded.paused",
            (reader_id, schedule, ",".join(days), int(paused)))

    def set_feed_token(self, reader_id: int, token_hash: str | None) -> None:
        """The hash of the reader's private feed token (None revokes it)."""
        self.db.execute(
            "INSERT INTO delivery_settings (reader_id, feed_token_hash) VALUES (?, ?)"
            " ON CONFLICT (reader_id) DO UPDATE SET feed_token_hash = excluded.feed_token_hash",
            (reader_id, token_hash))

    def reader_of_feed_token(self, token_hash: str) -> dict[str, Any] | None:
        return self.db.one(
            f"SELECT {_READER} FROM delivery_settings d JOIN readers r ON r.id = d.reader_id"
            " WHERE d.feed_token_hash = ?", (token_hash,))

    def digest_recipients(self) -> list[dict[str, Any]]:
        """Readers with an email address: {reader, settings, last_sent_at}."""
        found = []
        for reader in self.db.dicts(
                f"SELECT {_READER}, (SELECT max(sent_at) FROM digests g WHERE g.reader_id = r.id"
                " AND g.status = 'sent') AS last_sent_at FROM readers r"
                " WHERE r.email IS NOT NULL AND r.email != '' ORDER BY r.id"):
            last = reader.pop("last_sent_at")
            found.append({"reader": reader, "settings": self.delivery_settings(reader["id"]),
                          "last_sent_at": last})
        return found

    def start_digest(self, reader_id: int, day: str, message_id: str,
                     paper_ids: Sequence[str]) -> dict[str, Any]:
        """The reader's digest of that day as stored, or made pending with these papers if none."""
        with self.db.transaction():
            self.db.execute(
                "INSERT INTO digests (reader_id, day, message_id, papers, status, created_at)"
                " VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
                (reader_id, day, message_id, json.dumps(list(paper_ids)), utc_now()))
            row = self.db.one(f"SELECT {_DIGEST} FROM digests WHERE reader_id = ? AND day = ?",
                              (reader_id, day))
        assert row is not None
        return _digest(row)

    def claim_digest(self, digest_id: int, claimant: str, until: str, now: str) -> bool:
        """Take the digest for sending until `until`: True for one caller only, while it is unsent
        and no other claim runs (one past its time is free again: a killed sender holds none)."""
        return self.db.execute(
            "UPDATE digests SET claimed_by = ?, claimed_until = ? WHERE id = ?"
            " AND status != 'sent' AND (claimed_until IS NULL OR claimed_until < ?)",
            (claimant, until, digest_id, now)) > 0

    def mark_digest_sent(self, digest_id: int, sent_at: str) -> None:
        """Sent: its papers count as sent to the reader, in the same transaction."""
        with self.db.transaction():
            row = self.db.one(
                "UPDATE digests SET status = 'sent', sent_at = ?, attempts = attempts + 1,"
                " last_error = NULL, claimed_by = NULL, claimed_until = NULL WHERE id = ?"
                " RETURNING reader_id, papers", (sent_at, digest_id))
            if row is None:
                return
            self.db.executemany(
                "INSERT INTO digest_papers (reader_id, paper_id, digest_id) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                [(row["reader_id"], pid, digest_id) for pid in json.loads(row["papers"])])

    def mark_digest_failed(self, digest_id: int, error: str) -> None:
        self.db.execute("UPDATE digests SET status = 'failed', attempts = attempts + 1,"
                        " last_error = ?, claimed_by = NULL, claimed_until = NULL"
                        " WHERE id = ?", (error[:500], digest_id))

    def digests_of(self, reader_id: int) -> list[dict[str, Any]]:
        """The reader's digests (_DIGEST's columns, `papers` as a list), newest first."""
        return [_digest(r) for r in self.db.dicts(
            f"SELECT {_DIGEST} FROM digests WHERE reader_id = ? ORDER BY day DESC, id DESC",
            (reader_id,))]

    def sent_paper_ids(self, reader_id: int) -> set[str]:
        return set(self.db.column("SELECT paper_id FROM digest_papers WHERE reader_id = ?",
                                  (reader_id,)))

    def use_link(self, nonce: str, reader_id: int, at: str) -> str | None:
        """None the first time (the link is spent), else when it was used before. One
        statement: of two clicks at once, exactly one spends it."""
        if self.db.one("INSERT INTO used_links (nonce, reader_id, used_at) VALUES (?, ?, ?)"
                       " ON CONFLICT DO NOTHING RETURNING nonce", (nonce, reader_id, at)):
            return None
        return str(self.db.value("SELECT used_at FROM used_links WHERE nonce = ?", (nonce,)))
