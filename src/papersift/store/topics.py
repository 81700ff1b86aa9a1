"""Topics: sections, paper assignments, rebuild history, slug redirects and LLM names."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from papersift.clock import utc_now
from papersift.store.sql import Concern, dedupe_last, live_since

# A topic as every reader of this concern gets it; `label` is what readers see.
_TOPIC_COLUMNS = ("t.id, t.slug, coalesce(t.llm_label, t.label) AS label, t.label AS key_label,"
                  " t.llm_label, t.key_phrases, t.section_id, t.is_other, t.size,"
                  " t.created_build, t.retired_build, s.slug AS section_slug,"
                  " s.label AS section_label")
_SECTION_JOIN = "LEFT JOIN sections s ON s.id = t.section_id"
_TOPIC_FROM = f"topics t {_SECTION_JOIN}"
# How many redirects find_topic follows (merges and renames chain; never loop).
_REDIRECT_HOPS = 10


def _topic_dict(row: dict[str, Any]) -> dict[str, Any]:
    row["key_phrases"] = json.loads(row["key_phrases"] or "[]")
    row["is_other"] = bool(row["is_other"])
    return row


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
    """A topic is a dict: id, slug, label (the LLM's name if any, else the key-phrase label),
    key_label, llm_label, key_phrases (list), section_id, section_slug, section_label, is_other,
    size, created_build, retired_build. A rebuild may keep a topic's id and slug; a retired one
    keeps its row (its slug reserved) and redirects to where its papers went."""

    # ------------------------------------------------------------- stage reads
    def topic_texts(self, model: str) -> dict[str, tuple[str, str]]:
        """(title, abstract) of every non-duplicate paper with an embedding of this model."""
        return {r[0]: (r[1], r[2]) for r in self.db.rows(
            "SELECT p.id, p.title, p.abstract FROM papers p JOIN embeddings e"
            " ON e.paper_id = p.id AND e.model = ? WHERE p.duplicate_of IS NULL", (model,))}

    def topic_state(self) -> dict[str, Any]:
        """What a rebuild maps against: {topics (active, with centroids), sections,
        assignments {paper: topic id}, taken_slugs (active, retired, redirected, sections)}."""
        topic_ids = self.db.joined(
            "CAST(t.id AS text)", "','",
            "FROM topics t WHERE t.section_id = s.id AND t.retired_build IS NULL", "t.id")
        with self.db.snapshot():
            topics = [_topic_dict(r) | {"centroid": _vector(r["centroid"])} for r in self.db.dicts(
                "SELECT id, slug, label, key_phrases, llm_label, is_other, size, centroid"
                " FROM topics WHERE retired_build IS NULL ORDER BY id")]
            sections = self.db.dicts(f"SELECT s.id, s.slug, s.label, {topic_ids} AS topic_ids"
                                     " FROM sections s ORDER BY s.position, s.id")
            taken = set(self.db.column(
                "SELECT slug FROM topics UNION SELECT old_slug FROM topic_redirects"
                " UNION SELECT slug FROM sections"))
            assignments = dict(self.db.rows("SELECT paper_id, topic_id FROM paper_topics"))
        for section in sections:
            section["topic_ids"] = [int(x) for x in (section["topic_ids"] or "").split(",") if x]
        return {"topics": topics, "sections": sections, "assignments": assignments,
                "taken_slugs": taken}

    def topic_centroids(self) -> tuple[list[int], np.ndarray, int | None]:
        """(ids, unit centroid matrix) of active topics that are not "other", and the other id."""
        ids, vectors, other = [], [], None
        for topic_id, is_other, centroid in self.db.rows(
                "SELECT id, is_other, centroid FROM topics WHERE retired_build IS NULL ORDER BY id"):
            if is_other:
                other = topic_id
            elif centroid is not None:
                ids.append(topic_id)
                vectors.append(_vector(centroid))
        matrix = np.vstack(vectors).astype(np.float32) if vectors else np.zeros((0, 0), np.float32)
        return ids, matrix, other

    def assigned_paper_ids(self) -> set[str]:
        """Ids of the papers that have a topic (or "other")."""
        return set(self.db.column("SELECT paper_id FROM paper_topics"))

    def latest_topic_build(self) -> dict[str, Any] | None:
        """The newest build: id, created_at, method, params (dict), n_papers, report (dict)."""
        build = self.db.one("SELECT * FROM topic_builds ORDER BY id DESC LIMIT 1")
        if build is None:
            return None
        build["params"] = json.loads(build["params"] or "{}")
        build["report"] = json.loads(build["report"] or "{}")
        return build

    # ----------------------------------------------------------------- writes
    def replace_topics(self, build: dict[str, Any]) -> dict[str, Any]:
        """Write a whole rebuild in one transaction: method, params, n_papers, report;
        sections [{key, slug, label, position}]; topics [{key, id (kept) or None, slug, label,
        key_phrases, llm_label, section (key), is_other, centroid}]; retired [{id, redirect_to
        (topic key), reason}]; assignments [(paper id, topic key, similarity)]. Returns
        {build_id, topic_ids: {key: id}, section_ids: {key: id}}."""
        return self.db.write(lambda: self._replace(build))

    def _replace(self, build: dict[str, Any]) -> dict[str, Any]:
        # One rebuild at a time, and assignments wait for it (assign_papers).
        self.db.lock_table("topics", "SHARE ROW EXCLUSIVE")
        build_id = int(self.db.value(
            "INSERT INTO topic_builds (created_at, method, params, n_papers, report)"
            " VALUES (?, ?, ?, ?, ?) RETURNING id",
            (utc_now(), build["method"], json.dumps(build.get("params", {})),
             int(build["n_papers"]), json.dumps(build.get("report", {})))))
        self.db.execute("UPDATE topics SET section_id = NULL WHERE section_id IS NOT NULL")
        self.db.execute("DELETE FROM sections")
        section_ids = {section["key"]: int(self.db.value(
            "INSERT INTO sections (slug, label, position) VALUES (?, ?, ?) RETURNING id",
            (section["slug"], section["label"], int(section["position"]))))
            for section in build["sections"]}
        topic_ids = {topic["key"]: self._write_topic(topic, section_ids, build_id)
                     for topic in build["topics"]}
        for retired in build.get("retired", []):
            self._retire(retired, topic_ids.get(retired.get("redirect_to")), build_id)
        self.db.execute("DELETE FROM paper_topics")
        self._assign([(pid, topic_ids[key], None if sim is None else float(sim))
                      for pid, key, sim in build["assignments"]], "build")
        self._refresh_sizes()
        return {"build_id": build_id, "topic_ids": topic_ids, "section_ids": section_ids}

    def _write_topic(self, topic: Mapping[str, Any], section_ids: Mapping[Any, int],
                     build_id: int) -> int:
        """Update a topic that is kept, or insert a new one; returns its id."""
        centroid = topic.get("centroid")
        values = (topic["label"], json.dumps(list(topic["key_phrases"]), ensure_ascii=False),
                  topic.get("llm_label"), section_ids.get(topic.get("section")),
                  1 if topic.get("is_other") else 0,
                  None if centroid is None else np.asarray(centroid, dtype="<f4").tobytes())
        if topic.get("id") is not None:
            topic_id = int(topic["id"])
            self.db.execute(
                "UPDATE topics SET label = ?, key_phrases = ?, llm_label = ?,"
                " section_id = ?, is_other = ?, centroid = ?, retired_build = NULL"
                " WHERE id = ?", (*values, topic_id))
        else:
            topic_id = int(self.db.value(
                "INSERT INTO topics (label, key_phrases, llm_label, section_id, is_other,"
                " centroid, slug, created_build) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " RETURNING id", (*values, topic["slug"], build_id)))
        # A topic that is live again no longer redirects anywhere.
        self.db.execute("DELETE FROM topic_redirects WHERE old_slug ="
                        " (SELECT slug FROM topics WHERE id = ?)", (topic_id,))
        return topic_id

    def _retire(self, retired: Mapping[str, Any], target: int | None, build_id: int) -> None:
        """Retire a topic, redirecting its slug to `target` (where its papers went) if any."""
        old_id = int(retired["id"])
        self.db.execute("UPDATE topics SET retired_build = ?, size = 0, section_id = NULL"
                        " WHERE id = ?", (build_id, old_id))
        if target is None:
            return
        # (The WHERE also keeps SQLite from reading ON CONFLICT as a join's ON.)
        self.db.execute(
            "INSERT INTO topic_redirects (old_slug, new_topic_id, reason, build_id)"
            " SELECT slug, ?, ?, ? FROM topics WHERE id = ?"
            " ON CONFLICT (old_slug) DO UPDATE SET new_topic_id = excluded.new_topic_id,"
            " reason = excluded.reason, build_id = excluded.build_id",
            (target, retired.get("reason", "merge"), build_id, old_id))
        # Older slugs that led to the retired topic now lead where its papers went.
        self.db.execute("UPDATE topic_redirects SET new_topic_id = ? WHERE new_topic_id = ?",
                        (target, old_id))

    def _assign(self, rows: Sequence[tuple[str, int, float | None]], by: str) -> None:
        """Give papers a topic: (paper id, topic id, similarity) rows, assigned by `by`."""
        self.db.executemany(
            "INSERT INTO paper_topics (paper_id, topic_id, similarity, assigned_by)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (paper_id) DO UPDATE SET"
            " topic_id = excluded.topic_id, similarity = excluded.similarity,"
            " assigned_by = excluded.assigned_by", [(*row, by) for row in rows])

    def _refresh_sizes(self, topic_ids: Sequence[int] | None = None) -> None:
        sql = ("UPDATE topics SET size = (SELECT count(*) FROM paper_topics pt"
               " WHERE pt.topic_id = topics.id) WHERE retired_build IS NULL")
        condition, params = (("1 = 1", []) if topic_ids is None
                             else self.db.any_of("id", topic_ids, "bigint"))
        self.db.execute(f"{sql} AND {condition}", params)

    def assign_papers(self, rows: Sequence[tuple[str, int, float | None]]) -> int:
        """Give papers a topic without a rebuild: (paper_id, topic_id, similarity) rows."""
        if not rows:
            return 0
        values = dedupe_last([(pid, int(tid), None if sim is None else float(sim))
                              for pid, tid, sim in rows], key=lambda r: r[0])

        def work() -> None:
            # Before any row: a rebuild holding the topics waits for no one (see _replace).
            self.db.lock_table("topics", "ROW EXCLUSIVE")
            self._assign(values, "assign")
            self._refresh_sizes(sorted({int(tid) for _, tid, _ in rows}))

        self.db.write(work)
        return len(rows)

    def set_topic_llm_labels(self, labels: Sequence[tuple[int, str | None]]) -> None:
        with self.db.transaction():
            self.db.executemany("UPDATE topics SET llm_label = ? WHERE id = ?",
                                sorted(((label, int(tid)) for tid, label in labels),
                                       key=lambda r: r[1]))

    def cached_topic_label(self, input_hash: str) -> tuple[bool, str | None]:
        """(found, label) for an LLM naming input; a cached failure is (True, None)."""
        row = self.db.one("SELECT label FROM topic_label_cache WHERE input_hash = ?", (input_hash,))
        return (False, None) if row is None else (True, row["label"])

    def put_topic_label(self, input_hash: str, label: str | None, model: str,
                        notes: str | None = None) -> None:
        self.db.execute(
            "INSERT INTO topic_label_cache (input_hash, label, model, created_at, notes)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (input_hash) DO UPDATE SET"
            " label = excluded.label, model = excluded.model, created_at = excluded.created_at,"
            " notes = excluded.notes", (input_hash, label, model, utc_now(), notes))

    # ------------------------------------------------------------- page reads
    def has_topics(self) -> bool:
        """Whether a live topic holds at least one paper."""
        return self.db.value(
            "SELECT 1 FROM topics t WHERE t.retired_build IS NULL"
            " AND EXISTS (SELECT 1 FROM paper_topics pt WHERE pt.topic_id = t.id) LIMIT 1"
        ) is not None

    def list_sections(self) -> list[dict[str, Any]]:
        """Sections in order, each with its active topics (largest first) and total size."""
        with self.db.snapshot():
            sections = [r | {"topics": [], "size": 0} for r in self.db.dicts(
                "SELECT id, slug, label, position FROM sections ORDER BY position, id")]
            topics = self.db.dicts(
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
        return [_topic_dict(r) for r in self.db.dicts(
            f"SELECT {_TOPIC_COLUMNS} FROM {_TOPIC_FROM}"
            f" WHERE t.retired_build IS NULL{where} ORDER BY t.is_other, t.size DESC, t.id")]

    def find_topic(self, slug: str) -> dict[str, Any] | None:
        """The live topic with this slug; for an old slug, the live topic its redirects lead
        to (through merges and renames), with `redirected_from` and `redirect_reason`."""
        row = self.db.one(f"SELECT {_TOPIC_COLUMNS} FROM {_TOPIC_FROM} WHERE t.slug = ?"
                          " AND t.retired_build IS NULL", (slug,))
        if row is not None:
            return _topic_dict(row)
        seen, current = {slug}, slug
        for _ in range(_REDIRECT_HOPS):
            row = self.db.one(
                f"SELECT {_TOPIC_COLUMNS}, r.reason AS redirect_reason FROM topic_redirects r"
                f" JOIN topics t ON t.id = r.new_topic_id {_SECTION_JOIN} WHERE r.old_slug = ?",
                (current,))
            if row is None or row["slug"] in seen:
                return None
            if row["retired_build"] is None:
                return _topic_dict(row) | {"redirected_from": slug}
            current = row["slug"]
            seen.add(current)
        return None

    def find_section(self, slug: str) -> dict[str, Any] | None:
        return self.db.one("SELECT id, slug, label FROM sections WHERE slug = ?", (slug,))

    def paper_topic(self, paper_id: str) -> dict[str, Any] | None:
        """The live topic of a paper."""
        row = self.db.one(
            f"SELECT {_TOPIC_COLUMNS} FROM paper_topics pt JOIN topics t ON t.id = pt.topic_id"
            f" {_SECTION_JOIN} WHERE pt.paper_id = ? AND t.retired_build IS NULL", (paper_id,))
        return None if row is None else _topic_dict(row)

    def topic_sample_titles(self, topic_id: int, n: int = 5) -> list[str]:
        """Titles of the papers nearest the topic's centre (for naming and previews)."""
        return self.db.column(
            "SELECT p.title FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
            " WHERE pt.topic_id = ? ORDER BY pt.similarity DESC NULLS LAST, p.id LIMIT ?",
            (int(topic_id), int(n)))

    def topic_assignments(self) -> list[tuple[str, int, bool]]:
        """(paper_id, topic_id, is_other) for every assigned non-duplicate paper."""
        return [(r[0], r[1], bool(r[2])) for r in self.db.rows(
            "SELECT pt.paper_id, pt.topic_id, t.is_other FROM paper_topics pt"
            " JOIN topics t ON t.id = pt.topic_id JOIN papers p ON p.id = pt.paper_id"
            " WHERE p.duplicate_of IS NULL")]

    def weekly_topic_counts(self, since: str | None = None, topic_id: int | None = None
                            ) -> dict[int, dict[str, int]]:
        """{topic id: {week start (Monday, YYYY-MM-DD): papers}}, by sort_date."""
        where, params = live_since(since)
        if topic_id is not None:
            where += " AND pt.topic_id = ?"
            params.append(int(topic_id))
        counts: dict[int, dict[str, int]] = {}
        # Days are grouped by SQL, weeks here: date arithmetic on text is the client's job.
        for topic, day, n in self.db.rows(
                "SELECT pt.topic_id, p.sort_date, count(*) FROM paper_topics pt JOIN papers p"
                f" ON p.id = pt.paper_id WHERE {where} AND p.sort_date IS NOT NULL"
                " GROUP BY 1, 2 ORDER BY 1, 2", params):
            weeks = counts.setdefault(topic, {})
            week = _monday(day)
            weeks[week] = weeks.get(week, 0) + n  # type: ignore[index]
        return counts

    def topic_counts_between(self, start: str, end: str) -> dict[int, int]:
        """Papers per topic with start <= sort_date < end (ISO dates)."""
        return dict(self.db.rows(
            "SELECT pt.topic_id, count(*) FROM paper_topics pt JOIN papers p ON p.id = pt.paper_id"
            " WHERE p.duplicate_of IS NULL AND p.sort_date >= ? AND p.sort_date < ?"
            " GROUP BY 1", (start, end)))
