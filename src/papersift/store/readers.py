"""Readers: accounts, sessions, login attempts, invitations, and each reader's own signals."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store.sql import Concern, Database, grouped, live_since
from papersift.store.values import StoreConflict

_LISTED = "id, name, email, created_at, last_seen_at, signals_version"
READER = _LISTED + ", link_key"
# Every table that holds a reader's own rows (deleted with the reader).
_OWN_TABLES = ("reader_sessions", "follows", "reactions", "feedback", "profile_entries", "shown",
               "delivery_settings", "digests", "digest_papers", "used_links", "claims")


class Readers(Concern):
    """Every method that takes a reader_id reads or writes only that reader's rows. A reader is
    a dict: id, name, email, created_at, last_seen_at, signals_version (moves whenever the
    reader's follows, reactions, collections or profile entries change) and link_key (random,
    made with the account: every emailed link carries it, so no link reaches another account).
    Ids are never handed out twice, not even after a reader is removed."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        # A paper as the ranker reads it: categories (the primary first) and author slugs in
        # order, and its live topic.
        categories = db.joined("c.category", "' '", "FROM paper_categories c"
                               " WHERE c.paper_id = p.id", "c.position")
        authors = db.joined("a.slug", "' '", "FROM paper_authors pa JOIN authors a"
                            " ON a.id = pa.author_id WHERE pa.paper_id = p.id", "pa.position")
        self._ranking = (f"SELECT p.id, p.title, p.abstract, p.authors_text, p.sort_date,"
                         f" {categories} AS categories, {authors} AS author_slugs,"
                         " pt.topic_id, t.section_id FROM papers p"
                         " LEFT JOIN paper_topics pt ON pt.paper_id = p.id"
                         " LEFT JOIN topics t ON t.id = pt.topic_id AND t.retired_build IS NULL")

    # ------------------------------------------------------------- accounts
    def add_reader(self, name: str, email: str | None, password_hash: str) -> int:
        """A new reader's id; StoreConflict if the name (any case: both schemas say so) is taken."""
        found = self.db.value("INSERT INTO readers (name, email, password_hash, created_at)"
                              " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
                              (name, email, password_hash, utc_now()))
        if found is None:
            raise StoreConflict(f"the name {name!r} is taken")
        return int(found)

    def find_reader(self, name: str) -> dict[str, Any] | None:
        """The reader of this name (any case), with `password_hash`."""
        return self.db.one(f"SELECT {READER}, password_hash FROM readers"
                           " WHERE lower(name) = lower(?)", (name,))

    def get_reader(self, reader_id: int) -> dict[str, Any] | None:
        return self.db.one(f"SELECT {READER} FROM readers WHERE id = ?", (reader_id,))

    def list_readers(self) -> list[dict[str, Any]]:
        """Every reader, by name, without password hashes or link keys."""
        return self.db.dicts(f"SELECT {_LISTED} FROM readers ORDER BY lower(name), name")

    def remove_reader(self, reader_id: int) -> bool:
        """Delete the reader and everything that is theirs, in one transaction."""
        with self.db.transaction():
            for table in _OWN_TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE reader_id = ?", (reader_id,))
            self.db.execute("DELETE FROM collection_papers WHERE collection_id IN"
                            " (SELECT id FROM collections WHERE reader_id = ?)", (reader_id,))
            self.db.execute("DELETE FROM collections WHERE reader_id = ?", (reader_id,))
            self.db.execute("UPDATE invitations SET used_by = NULL WHERE used_by = ?", (reader_id,))
            return self.db.execute("DELETE FROM readers WHERE id = ?", (reader_id,)) > 0

    def set_password_hash(self, reader_id: int, password_hash: str) -> None:
        self.db.execute("UPDATE readers SET password_hash = ? WHERE id = ?",
                        (password_hash, reader_id))

    # ------------------------------------------------------------- sessions
    def add_session(self, reader_id: int, token_hash: str, csrf_token: str,
                    expires_at: str) -> None:
        self.db.execute(
            "INSERT INTO reader_sessions (token_hash, reader_id, csrf_token, created_at,"
            " expires_at) VALUES (?, ?, ?, ?, ?)",
            (token_hash, reader_id, csrf_token, utc_now(), expires_at))

    def session_of(self, token_hash: str, now: str) -> dict[str, Any] | None:
        """{reader, csrf_token, expires_at} of a session that has not expired (and marks the
        reader seen); None for an unknown or expired one."""
        row = self.db.one("SELECT reader_id, csrf_token, expires_at FROM reader_sessions"
                          " WHERE token_hash = ? AND expires_at > ?", (token_hash, now))
        reader = None if row is None else self.get_reader(row["reader_id"])
        if row is None or reader is None:
            return None
        if (reader["last_seen_at"] or "")[:10] != now[:10]:  # one write a day is enough
            self.db.execute("UPDATE readers SET last_seen_at = ? WHERE id = ?", (now, reader["id"]))
        return {"reader": reader, "csrf_token": row["csrf_token"], "expires_at": row["expires_at"]}

    def end_session(self, token_hash: str) -> None:
        self.db.execute("DELETE FROM reader_sessions WHERE token_hash = ?", (token_hash,))

    def end_sessions(self, reader_id: int) -> int:
        return self.db.execute("DELETE FROM reader_sessions WHERE reader_id = ?", (reader_id,))

    # --------------------------------------------------- logins, invitations
    def claim_login_attempt(self, limits: Sequence[tuple[str, int]], attempt: str,
                            since: str, at: str) -> bool:
        """One atomic step: True, and one mark under each key (tagged `attempt`), if every key
        ('name:ada', 'ip:10.0.0.1', ...) has fewer marks than its limit since `since`; False,
        and nothing written, otherwise. Concurrent claims never pass a limit together."""
        day_before: str | None = None
        with contextlib.suppress(ValueError):  # an `at` that is no date deletes no old marks
            day_before = (dt.date.fromisoformat(at[:10]) - dt.timedelta(days=1)).isoformat()
        with self.db.transaction():
            # One lock per key, taken in key order: the counts and the marks are one step.
            for key in sorted(k for k, _ in limits):
                self.db.lock(key)
            for key, limit in limits:
                if self.db.value("SELECT count(*) FROM login_failures WHERE key = ?"
                                 " AND at >= ?", (key, since)) >= limit:
                    return False
            self.db.executemany("INSERT INTO login_failures (key, at, attempt) VALUES (?, ?, ?)",
                                [(key, at, attempt) for key, _ in limits])
            if day_before is not None:  # old marks count for nothing: keep the table small
                self.db.executemany("DELETE FROM login_failures WHERE key = ? AND at < ?",
                                    [(key, day_before) for key, _ in limits])
        return True

    def forgive_login_attempt(self, attempt: str) -> None:
        """Take back the marks of one attempt (its password was right)."""
        self.db.execute("DELETE FROM login_failures WHERE attempt = ?", (attempt,))

    def clear_login_failures(self, key: str) -> None:
        self.db.execute("DELETE FROM login_failures WHERE key = ?", (key,))

    def add_invitation(self, code_hash: str, expires_at: str) -> None:
        self.db.execute("INSERT INTO invitations (code_hash, created_at, expires_at)"
                        " VALUES (?, ?, ?)", (code_hash, utc_now(), expires_at))

    def invitation_open(self, code_hash: str, now: str) -> bool:
        """Whether an unused, unexpired invitation has this code."""
        return self.db.value("SELECT 1 FROM invitations WHERE code_hash = ?"
                             " AND used_at IS NULL AND expires_at > ?",
                             (code_hash, now)) is not None

    def use_invitation(self, code_hash: str, reader_id: int, now: str) -> bool:
        """Spend an unused, unexpired invitation on this reader; False if there is none."""
        return self.db.execute(
            "UPDATE invitations SET used_by = ?, used_at = ? WHERE code_hash = ?"
            " AND used_at IS NULL AND expires_at > ?", (reader_id, now, code_hash, now)) > 0

    # -------------------------------------------------------------- signals
    def _bump(self, reader_id: int) -> None:
        """Inside a write transaction: the reader's signals changed."""
        self.db.execute("UPDATE readers SET signals_version = signals_version + 1"
                        " WHERE id = ?", (reader_id,))

    def _signal(self, reader_id: int, sql: str, params: Sequence[Any]) -> int:
        """Run one write of a reader's signals (bumping their version if it changed a row)."""
        with self.db.transaction():
            changed = self.db.execute(sql, params)
            if changed:
                self._bump(reader_id)
        return changed

    def add_follow(self, reader_id: int, kind: str, value: str) -> bool:
        """Follow a topic, section, author, category or search; False if already followed."""
        return self._signal(reader_id, "INSERT INTO follows (reader_id, kind, value, created_at)"
                            " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                            (reader_id, kind, value, utc_now())) > 0

    def remove_follow(self, reader_id: int, kind: str, value: str) -> bool:
        return self._signal(reader_id, "DELETE FROM follows WHERE reader_id = ? AND kind = ?"
                            " AND value = ?", (reader_id, kind, value)) > 0

    def follows_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{kind, value, created_at}, oldest first."""
        return self.db.dicts("SELECT kind, value, created_at FROM follows WHERE reader_id = ?"
                             " ORDER BY created_at, kind, value", (reader_id,))

    def set_reaction(self, reader_id: int, paper_id: str, reaction: str) -> None:
        """'up', 'down' or 'not_interested' (replacing the reader's earlier one)."""
        self.set_reactions(reader_id, [paper_id], reaction)

    def set_reactions(self, reader_id: int, paper_ids: Sequence[str], reaction: str) -> None:
        """set_reaction for many papers as one write (an import of a whole library)."""
        if paper_ids:  # in id order: two writers of one reader cannot deadlock
            now = utc_now()
            with self.db.transaction():
                self.db.executemany(
                    "INSERT INTO reactions (reader_id, paper_id, reaction, at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (reader_id, paper_id) DO UPDATE SET"
                    " reaction = excluded.reaction, at = excluded.at",
                    [(reader_id, pid, reaction, now) for pid in sorted(set(paper_ids))])
                self._bump(reader_id)

    def clear_reaction(self, reader_id: int, paper_id: str) -> bool:
        return self._signal(reader_id, "DELETE FROM reactions WHERE reader_id = ?"
                            " AND paper_id = ?", (reader_id, paper_id)) > 0

    def reactions_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{paper_id, reaction, at}, newest first."""
        return self.db.dicts("SELECT paper_id, reaction, at FROM reactions WHERE reader_id = ?"
                             " ORDER BY at DESC, paper_id", (reader_id,))

    # ----------------------------------------------------------- collections
    def _collection_id(self, reader_id: int, name: str) -> int | None:
        return self.db.value("SELECT id FROM collections WHERE reader_id = ? AND name = ?",
                             (reader_id, name))

    def add_to_collection(self, reader_id: int, name: str, paper_id: str) -> None:
        """Save a paper to a named collection (made on first use)."""
        now = utc_now()
        with self.db.transaction():
            self.db.execute("INSERT INTO collections (reader_id, name, created_at)"
                            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (reader_id, name, now))
            self.db.execute("INSERT INTO collection_papers (collection_id, paper_id, added_at)"
                            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            (self._collection_id(reader_id, name), paper_id, now))
            self._bump(reader_id)

    def remove_from_collection(self, reader_id: int, name: str, paper_id: str) -> bool:
        collection = self._collection_id(reader_id, name)
        if collection is None:
            return False
        return self._signal(reader_id, "DELETE FROM collection_papers WHERE collection_id = ?"
                            " AND paper_id = ?", (collection, paper_id)) > 0

    def collections_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{name, papers, created_at}, by name."""
        return self.db.dicts(
            "SELECT c.name, count(cp.paper_id) AS papers, c.created_at FROM collections c"
            " LEFT JOIN collection_papers cp ON cp.collection_id = c.id WHERE c.reader_id = ?"
            " GROUP BY c.id, c.name, c.created_at ORDER BY c.name", (reader_id,))

    def collection_papers(self, reader_id: int, name: str) -> list[str] | None:
        """Paper ids of a collection, newest saved first; None if there is no such collection."""
        collection = self._collection_id(reader_id, name)
        return None if collection is None else self.db.column(
            "SELECT paper_id FROM collection_papers WHERE collection_id = ?"
            " ORDER BY added_at DESC, paper_id", (collection,))

    # --------------------------------------------------------------- claims
    def add_claim(self, reader_id: int, author_slug: str) -> bool:
        """"This is me": the reader says they are this author; False if claimed already."""
        return self._signal(reader_id, "INSERT INTO claims (reader_id, author_slug, created_at)"
                            " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                            (reader_id, author_slug, utc_now())) > 0

    def remove_claim(self, reader_id: int, author_slug: str) -> bool:
        return self._signal(reader_id, "DELETE FROM claims WHERE reader_id = ?"
                            " AND author_slug = ?", (reader_id, author_slug)) > 0

    def claims_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{author_slug, created_at} of the reader's claims, oldest first."""
        return self.db.dicts("SELECT author_slug, created_at FROM claims WHERE reader_id = ?"
                             " ORDER BY created_at, author_slug", (reader_id,))

    def saved_in(self, reader_id: int, paper_ids: Sequence[str]) -> dict[str, list[str]]:
        """{paper_id: names of the reader's collections holding it}; papers in none left out."""
        if not paper_ids:
            return {}
        condition, params = self.db.any_of("cp.paper_id", list(dict.fromkeys(paper_ids)))
        return grouped(self.db.rows(
            "SELECT cp.paper_id, c.name FROM collection_papers cp JOIN collections c"
            f" ON c.id = cp.collection_id WHERE c.reader_id = ? AND {condition}"
            " ORDER BY c.name", [reader_id, *params]))

    # ------------------------------------------------------------- feedback
    def add_feedback(self, reader_id: int, text: str) -> int:
        return int(self.db.value("INSERT INTO feedback (reader_id, text, at) VALUES (?, ?, ?)"
                                 " RETURNING id", (reader_id, text, utc_now())))

    def feedback_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{id, text, at}, newest first."""
        return self.db.dicts("SELECT id, text, at FROM feedback WHERE reader_id = ?"
                             " ORDER BY at DESC, id DESC", (reader_id,))

    def add_profile_entry(self, reader_id: int, kind: str, phrase: str,
                          feedback_id: int | None = None) -> int | None:
        """A 'more', 'less' or 'exclude' entry's id; None if the reader has it already."""
        with self.db.transaction():
            entry = self.db.value(
                "INSERT INTO profile_entries (reader_id, kind, phrase, feedback_id, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
                (reader_id, kind, phrase, feedback_id, utc_now()))
            if entry is not None:
                self._bump(reader_id)
        return None if entry is None else int(entry)

    def remove_profile_entry(self, reader_id: int, entry_id: int) -> bool:
        return self._signal(reader_id, "DELETE FROM profile_entries WHERE reader_id = ?"
                            " AND id = ?", (reader_id, entry_id)) > 0

    def profile_entries(self, reader_id: int) -> list[dict[str, Any]]:
        """{id, kind, phrase, feedback_id, created_at}, oldest first."""
        return self.db.dicts("SELECT id, kind, phrase, feedback_id, created_at"
                             " FROM profile_entries WHERE reader_id = ? ORDER BY id",
                             (reader_id,))

    # ---------------------------------------------------------------- shown
    def mark_shown(self, reader_id: int, paper_ids: Sequence[str], at: str) -> None:
        """Remember these papers as shown (the first time counts)."""
        if paper_ids:  # in id order: two writers of one reader cannot deadlock
            with self.db.transaction():
                self.db.executemany("INSERT INTO shown (reader_id, paper_id, first_at)"
                                    " VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                    [(reader_id, pid, at) for pid in sorted(set(paper_ids))])

    def shown_before(self, reader_id: int, before: str) -> set[str]:
        """Papers first shown to the reader before this time (ISO)."""
        return set(self.db.column("SELECT paper_id FROM shown WHERE reader_id = ?"
                                  " AND first_at < ?", (reader_id, before)))

    def shown_of(self, reader_id: int) -> list[dict[str, Any]]:
        """{paper_id, first_at} of every paper shown to the reader, newest first."""
        return self.db.dicts("SELECT paper_id, first_at FROM shown WHERE reader_id = ?"
                             " ORDER BY first_at DESC, paper_id", (reader_id,))

    # -------------------------------------------------------------- ranking
    def ranking_rows(self, ids: Sequence[str] | None = None, since: str | None = None
                     ) -> list[dict[str, Any]]:
        """Live papers (these ids, or those from `since` on), in storage order: id, title,
        abstract, categories, authors, author_slugs, topic_id, section_id, sort_date."""
        where, params = live_since(since if ids is None else None)
        if ids is not None:
            condition, params = self.db.any_of("p.id", list(dict.fromkeys(ids)))
            where += f" AND {condition}"
        rows = self.db.dicts(f"{self._ranking} WHERE {where} ORDER BY p.pk", params)
        for row in rows:
            row["authors"] = [a for a in row.pop("authors_text").split(", ") if a]
            row["categories"] = (row["categories"] or "").split()
            row["author_slugs"] = (row["author_slugs"] or "").split()
        return rows

    def background_rows(self, n: int, before: str) -> list[dict[str, Any]]:
        """About n live papers from before that day, spread evenly over the store (the same
        ones each time): what a reader's model learns against."""
        total = int(self.db.value("SELECT count(*) FROM papers WHERE duplicate_of IS NULL"
                                  " AND sort_date < ?", (before,)))
        if not total or n <= 0:
            return []
        return self.ranking_rows(ids=self.db.column(
            "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY pk) AS k FROM papers"
            " WHERE duplicate_of IS NULL AND sort_date < ?) AS numbered WHERE k % ? = 0"
            " ORDER BY k LIMIT ?", (before, max(1, total // n), n)))
