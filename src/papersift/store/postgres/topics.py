"""Topics in PostgreSQL: sections, paper assignments, rebuild history, slug redirects and LLM names."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from papersift.clock import utc_now
from papersift.store.postgres.db import Concern, dedupe_last, retrying, snapshot, transaction

# A topic as every reader of this concern gets it; `label` is what readers see.
_TOPIC_COLUMNS = (
    "t.id, t.slug, coalesce(t.llm_label, t.label) AS label, t.label AS key_label, t.llm_label,"
    " t.key_phrases, t.section_id, t.is_other, t.size, t.created_build, t.retired_build,"
    " s.slug AS section_slug, s.label AS section_label"
)
_SECTION_JOIN = "LEFT JOIN sections s ON s.id = t.section_id"
_TOPIC_FROM = f"topics t {_SECTION_JOIN}"
# How many redirects find_topic follows (merges and renames chain; never loop).
_REDIRECT_HOPS = 10


def _topic_dict(row: dict[str, Any]) -> dict[str, Any]:
    row["key_phrases"] = json.loads(row["key_phrases"] or "[]")
    row["is_other"] = bool(row["is_other"])
    return row


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(bytes(blob), dtype="<f4").copy()


def _monday(day: str) -> str | None:
    """The Monday of the week of an ISO day (None if it is not one, as SQLite's date())."""
    try:
        date = dt.date.fromisoformat(day[:10])
    except ValueError:
        return None
    return (date - dt.timedelta(days=date.weekday())).isoformat()


class Topics(Concern):
    """Topics, sections and assignments (contract: TopicsStore); see the SQLite store's."""

    # ------------------------------------------------------------- stage reads
    def topic_texts(self, model: str) -> dict[str, tuple[str, str]]:
        """(title, abstract) of every non-duplicate paper with an embedding of this model."""
        return {r[0]: (r[1], r[2]) for r in self.rows(
            "SELECT p.id, p.title, p.abstract FROM papers p JOIN embeddings e"
            " ON e.paper_id = p.id AND e.model = %s WHERE p.duplicate_of IS NULL", (model,))}

    def topic_state(self) -> dict[str, Any]:
        """What a rebuild maps against: active topics with centroids, the paper assignments,
        and every slug already taken (active, retired, redirected, sections)."""
        with snapshot(self.conn):
            topics = [{
                "id": r["id"], "slug": r["slug"], "label": r["label"],
                "key_phrases": json.loads(r["key_phrases"] or "[]"),
                "llm_label": r["llm_label"], "is_other": bool(r["is_other"]), "size": r["size"],
                "centroid": _vector(r["centroid"]),
            } for r in self.dicts(
                "SELECT id, slug, label, key_phrases, llm_label, is_other, size, centroid"
                " FROM topics WHERE retired_build IS NULL ORDER BY id")]
            sections = self.dicts(
                "SELECT s.id, s.slug, s.label, coalesce(array_agg(t.id ORDER BY t.id)"
                " FILTER (WHERE t.id IS NOT NULL), '{}') AS topic_ids FROM sections s"
                " LEFT JOIN topics t ON t.section_id = s.id AND t.retired_build IS NULL"
                " GROUP BY s.id ORDER BY s.position, s.id")
            taken = {r[0] for r in self.rows(
                "SELECT slug FROM topics UNION SELECT old_slug FROM topic_redirects"
                " UNION SELECT slug FROM sections")}
            assignments = dict(self.rows("SELECT paper_id, topic_id FROM paper_topics"))
        for section in sections:
            section["topic_ids"] = list(section["topic_ids"])
        return {"topics": topics, "sections": sections, "assignments": assignments,
                "taken_slugs": taken}

    def topic_centroids(self) -> tuple[list[int], np.ndarray, int | None]:
        """(ids, unit centroid matrix) of active topics that are not "other", and the other id."""
        ids, vectors, other = [], [], None
        for topic_id, is_other, centroid in self.rows(
                "SELECT id, is_other, centroid FROM topics WHERE retired_build IS NULL ORDER BY id"):
            if is_other:
                other = topic_id
            elif centroid is not None:
                ids.append(topic_id)
                vectors.append(_vector(centroid))
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), np.float32)
        return ids, matrix, other

    def assigned_paper_ids(self) -> set[str]:
        return {r[0] for r in self.rows("SELECT paper_id FROM paper_topics")}

    def latest_topic_build(self) -> dict[str, Any] | None:
        rows = self.dicts("SELECT * FROM topic_builds ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        build = rows[0]
        build["params"] = json.loads(build["params"] or "{}")
        build["report"] = json.loads(build["report"] or "{}")
        return build

    # ----------------------------------------------------------------- writes
    def replace_topics(self, build: dict[str, Any]) -> dict[str, Any]:
        """Write a whole rebuild in one transaction (see TopicsStore.replace_topics and the
        SQLite store's for the plan's shape)."""
        return retrying(self.conn, lambda: self._replace(build))

    def _replace(self, build: dict[str, Any]) -> dict[str, Any]:
        # One rebuild at a time, and assignments wait for it (assign_papers).
        self.conn.execute("LOCK TABLE topics IN SHARE ROW EXCLUSIVE MODE")
        build_id = int(self.value(
            "INSERT INTO topic_builds (created_at, method, params, n_papers, report)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (utc_now(), build["method"], json.dumps(build.get("params", {})),
             int(build["n_papers"]), json.dumps(build.get("report", {})))))
        section_ids = self._replace_sections(build["sections"])
        topic_ids = {topic["key"]: self._write_topic(topic, section_ids, build_id)
                     for topic in build["topics"]}
        for retired in build.get("retired", []):
            self._retire(retired, topic_ids.get(retired.get("redirect_to")), build_id)
        self.conn.execute("DELETE FROM paper_topics")
        with self.conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO paper_topics (paper_id, topic_id, similarity, assigned_by)"
                " VALUES (%s, %s, %s, 'build') ON CONFLICT (paper_id) DO UPDATE SET"
                " topic_id = excluded.topic_id, similarity = excluded.similarity",
                [(pid, topic_ids[key], None if sim is None else float(sim))
                 for pid, key, sim in build["assignments"]])
        self._refresh_sizes()
        return {"build_id": build_id, "topic_ids": topic_ids, "section_ids": section_ids}

    def _replace_sections(self, sections: Sequence[Mapping[str, Any]]) -> dict[Any, int]:
        self.conn.execute("UPDATE topics SET section_id = NULL WHERE section_id IS NOT NULL")
        self.conn.execute("DELETE FROM sections")
        return {section["key"]: int(self.value(
            "INSERT INTO sections (slug, label, position) VALUES (%s, %s, %s) RETURNING id",
            (section["slug"], section["label"], int(section["position"]))))
            for section in sections}

    def _write_topic(self, topic: Mapping[str, Any], section_ids: Mapping[Any, int],
                     build_id: int) -> int:
        """Update a topic that is kept, or insert a new one; returns its id."""
        values = (
            topic["label"], json.dumps(list(topic["key_phrases"]), ensure_ascii=False),
            topic.get("llm_label"), section_ids.get(topic.get("section")),
            1 if topic.get("is_other") else 0, _blob(topic.get("centroid")),
        )
        if topic.get("id") is not None:
            topic_id = int(topic["id"])
            self.conn.execute(
                "UPDATE topics SET label = %s, key_phrases = %s, llm_label = %s,"
                " section_id = %s, is_other = %s, centroid = %s, retired_build = NULL"
                " WHERE id = %s", (*values, topic_id))
        else:
            topic_id = int(self.value(
                "INSERT INTO topics (label, key_phrases, llm_label, section_id, is_other,"
                " centroid, slug, created_build) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " RETURNING id", (*values, topic["slug"], build_id)))
        # A topic that is live again no longer redirects anywhere.
        self.conn.execute("DELETE FROM topic_redirects WHERE old_slug ="
                          " (SELECT slug FROM topics WHERE id = %s)", (topic_id,))
        return topic_id

    def _retire(self, retired: Mapping[str, Any], target: int | None, build_id: int) -> None:
        """Retire a topic, redirecting its slug to `target` (where its papers went) if any."""
        old_id = int(retired["id"])
        self.conn.execute("UPDATE topics SET retired_build = %s, size = 0, section_id = NULL"
                          " WHERE id = %s", (build_id, old_id))
        if target is None:
            return
        self.conn.execute(
            "INSERT INTO topic_redirects (old_slug, new_topic_id, reason, build_id)"
            " SELECT slug, %s, %s, %s FROM topics WHERE id = %s"
            " ON CONFLICT (old_slug) DO UPDATE SET new_topic_id = excluded.new_topic_id,"
            " reason = excluded.reason, build_id = excluded.build_id",
            (target, retired.get("reason", "merge"), build_id, old_id))
        # Older slugs that led to the retired topic now lead where its papers went.
        self.conn.execute("UPDATE topic_redirects SET new_topic_id = %s WHERE new_topic_id = %s",
                          (target, old_id))

    def _refresh_sizes(self, topic_ids: Sequence[int] | None = None) -> None:
        sql = ("UPDATE topics SET size = (SELECT count(*) FROM paper_topics pt"
               " WHERE pt.topic_id = topics.id) WHERE retired_build IS NULL")
        if topic_ids is None:
            self.conn.execute(sql)
        else:
            self.conn.execute(sql + " AND id = ANY(%s::bigint[])", (list(topic_ids),))

    def assign_papers(self, rows: Sequence[tuple[str, int, float | None]]) -> int:
        """Give papers a topic without a rebuild: (paper_id, topic_id, similarity) rows."""
        if not rows:
            return 0
        values = dedupe_last([(pid, int(tid), None if sim is None else float(sim))
                              for pid, tid, sim in rows], key=lambda r: r[0])

        def work() -> None:
            # Before any row: a rebuild holding the topics waits for no one (see _replace).
            self.conn.execute("LOCK TABLE topics IN ROW EXCLUSIVE MODE")
            with self.conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO paper_topics (paper_id, topic_id, similarity, assigned_by)"
                    " VALUES (%s, %s, %s, 'assign') ON CONFLICT (paper_id) DO UPDATE SET"
                    " topic_id = excluded.topic_id, similarity = excluded.similarity,"
                    " assigned_by = excluded.assigned_by", values)
            self._refresh_sizes(sorted({int(tid) for _, tid, _ in rows}))

        retrying(self.conn, work)
        return len(rows)

    def set_topic_llm_labels(self, labels: Sequence[tuple[int, str | None]]) -> None:
        with transaction(self.conn), self.conn.cursor() as cursor:
            cursor.executemany("UPDATE topics SET llm_label = %s WHERE id = %s",
                               sorted(((label, int(tid)) for tid, label in labels),
                                      key=lambda r: r[1]))

    def cached_topic_label(self, input_hash: str) -> tuple[bool, str | None]:
        """(found, label) for an LLM naming input; a cached failure is (True, None)."""
        row = self.one("SELECT label FROM topic_label_cache WHERE input_hash = %s", (input_hash,))
        return (False, None) if row is None else (True, row[0])

    def put_topic_label(self, input_hash: str, label: str | None, model: str,
                        notes: str | None = None) -> None:
        self.conn.execute(
            "INSERT INTO topic_label_cache (input_hash, label, model, created_at, notes)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (input_hash) DO UPDATE SET"
            " label = excluded.label, model = excluded.model, created_at = excluded.created_at,"
            " notes = excluded.notes", (input_hash, label, model, utc_now(), notes))

    # ------------------------------------------------------------- page reads
    def has_topics(self) -> bool:
        return self.one(
            "SELECT 1 FROM topics t WHERE t.retired_build IS NULL"
            " AND EXISTS (SELECT 1 FROM paper_topics pt WHERE pt.topic_id = t.id) LIMIT 1"
        ) is not None

    def list_sections(self) -> list[dict[str, Any]]:
        """Sections in order, each with its active topics (largest first) and total size."""
        with snapshot(self.conn):
            sections = [r | {"topics": [], "size": 0} for r in self.dicts(
                "SELECT id, slug, label, position FROM sections ORDER BY position, id")]
            topics = self.dicts(
                f"SELECT {_TOPIC_COLUMNS} FROM {_TOPIC_FROM}"
                " WHERE t.retired_build IS NULL AND t.section_id IS NOT NULL"
                " ORDER BY t.size DESC, t.id")
        by_id = {s["id"]: s for s in sections}
        for row in topics:
            section = by_id.get(row["section_id"])
            if section is not None:
                section["topics"].append(_topic_dict(row))
                section["size"] += row["size"]
        return sections

    def list_topics(self, include_other: bool = True) -> list[dict[str, Any]]:
        """Active topics, largest first (the "other" bucket last)."""
        where = "" if include_other else " AND t.is_other = 0"
        return [_topic_dict(r) for r in self.dicts(
            f"SELECT {_TOPIC_COLUMNS} FROM {_TOPIC_FROM}"
            f" WHERE t.retired_build IS NULL{where} ORDER BY t.is_other, t.size DESC, t.id")]

    def find_topic(self, slug: str) -> dict[str, Any] | None:
        """The live topic with this slug; for an old slug, the live topic its redirects lead
        to (through merges and renames), with `redirected_from` and `redirect_reason`."""
        rows = self.dicts(f"SELECT {_TOPIC_COLUMNS} FROM {_TOPIC_FROM} WHERE t.slug = %s"
                          " AND t.retired_build IS NULL", (slug,))
        if rows:
            return _topic_dict(rows[0])
        seen, current = {slug}, slug
        for _ in range(_REDIRECT_HOPS):
            rows = self.dicts(
                f"SELECT {_TOPIC_COLUMNS}, r.reason AS redirect_reason FROM topic_redirects r"
                f" JOIN topics t ON t.id = r.new_topic_id {_SECTION_JOIN} WHERE r.old_slug = %s",
                (current,))
            if not rows or rows[0]["slug"] in seen:
                return None
            if rows[0]["retired_build"] is None:
                return _topic_dict(rows[0]) | {"redirected_from": slug}
            current = rows[0]["slug"]
            seen.add(current)
        return None

    def find_section(self, slug: str) -> dict[str, Any] | None:
        rows = self.dicts("SELECT id, slug, label FROM sections WHERE slug = %s", (slug,))
        return rows[0] if rows else None

    def paper_topic(self, paper_id: str) -> dict[str, Any] | None:
        rows = self.dicts(
            f"SELECT {_TOPIC_COLUMNS} FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
            f" {_SECTION_JOIN} WHERE pt.paper_id = %s AND t.retired_build IS NULL", (paper_id,))
        return _topic_dict(rows[0]) if rows else None

    def topic_sample_titles(self, topic_id: int, n: int = 5) -> list[str]:
        """Titles of the papers nearest the topic's centre (for naming and previews)."""
        return [r[0] for r in self.rows(
            "SELECT p.title FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
            " WHERE pt.topic_id = %s ORDER BY pt.similarity DESC NULLS LAST, p.id LIMIT %s",
            (int(topic_id), int(n)))]

    def topic_assignments(self) -> list[tuple[str, int, bool]]:
        """(paper_id, topic_id, is_other) for every assigned non-duplicate paper."""
        return [(r[0], r[1], bool(r[2])) for r in self.rows(
            "SELECT pt.paper_id, pt.topic_id, t.is_other FROM paper_topics pt"
            " JOIN topics t ON t.id = pt.topic_id JOIN papers p ON p.id = pt.paper_id"
            " WHERE p.duplicate_of IS NULL")]

    def weekly_topic_counts(self, since: str | None = None, topic_id: int | None = None
                            ) -> dict[int, dict[str, int]]:
        """{topic id: {week start (Monday, YYYY-MM-DD): papers}}, by sort_date."""
        sql = ("SELECT pt.topic_id, p.sort_date, count(*) FROM paper_topics pt"
               " JOIN papers p ON p.id = pt.paper_id"
               " WHERE p.duplicate_of IS NULL AND p.sort_date IS NOT NULL")
        params: list[Any] = []
        if since is not None:
            sql += " AND p.sort_date >= %s"
            params.append(since)
        if topic_id is not None:
            sql += " AND pt.topic_id = %s"
            params.append(int(topic_id))
        counts: dict[int, dict[str, int]] = {}
        # Days are grouped by SQL, weeks here: date arithmetic on text is the client's job.
        for topic, day, n in self.rows(sql + " GROUP BY 1, 2 ORDER BY 1, 2", params):
            weeks = counts.setdefault(topic, {})
            week = _monday(day)
            weeks[week] = weeks.get(week, 0) + n  # type: ignore[index]
        return counts

    def topic_counts_between(self, start: str, end: str) -> dict[int, int]:
        """Papers per topic with start <= sort_date < end (ISO dates)."""
        return dict(self.rows(
            "SELECT pt.topic_id, count(*) FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
            " WHERE p.duplicate_of IS NULL AND p.sort_date >= %s AND p.sort_date < %s"
            " GROUP BY 1", (start, end)))
