"""The tables every store backend holds, with the same columns, and their rows read and written alike on each backend: what `papersift migrate` copies from one backend to another.

Each backend keeps its own machinery beside them (SQLite's FTS5 tables and bulk-load marks,
PostgreSQL's tsvector column and data_version), which is rebuilt from these rows, never copied.
A row travels as a tuple of the columns below, in this order, holding None, int, float, str
or bytes; a vector travels as its float32 little-endian bytes (as SQLite stores it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from papersift.store.sql import Concern, chunks, marks

# Parameters of one INSERT (SQLite takes at most 32,766, PostgreSQL 65,535).
_PARAMETERS = 30_000


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]  # unique, and the order rows are read and copied in
    vectors: tuple[str, ...] = ()  # columns holding float32 vectors
    numbered: bool = False  # the key is an integer id the backend hands out

    @property
    def vector_indexes(self) -> list[int]:
        return [self.columns.index(c) for c in self.vectors]


def _t(name: str, columns: str, key: str | None = None, vectors: str = "") -> Table:
    names = tuple(columns.split())
    return Table(name, names, tuple((key or names[0]).split()), tuple(vectors.split()),
                 numbered=key is None and names[0] in ("id", "pk"))


# Login failures are left out: rate-limit marks that count for a day, with no key to copy by.
TABLES: tuple[Table, ...] = (
    _t("papers", "pk id version text_source title abstract authors_text primary_category"
       " submitted updated announced doi comment journal_ref license links norm_key"
       " duplicate_of sort_date"),
    _t("paper_versions", "paper_id version date", "paper_id version"),
    _t("authors", "id name slug"),
    _t("paper_authors", "paper_id position author_id", "paper_id position"),
    _t("paper_categories", "paper_id category position", "paper_id category"),
    _t("paper_sources", "paper_id source record_hash extras", "paper_id source"),
    _t("ingest_runs", "id started_at finished_at sources report"),
    _t("source_lines", "line_key paper_id source record_hash", "line_key"),
    _t("paper_keys", "key paper_id", "key paper_id"),
    _t("title_halves", "half paper_id", "half paper_id"),
    _t("paper_relations", "paper_id kind target", "paper_id kind target"),
    _t("merges", "id record_id paper_id rule reason evidence merged_at unmerged_at"),
    _t("embeddings", "paper_id model text_hash dim vector created_at", "paper_id model",
       vectors="vector"),
    _t("summaries", "paper_id tldr blurb writer model prompt_version input_hash created_at"
       " notes tokens seconds flagged flag_reason hidden", "paper_id"),
    _t("sections", "id slug label position"),
    _t("topics", "id slug label key_phrases llm_label section_id is_other size centroid"
       " created_build retired_build"),
    _t("paper_topics", "paper_id topic_id similarity assigned_by", "paper_id"),
    _t("topic_builds", "id created_at method params n_papers report"),
    _t("topic_redirects", "old_slug new_topic_id reason build_id", "old_slug"),
    _t("topic_label_cache", "input_hash label model created_at notes", "input_hash"),
    _t("readers", "id name email password_hash created_at last_seen_at signals_version link_key"),
    _t("reader_sessions", "token_hash reader_id csrf_token created_at expires_at", "token_hash"),
    _t("invitations", "code_hash created_at expires_at used_by used_at", "code_hash"),
    _t("follows", "reader_id kind value created_at", "reader_id kind value"),
    _t("reactions", "reader_id paper_id reaction at", "reader_id paper_id"),
    _t("collections", "id reader_id name created_at"),
    _t("collection_papers", "collection_id paper_id added_at", "collection_id paper_id"),
    _t("feedback", "id reader_id text at"),
    _t("profile_entries", "id reader_id kind phrase feedback_id created_at"),
    _t("shown", "reader_id paper_id first_at", "reader_id paper_id"),
    _t("claims", "reader_id author_slug created_at", "reader_id author_slug"),
    _t("delivery_settings", "reader_id schedule days paused feed_token_hash", "reader_id"),
    _t("digests", "id reader_id day message_id papers status attempts last_error created_at"
       " sent_at"),
    _t("digest_papers", "reader_id paper_id digest_id", "reader_id paper_id"),
    _t("used_links", "nonce reader_id used_at", "nonce"),
)
BY_NAME = {t.name: t for t in TABLES}


def table(name: str) -> Table:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"no table {name!r}; tables: {', '.join(BY_NAME)}") from None


def row_digest(rows: Iterable[Sequence[Any]]) -> tuple[int, str]:
    """(rows, a digest of their content that does not depend on their order)."""
    total, count = 0, 0
    for row in rows:
        encoded = orjson.dumps([bytes(v).hex() if isinstance(v, bytes | bytearray | memoryview)
                                else v for v in row])
        total = (total + int.from_bytes(hashlib.sha256(encoded).digest()[:8], "big")) % 2**64
        count += 1
    return count, f"{total:016x}"


class Tables(Concern):
    """Every table's rows (TABLES; a row as the module says), in key order, for `papersift migrate`
    to copy and compare; what differs between backends goes through the Database."""

    def table_names(self) -> list[str]:
        """The tables a copy goes through, in order."""
        return [t.name for t in TABLES]

    def count_rows(self, table: str, through: Sequence[Any] | None = None) -> int:
        """Rows of a table (those whose key is at most `through`, if given)."""
        spec = _spec(table)
        where = "" if through is None else f" WHERE ({', '.join(spec.key)}) <= ({marks(spec.key)})"
        return int(self.db.value(f"SELECT count(*) FROM {spec.name}{where}", list(through or ())))

    def last_key(self, table: str) -> tuple[Any, ...] | None:
        """The highest key of a table, None if it is empty."""
        spec = _spec(table)
        order = ", ".join(f"{k} DESC" for k in spec.key)
        rows = self.db.rows(f"SELECT {', '.join(spec.key)} FROM {spec.name}"
                            f" ORDER BY {order} LIMIT 1")
        return tuple(rows[0]) if rows else None

    def read_rows(self, table: str, after: Sequence[Any] | None = None,
                  limit: int = 1000) -> list[tuple[Any, ...]]:
        """Up to `limit` rows in key order, from the first key above `after`."""
        spec = _spec(table)
        keys = ", ".join(spec.key)
        where = "" if after is None else f" WHERE ({keys}) > ({marks(spec.key)})"
        return self.db.copied_rows(
            f"SELECT {', '.join(spec.columns)} FROM {spec.name}{where} ORDER BY {keys} LIMIT ?",
            (*(after or ()), int(limit)), spec.vector_indexes)

    def write_rows(self, table: str, rows: Sequence[Sequence[Any]]) -> int:
        """Add rows in one transaction, skipping those whose key is stored (how many were added);
        what derives from them (the keyword index, the next ids handed out) follows."""
        spec = _spec(table)
        if not rows:
            return 0
        params = self.db.copy_params(rows, spec.vector_indexes)
        stored: set[tuple[Any, ...]] = set()
        with self.db.transaction():
            # Many rows a statement: PostgreSQL's statement triggers (the lexicon's counts) run
            # once a batch, not once a row (`migrate --to` PostgreSQL went at ~50 papers/s).
            for chunk in chunks(params, max(1, _PARAMETERS // len(spec.columns))):
                stored.update(map(tuple, self.db.rows(
                    f"INSERT INTO {spec.name} ({', '.join(spec.columns)}) VALUES "
                    + ", ".join([f"({marks(spec.columns)})"] * len(chunk))
                    + f" ON CONFLICT DO NOTHING RETURNING {', '.join(spec.key)}",
                    [value for row in chunk for value in row])))
            # A row whose key was stored before, or came earlier in the batch, added nothing.
            at = [spec.columns.index(k) for k in spec.key]
            added = []
            for row in rows:
                key = tuple(row[i] for i in at)
                if key in stored:
                    stored.remove(key)  # the first row of its key: a later one added nothing
                    added.append(row)
            self.db.rows_copied(spec.name, added, spec.key[0] if spec.numbered else None)
        return len(added)


_spec = table  # the methods' argument `table` hides the function
