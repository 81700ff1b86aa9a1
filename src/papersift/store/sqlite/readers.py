"""Readers in SQLite: accounts, sessions, login failures, invitations, and each reader's own signals."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store.contracts import StoreConflict
from papersift.store.sqlite.db import Concern, chunks, marks, transaction

_LISTED = "id, name, email, created_at, last_seen_at, signals_version"
_READER = _LISTED + ", link_key"
# Every table that holds a reader's own rows (deleted with the reader).
_OWN_TABLES = ("reader_sessions", "follows", "reactions", "feedback", "profile_entries", "shown",
               "delivery_settings", "digests", "digest_papers", "used_links")
_RANKING = (
    "SELECT p.pk, p.id, p.title, p.abstract, p.authors_text, p.sort_date,"
    # group_concat keeps the order its (ordered) subquery gives it: the primary category first.
    " (SELECT group_concat(category, ' ') FROM (SELECT category FROM paper_categories c"
    "  WHERE c.paper_id = p.id ORDER BY c.position)) AS categories,"
    " (SELECT group_concat(slug, ' ') FROM (SELECT a.slug FROM paper_authors pa JOIN authors a"
    "  ON a.id = pa.author_id WHERE pa.paper_id = p.id ORDER BY pa.position)) AS author_slugs,"
    " pt.topic_id, t.section_id FROM papers p"
    " LEFT JOIN paper_topics pt ON pt.paper_id = p.id"
    " LEFT JOIN topics t ON t.id = pt.topic_id AND t.retired_build IS NULL"
)


def _ranking_row(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"], "title": row["title"], "abstract": row["abstract"],
        "authors": [a for a in row["authors_text"].split(", ") if a],
        "categories": (row["categories"] or "").split(),
        "author_slugs": (row["author_slugs"] or "").split(),
        "topic_id": row["topic_id"], "section_id": row["section_id"],
        "sort_date": row["sort_date"],
    }


class Readers(Concern):
    """Accounts and each reader's signals (contract: ReadersStore)."""

    # ------------------------------------------------------------- accounts
    def add_reader(self, name: str, email: str | None, password_hash: str) -> int:
        try:
            with transaction(self.conn):
                cursor = self.conn.execute(
                    "INSERT INTO readers(name, email, password_hash, created_at)"
                    " VALUES (?,?,?,?)", (name, email, password_hash, utc_now()))
        except sqlite3.IntegrityError:
            raise StoreConflict(f"the name {name!r} is taken") from None
        return int(cursor.lastrowid)

    def find_reader(self, name: str) -> dict[str, Any] | None:
        row = self.conn.execute(f"SELECT {_READER}, password_hash FROM readers WHERE name = ?",
                                (name,)).fetchone()
        return dict(row) if row else None

    def get_reader(self, reader_id: int) -> dict[str, Any] | None:
        row = self.conn.execute(f"SELECT {_READER} FROM readers WHERE id = ?",
                                (reader_id,)).fetchone()
        return dict(row) if row else None

    def list_readers(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            f"SELECT {_LISTED} FROM readers ORDER BY name")]

    def remove_reader(self, reader_id: int) -> bool:
        with transaction(self.conn):
            for table in _OWN_TABLES:
                self.conn.execute(f"DELETE FROM {table} WHERE reader_id = ?", (reader_id,))
            self.conn.execute("DELETE FROM collection_papers WHERE collection_id IN"
                              " (SELECT id FROM collections WHERE reader_id = ?)", (reader_id,))
            self.conn.execute("DELETE FROM collections WHERE reader_id = ?", (reader_id,))
            self.conn.execute("UPDATE invitations SET used_by = NULL WHERE used_by = ?",
                              (reader_id,))
            cursor = self.conn.execute("DELETE FROM readers WHERE id = ?", (reader_id,))
        return cursor.rowcount > 0

    def set_password_hash(self, reader_id: int, password_hash: str) -> None:
        with transaction(self.conn):
            self.conn.execute("UPDATE readers SET password_hash = ? WHERE id = ?",
                              (password_hash, reader_id))

    # ------------------------------------------------------------- sessions
    def add_session(self, reader_id: int, token_hash: str, csrf_token: str,
                    expires_at: str) -> None:
        with transaction(self.conn):
            self.conn.execute(
                "INSERT INTO reader_sessions(token_hash, reader_id, csrf_token, created_at,"
                " expires_at) VALUES (?,?,?,?,?)",
                (token_hash, reader_id, csrf_token, utc_now(), expires_at))

    def session_of(self, token_hash: str, now: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT reader_id, csrf_token, expires_at FROM reader_sessions"
            " WHERE token_hash = ? AND expires_at > ?", (token_hash, now)).fetchone()
        if row is None:
            return None
        reader = self.get_reader(row["reader_id"])
        if reader is None:
            return None
        if (reader["last_seen_at"] or "")[:10] != now[:10]:  # one write a day is enough
            with transaction(self.conn):
                self.conn.execute("UPDATE readers SET last_seen_at = ? WHERE id = ?",
                                  (now, reader["id"]))
        return {"reader": reader, "csrf_token": row["csrf_token"],
                "expires_at": row["expires_at"]}

    def end_session(self, token_hash: str) -> None:
        with transaction(self.conn):
            self.conn.execute("DELETE FROM reader_sessions WHERE token_hash = ?", (token_hash,))

    def end_sessions(self, reader_id: int) -> int:
        with transaction(self.conn):
            cursor = self.conn.execute("DELETE FROM reader_sessions WHERE reader_id = ?",
                                       (reader_id,))
        return cursor.rowcount

    # --------------------------------------------------- logins, invitations
    def claim_login_attempt(self, limits: Sequence[tuple[str, int]], attempt: str,
                            since: str, at: str) -> bool:
        # BEGIN IMMEDIATE: the counts and the marks are one step for every process.
        with transaction(self.conn):
            for key, limit in limits:
                count = self.conn.execute(
                    "SELECT count(*) FROM login_failures WHERE key = ? AND at >= ?",
                    (key, since)).fetchone()[0]
                if count >= limit:
                    return False
            self.conn.executemany(
                "INSERT INTO login_failures(key, at, attempt) VALUES (?, ?, ?)",
                [(key, at, attempt) for key, _ in limits])
            # Old marks count for nothing: keep the table small.
            self.conn.executemany(
                "DELETE FROM login_failures WHERE key = ? AND at < date(?, '-1 day')",
                [(key, at) for key, _ in limits])
        return True

    def forgive_login_attempt(self, attempt: str) -> None:
        with transaction(self.conn):
            self.conn.execute("DELETE FROM login_failures WHERE attempt = ?", (attempt,))

    def clear_login_failures(self, key: str) -> None:
        with transaction(self.conn):
            self.conn.execute("DELETE FROM login_failures WHERE key = ?", (key,))

    def add_invitation(self, code_hash: str, expires_at: str) -> None:
        with transaction(self.conn):
            self.conn.execute("INSERT INTO invitations(code_hash, created_at, expires_at)"
                              " VALUES (?,?,?)", (code_hash, utc_now(), expires_at))

    def invitation_open(self, code_hash: str, now: str) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM invitations WHERE code_hash = ? AND used_at IS NULL"
            " AND expires_at > ?", (code_hash, now)).fetchone() is not None

    def use_invitation(self, code_hash: str, reader_id: int, now: str) -> bool:
        with transaction(self.conn):
            cursor = self.conn.execute(
                "UPDATE invitations SET used_by = ?, used_at = ? WHERE code_hash = ?"
                " AND used_at IS NULL AND expires_at > ?", (reader_id, now, code_hash, now))
        return cursor.rowcount > 0

    # -------------------------------------------------------------- signals
    def _bump(self, reader_id: int) -> None:
        """Inside a write transaction: the reader's signals changed."""
        self.conn.execute("UPDATE readers SET signals_version = signals_version + 1 WHERE id = ?",
                          (reader_id,))

    def _signal(self, reader_id: int, sql: str, params: Sequence[Any]) -> int:
        """Run one write of a reader's signals (bumping their version if it changed a row)."""
        with transaction(self.conn):
            changed = self.conn.execute(sql, params).rowcount
            if changed:
                self._bump(reader_id)
        return changed

    def add_follow(self, reader_id: int, kind: str, value: str) -> bool:
        return self._signal(reader_id, "INSERT OR IGNORE INTO follows(reader_id, kind, value,"
                            " created_at) VALUES (?,?,?,?)",
                            (reader_id, kind, value, utc_now())) > 0

    def remove_follow(self, reader_id: int, kind: str, value: str) -> bool:
        return self._signal(reader_id, "DELETE FROM follows WHERE reader_id = ? AND kind = ?"
                            " AND value = ?", (reader_id, kind, value)) > 0

    def follows_of(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT kind, value, created_at FROM follows WHERE reader_id = ?"
            " ORDER BY created_at, kind, value", (reader_id,))]

    def set_reaction(self, reader_id: int, paper_id: str, reaction: str) -> None:
        self._signal(reader_id, "INSERT INTO reactions(reader_id, paper_id, reaction, at)"
                     " VALUES (?,?,?,?) ON CONFLICT(reader_id, paper_id) DO UPDATE SET"
                     " reaction = excluded.reaction, at = excluded.at",
                     (reader_id, paper_id, reaction, utc_now()))

    def clear_reaction(self, reader_id: int, paper_id: str) -> bool:
        return self._signal(reader_id, "DELETE FROM reactions WHERE reader_id = ?"
                            " AND paper_id = ?", (reader_id, paper_id)) > 0

    def reactions_of(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT paper_id, reaction, at FROM reactions WHERE reader_id = ?"
            " ORDER BY at DESC, paper_id", (reader_id,))]

    # ----------------------------------------------------------- collections
    def _collection_id(self, reader_id: int, name: str) -> int | None:
        row = self.conn.execute("SELECT id FROM collections WHERE reader_id = ? AND name = ?",
                                (reader_id, name)).fetchone()
        return None if row is None else int(row[0])

    def add_to_collection(self, reader_id: int, name: str, paper_id: str) -> None:
        now = utc_now()
        with transaction(self.conn):
            self.conn.execute("INSERT OR IGNORE INTO collections(reader_id, name, created_at)"
                              " VALUES (?,?,?)", (reader_id, name, now))
            collection = self._collection_id(reader_id, name)
            self.conn.execute("INSERT OR IGNORE INTO collection_papers(collection_id, paper_id,"
                              " added_at) VALUES (?,?,?)", (collection, paper_id, now))
            self._bump(reader_id)

    def remove_from_collection(self, reader_id: int, name: str, paper_id: str) -> bool:
        collection = self._collection_id(reader_id, name)
        if collection is None:
            return False
        return self._signal(reader_id, "DELETE FROM collection_papers WHERE collection_id = ?"
                            " AND paper_id = ?", (collection, paper_id)) > 0

    def remove_collection(self, reader_id: int, name: str) -> bool:
        collection = self._collection_id(reader_id, name)
        if collection is None:
            return False
        with transaction(self.conn):
            self.conn.execute("DELETE FROM collection_papers WHERE collection_id = ?",
                              (collection,))
            self.conn.execute("DELETE FROM collections WHERE id = ?", (collection,))
            self._bump(reader_id)
        return True

    def collections_of(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT c.name, count(cp.paper_id) AS papers, c.created_at FROM collections c"
            " LEFT JOIN collection_papers cp ON cp.collection_id = c.id WHERE c.reader_id = ?"
            " GROUP BY c.id ORDER BY c.name", (reader_id,))]

    def collection_papers(self, reader_id: int, name: str) -> list[str] | None:
        collection = self._collection_id(reader_id, name)
        if collection is None:
            return None
        return [r[0] for r in self.conn.execute(
            "SELECT paper_id FROM collection_papers WHERE collection_id = ?"
            " ORDER BY added_at DESC, paper_id", (collection,))]

    # ------------------------------------------------------------- feedback
    def add_feedback(self, reader_id: int, text: str) -> int:
        with transaction(self.conn):
            cursor = self.conn.execute("INSERT INTO feedback(reader_id, text, at) VALUES (?,?,?)",
                                       (reader_id, text, utc_now()))
        return int(cursor.lastrowid)

    def feedback_of(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT id, text, at FROM feedback WHERE reader_id = ? ORDER BY at DESC, id DESC",
            (reader_id,))]

    def add_profile_entry(self, reader_id: int, kind: str, phrase: str,
                          feedback_id: int | None = None) -> int | None:
        with transaction(self.conn):
            cursor = self.conn.execute(
                "INSERT OR IGNORE INTO profile_entries(reader_id, kind, phrase, feedback_id,"
                " created_at) VALUES (?,?,?,?,?)",
                (reader_id, kind, phrase, feedback_id, utc_now()))
            if not cursor.rowcount:
                return None
            self._bump(reader_id)
        return int(cursor.lastrowid)

    def remove_profile_entry(self, reader_id: int, entry_id: int) -> bool:
        return self._signal(reader_id, "DELETE FROM profile_entries WHERE reader_id = ?"
                            " AND id = ?", (reader_id, entry_id)) > 0

    def profile_entries(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT id, kind, phrase, feedback_id, created_at FROM profile_entries"
            " WHERE reader_id = ? ORDER BY id", (reader_id,))]

    # ---------------------------------------------------------------- shown
    def mark_shown(self, reader_id: int, paper_ids: Sequence[str], at: str) -> None:
        with transaction(self.conn):
            self.conn.executemany(
                "INSERT OR IGNORE INTO shown(reader_id, paper_id, first_at) VALUES (?,?,?)",
                [(reader_id, pid, at) for pid in paper_ids])

    def shown_before(self, reader_id: int, before: str) -> set[str]:
        return {r[0] for r in self.conn.execute(
            "SELECT paper_id FROM shown WHERE reader_id = ? AND first_at < ?",
            (reader_id, before))}

    def shown_of(self, reader_id: int) -> list[dict[str, Any]]:
        return [dict(r) for r in self.conn.execute(
            "SELECT paper_id, first_at FROM shown WHERE reader_id = ?"
            " ORDER BY first_at DESC, paper_id", (reader_id,))]

    # -------------------------------------------------------------- ranking
    def ranking_rows(self, ids: Sequence[str] | None = None, since: str | None = None
                     ) -> list[dict[str, Any]]:
        where = "p.duplicate_of IS NULL"
        if ids is not None:
            rows: list[sqlite3.Row] = []
            for chunk in chunks(list(dict.fromkeys(ids))):
                rows += self.conn.execute(
                    f"{_RANKING} WHERE p.id IN ({marks(chunk)}) AND {where}", chunk).fetchall()
            rows.sort(key=lambda r: r["pk"])
        else:
            params: list[Any] = []
            if since is not None:
                where += " AND p.sort_date >= ?"
                params.append(since)
            rows = self.conn.execute(f"{_RANKING} WHERE {where} ORDER BY p.pk", params).fetchall()
        return [_ranking_row(r) for r in rows]

    def background_rows(self, n: int, before: str) -> list[dict[str, Any]]:
        total = self.conn.execute(
            "SELECT count(*) FROM papers WHERE duplicate_of IS NULL AND sort_date < ?",
            (before,)).fetchone()[0]
        if not total or n <= 0:
            return []
        step = max(1, total // n)
        ids = [r[0] for r in self.conn.execute(
            "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY pk) AS k FROM papers"
            " WHERE duplicate_of IS NULL AND sort_date < ?) WHERE k % ? = 0 LIMIT ?",
            (before, step, n))]
        return self.ranking_rows(ids=ids)
