"""Links between papers through their artefacts' names, threads and weekly briefs (issue 34).

The concern `store.links`, written once for both backends. What it keeps is derived from the
papers (the links and briefs stages make it again from them), so `papersift migrate` leaves
it out. Its questions:

- the links stage: `link_state` (the linker's state between runs), `pending_link_days` and
  `link_inputs` (live papers not read yet, a day range at a time), `put_link_batch` (one
  transaction per batch of days: a killed run resumes after the last committed day),
  `reset_links`;
- threads: `thread_inputs` (artefacts and their shown links), `threads_near` (threads with a
  member within some days), `paper_days`, `put_threads`, `get_thread`, `threads_of_papers`,
  `list_threads`;
- pages: `paper_links` (a paper's "builds on", "followed up by" and ambiguous names),
  `all_links` (evaluation);
- briefs: `brief_inputs`, `brief_hashes`, `put_briefs`, `get_brief`, `brief_weeks`,
  `briefs_of_topic`, `briefs_for_topics`, `iter_briefs`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from papersift.clock import utc_now
from papersift.store.sql import Concern, chunks

FOLLOWED_BY_SHOWN = 50
_LISTING = "p.id, p.title, p.announced, p.sort_date"


class Links(Concern):
    """Artefacts, links, threads and briefs (see the module's docstring)."""

    # ----------------------------------------------------------------- the links stage
    def link_state(self) -> dict[str, Any]:
        """What the linker starts from: artefacts [(name, origin, day, categories, how,
        risky)], counts {refs|young|old: {key: value}}, and meta {last_day, papers, ...}."""
        with self.db.snapshot():
            artefacts = [(r[0], r[1], r[2], tuple((r[3] or "").split()), r[4], bool(r[5]))
                         for r in self.db.rows(
                             "SELECT name, origin_id, day, categories, how, risky FROM artefacts"
                             " ORDER BY day, origin_id, name")]
            counts: dict[str, dict[str, int]] = {"refs": {}, "young": {}, "old": {}}
            for kind, key, value in self.db.rows("SELECT kind, key, value FROM link_counts"):
                counts[kind][key] = int(value)
            meta = dict(self.db.rows("SELECT key, value FROM link_meta"))
        return {"artefacts": artefacts, "counts": counts, "meta": meta}

    def pending_link_days(self) -> list[tuple[str, int]]:
        """(announcement day, papers) of the live papers the links stage has not read."""
        return [(str(r[0])[:10], int(r[1])) for r in self.db.rows(
            "SELECT substr(p.announced, 1, 10), count(*) FROM papers p"
            " WHERE p.duplicate_of IS NULL AND p.announced IS NOT NULL AND p.announced != ''"
            " AND NOT EXISTS (SELECT 1 FROM link_papers lp WHERE lp.paper_id = p.id)"
            " GROUP BY 1 ORDER BY 1")]

    def link_inputs(self, first_day: str, last_day: str) -> list[dict[str, Any]]:
        """Unread live papers announced from `first_day` to `last_day`: id, title, abstract,
        categories (primary first), announced (YYYY-MM-DD), by day and id."""
        categories = self.db.joined("pc.category", "' '", "FROM paper_categories pc"
                                    " WHERE pc.paper_id = p.id", "pc.position")
        rows = self.db.dicts(
            f"SELECT p.id, p.title, p.abstract, substr(p.announced, 1, 10) AS announced,"
            f" {categories} AS categories FROM papers p"
            " WHERE p.duplicate_of IS NULL AND p.announced >= ? AND p.announced < ?"
            " AND NOT EXISTS (SELECT 1 FROM link_papers lp WHERE lp.paper_id = p.id)"
            " ORDER BY 4, p.id", (first_day, last_day + "~"))
        for row in rows:
            row["categories"] = tuple((row["categories"] or "").split())
        return rows

    def put_link_batch(self, batch: Mapping[str, Any]) -> None:
        """One batch of days in one transaction: `read` [(paper id, day)], `artefacts` [(name,
        origin, day, categories, how, risky)], `links` [(source, target, name, day,
        similarity, status, alternatives)], `retracted` [(name, origin)] (deleted with their
        links), `counts` {refs|old: {key: value}} to upsert, `young` {key: uses} (replaces all),
        `meta` {key: value}."""
        self.db.write(lambda: self._put_link_batch(batch))

    def _put_link_batch(self, batch: Mapping[str, Any]) -> None:
        self.db.lock("links-stage")
        self.db.executemany("INSERT INTO link_papers (paper_id, day) VALUES (?, ?)"
                            " ON CONFLICT (paper_id) DO NOTHING", sorted(batch.get("read", ())))
        self.db.executemany(
            "INSERT INTO artefacts (name, origin_id, day, categories, how, risky)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name, origin_id) DO NOTHING",
            [(n, o, d, " ".join(c), h, int(r)) for n, o, d, c, h, r in batch.get("artefacts", ())])
        self.db.executemany(
            "INSERT INTO paper_links (source_id, target_id, name, day, similarity, status,"
            " alternatives) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, target_id, name)"
            " DO UPDATE SET similarity = excluded.similarity, status = excluded.status,"
            " alternatives = excluded.alternatives",
            [(s, t, n, d, float(sim), status, json.dumps(list(alt)))
             for s, t, n, d, sim, status, alt in batch.get("links", ())])
        for name, origin in batch.get("retracted", ()):
            self.db.execute("DELETE FROM artefacts WHERE name = ? AND origin_id = ?",
                            (name, origin))
            self.db.execute("DELETE FROM paper_links WHERE name = ? AND target_id = ?",
                            (name, origin))
        for kind, values in (batch.get("counts") or {}).items():
            self.db.executemany(
                "INSERT INTO link_counts (kind, key, value) VALUES (?, ?, ?)"
                " ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value",
                [(kind, key, int(v)) for key, v in sorted(values.items())])
        if "young" in batch:
            self.db.execute("DELETE FROM link_counts WHERE kind = 'young'")
            self.db.executemany("INSERT INTO link_counts (kind, key, value) VALUES ('young', ?, ?)",
                                sorted(batch["young"].items()))
        self.db.executemany(
            "INSERT INTO link_meta (key, value) VALUES (?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            sorted((k, str(v)) for k, v in (batch.get("meta") or {}).items()))

    def reset_links(self) -> None:
        """Forget every link, artefact, thread and count: the next run reads every paper."""
        def work() -> None:
            for table in ("link_papers", "artefacts", "paper_links", "link_counts", "link_meta",
                          "threads", "thread_members"):
                self.db.execute(f"DELETE FROM {table}")
        self.db.write(work)

    # ---------------------------------------------------------------------- threads
    def thread_inputs(self, keys: Sequence[tuple[str, str]] | None = None
                      ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """(artefacts, shown links) of these (name, origin) keys, or of every artefact with a
        shown link: artefacts as in link_state, links (source, target, name, day, similarity)."""
        with self.db.snapshot():
            links = self.db.rows(
                "SELECT source_id, target_id, name, day, similarity FROM paper_links"
                " WHERE status = 'linked' ORDER BY target_id, name, day, source_id") \
                if keys is None else self._links_of(keys)
            wanted = sorted({(r[2], r[1]) for r in links})
            artefacts = []
            for part in chunks(wanted, 400):
                among, params = self.db.any_of("name || '@' || origin_id",
                                               [f"{n}@{o}" for n, o in part])
                artefacts += [(r[0], r[1], r[2], tuple((r[3] or "").split()), r[4], bool(r[5]))
                              for r in self.db.rows(
                                  "SELECT name, origin_id, day, categories, how, risky"
                                  f" FROM artefacts WHERE {among}", params)]
        return artefacts, [tuple(r) for r in links]

    def _links_of(self, keys: Sequence[tuple[str, str]]) -> list[Sequence[Any]]:
        found: list[Sequence[Any]] = []
        for part in chunks(sorted(set(keys)), 400):
            among, params = self.db.any_of("target_id", sorted({o for _, o in part}))
            names = set(part)
            found += [r for r in self.db.rows(
                "SELECT source_id, target_id, name, day, similarity FROM paper_links"
                f" WHERE status = 'linked' AND {among}", params) if (r[2], r[1]) in names]
        return found

    def threads_near(self, first_day: str, last_day: str) -> list[tuple[str, str]]:
        """(name, origin) of threads with a member announced from first_day to last_day."""
        return [(r[0], r[1]) for r in self.db.rows(
            "SELECT DISTINCT t.name, t.origin_id FROM threads t JOIN thread_members m"
            " ON m.thread_id = t.id WHERE m.day >= ? AND m.day <= ?", (first_day, last_day))]

    def paper_days(self, days: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """(id, announcement day) of live papers (announced on one of `days`, or all)."""
        sql = ("SELECT id, substr(announced, 1, 10) FROM papers WHERE duplicate_of IS NULL"
               " AND announced IS NOT NULL AND announced != ''")
        if days is None:
            return [(r[0], r[1]) for r in self.db.rows(sql + " ORDER BY pk")]
        among, params = self.db.any_of("substr(announced, 1, 10)", sorted(set(days)))
        return [(r[0], r[1]) for r in self.db.rows(f"{sql} AND {among} ORDER BY pk", params)]

    def put_threads(self, threads: Sequence[Mapping[str, Any]], delete: Sequence[str] = ()
                    ) -> None:
        """Replace these threads ({id, name, origin, day, members [{paper, day, role,
        score}]}) with their members, and delete the threads `delete` names."""
        now = utc_now()

        def work() -> None:
            self.db.lock("links-threads")
            gone = sorted(set(delete) | {str(t["id"]) for t in threads})
            for part in chunks(gone, 400):
                among, params = self.db.any_of("thread_id", list(part))
                self.db.execute(f"DELETE FROM thread_members WHERE {among}", params)
                among, params = self.db.any_of("id", list(part))
                self.db.execute(f"DELETE FROM threads WHERE {among}", params)
            self.db.executemany(
                "INSERT INTO threads (id, name, origin_id, day, last_day, size, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(t["id"], t["name"], t["origin"], t["day"],
                  max(str(m["day"]) for m in t["members"]), len(t["members"]), now)
                 for t in sorted(threads, key=lambda t: str(t["id"]))])
            self.db.executemany(
                "INSERT INTO thread_members (thread_id, paper_id, role, score, day)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (thread_id, paper_id) DO NOTHING",
                [(t["id"], m["paper"], m["role"], float(m["score"]), m["day"])  # type: ignore[arg-type]
                 for t in threads for m in t["members"]])
        self.db.write(work)

    def get_thread(self, thread_id: str) -> dict[str, Any] | None:
        """A thread with its members (paper_id, role, score, day, title), oldest first."""
        with self.db.snapshot():
            thread = self.db.one("SELECT id, name, origin_id, day, last_day, size, updated_at"
                                 " FROM threads WHERE id = ?", (thread_id,))
            if thread is None:
                return None
            thread["members"] = self.db.dicts(
                "SELECT m.paper_id, m.role, m.score, m.day, p.title FROM thread_members m"
                " JOIN papers p ON p.id = m.paper_id WHERE m.thread_id = ?"
                " ORDER BY m.day, CASE m.role WHEN 'origin' THEN 0 ELSE 1 END, m.paper_id",
                (thread_id,))
        return thread

    def threads_of_papers(self, paper_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """{paper id: [{id, name, origin_id, day, last_day, size, role}]} for papers in threads."""
        found: dict[str, list[dict[str, Any]]] = {}
        for part in chunks(sorted(set(paper_ids)), 500):
            among, params = self.db.any_of("m.paper_id", list(part))
            for row in self.db.dicts(
                    "SELECT m.paper_id, t.id, t.name, t.origin_id, t.day, t.last_day, t.size,"
                    f" m.role FROM thread_members m JOIN threads t ON t.id = m.thread_id"
                    f" WHERE {among} ORDER BY t.size DESC, t.id", params):
                found.setdefault(row.pop("paper_id"), []).append(row)
        return found

    def list_threads(self, limit: int, offset: int = 0) -> list[dict[str, Any]]:
        """Threads, largest first (id, name, origin_id, day, last_day, size)."""
        return self.db.dicts("SELECT id, name, origin_id, day, last_day, size FROM threads"
                             " ORDER BY size DESC, id LIMIT ? OFFSET ?", (limit, offset))

    # ------------------------------------------------------------------------ pages
    def paper_links(self, paper_id: str, limit: int = FOLLOWED_BY_SHOWN) -> dict[str, Any]:
        """A paper's links for its page: builds_on [{name, paper_id, title, day}] (shown
        links to earlier papers), ambiguous [{name, candidates [{paper_id, title, day}]}],
        followed_by {count, papers [{name, paper_id, title, day}] (the newest `limit`)},
        coined [names of its artefacts]."""
        with self.db.snapshot():
            out = self.db.dicts(
                f"SELECT l.name, l.status, l.alternatives, {_LISTING} FROM paper_links l"
                " JOIN papers p ON p.id = l.target_id WHERE l.source_id = ?"
                " ORDER BY p.announced, l.name", (paper_id,))
            count = int(self.db.value("SELECT count(DISTINCT source_id) FROM paper_links"
                                      " WHERE target_id = ? AND status = 'linked'", (paper_id,)))
            followers = self.db.dicts(
                f"SELECT l.name, {_LISTING} FROM paper_links l JOIN papers p ON p.id = l.source_id"
                " WHERE l.target_id = ? AND l.status = 'linked'"
                " ORDER BY p.announced DESC, p.id LIMIT ?", (paper_id, limit))
            coined = self.db.column("SELECT name FROM artefacts WHERE origin_id = ? ORDER BY name",
                                    (paper_id,))
            alternatives = sorted({a for r in out for a in json.loads(r["alternatives"])})
            titles = self._titles(alternatives)
        builds_on = [_ref(r) for r in out if r["status"] == "linked"]
        ambiguous = [{"name": r["name"], "candidates": [_ref(r)] + [
            {"paper_id": a, "title": titles[a][0], "day": titles[a][1]}
            for a in json.loads(r["alternatives"]) if a in titles]}
            for r in out if r["status"] == "ambiguous"]
        return {"builds_on": builds_on, "ambiguous": ambiguous, "coined": coined,
                "followed_by": {"count": count, "papers": [_ref(r) for r in followers]}}

    def _titles(self, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if not ids:
            return {}
        among, params = self.db.any_of("id", list(ids))
        return {r[0]: (r[1], str(r[2] or "")[:10]) for r in self.db.rows(
            f"SELECT id, title, announced FROM papers WHERE {among}", params)}

    def all_links(self, status: str = "linked") -> list[tuple[str, str, str, str, float]]:
        """(source, target, name, day, similarity) of every link with this status."""
        return [tuple(r) for r in self.db.rows(  # type: ignore[misc]
            "SELECT source_id, target_id, name, day, similarity FROM paper_links"
            " WHERE status = ? ORDER BY day, source_id, name", (status,))]

    # ----------------------------------------------------------------------- briefs
    def brief_inputs(self, first_day: str, last_day: str) -> list[tuple[str, int, str]]:
        """(paper id, topic id, announcement day) of live papers with a topic announced from
        first_day to last_day (the briefs' week and the four before)."""
        return [(r[0], int(r[1]), r[2]) for r in self.db.rows(
            "SELECT p.id, pt.topic_id, substr(p.announced, 1, 10) FROM paper_topics pt"
            " JOIN papers p ON p.id = pt.paper_id WHERE p.duplicate_of IS NULL"
            " AND p.announced >= ? AND p.announced < ? ORDER BY p.announced, p.id",
            (first_day, last_day + "~"))]

    def brief_hashes(self, week: str) -> dict[int, str]:
        """{topic id: input hash} of the briefs stored for this week."""
        return {int(r[0]): r[1] for r in self.db.rows(
            "SELECT topic_id, input_hash FROM briefs WHERE week = ?", (week,))}

    def put_briefs(self, week: str, briefs: Sequence[Mapping[str, Any]],
                   keep: Sequence[int] | None = None) -> None:
        """Store briefs ({topic, payload, writer, input_hash}) of a week; with `keep`, the
        week's other briefs whose topic is not in it are deleted."""
        now = utc_now()

        def work() -> None:
            if keep is not None:
                known = set(keep)
                for topic_id in self.brief_hashes(week):
                    if topic_id not in known:
                        self.db.execute("DELETE FROM briefs WHERE topic_id = ? AND week = ?",
                                        (topic_id, week))
            self.db.executemany(
                "INSERT INTO briefs (topic_id, week, payload, writer, input_hash, built_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (topic_id, week) DO UPDATE SET"
                " payload = excluded.payload, writer = excluded.writer,"
                " input_hash = excluded.input_hash, built_at = excluded.built_at",
                sorted((int(b["topic"]), week, json.dumps(b["payload"], ensure_ascii=False),
                        b["writer"], b["input_hash"], now) for b in briefs))
        self.db.write(work)

    def get_brief(self, topic_id: int, week: str | None = None) -> dict[str, Any] | None:
        """A topic's brief of `week` (the payload, with built_at), or its latest one."""
        if week is None:  # the newest of briefs_of_topic
            return next(iter(self.briefs_of_topic(topic_id, 1)), None)
        row = self.db.one("SELECT payload, built_at FROM briefs WHERE topic_id = ? AND week = ?",
                          (int(topic_id), week))
        return None if row is None else json.loads(row["payload"]) | {"built_at": row["built_at"]}

    def brief_weeks(self, topic_id: int | None = None) -> list[str]:
        """Weeks with a brief (of this topic, or of any), newest first."""
        if topic_id is None:
            return self.db.column("SELECT DISTINCT week FROM briefs ORDER BY week DESC")
        return self.db.column("SELECT week FROM briefs WHERE topic_id = ? ORDER BY week DESC",
                              (int(topic_id),))

    def briefs_of_topic(self, topic_id: int, limit: int = 20) -> list[dict[str, Any]]:
        """A topic's latest briefs (payloads with built_at), newest week first."""
        return [json.loads(r["payload"]) | {"built_at": r["built_at"]} for r in self.db.dicts(
            "SELECT payload, built_at FROM briefs WHERE topic_id = ? ORDER BY week DESC LIMIT ?",
            (int(topic_id), int(limit)))]

    def briefs_for_topics(self, topic_ids: Sequence[int], week: str) -> list[dict[str, Any]]:
        """This week's briefs of these topics (payloads), most papers first."""
        if not topic_ids:
            return []
        among, params = self.db.any_of("topic_id", [int(t) for t in topic_ids], "bigint")
        found = [json.loads(r[0]) for r in self.db.rows(
            f"SELECT payload FROM briefs WHERE week = ? AND {among}", (week, *params))]
        return sorted(found, key=lambda b: (-len(b.get("paper_ids") or []), str(b.get("slug"))))

    def iter_briefs(self, batch: int = 200) -> Iterator[dict[str, Any]]:
        """Every stored brief's payload, by week and topic."""
        after = ("", -1)
        while True:
            rows = self.db.rows(
                "SELECT week, topic_id, payload FROM briefs WHERE (week, topic_id) > (?, ?)"
                " ORDER BY week, topic_id LIMIT ?", (*after, batch))
            if not rows:
                return
            for row in rows:
                yield json.loads(row[2])
            after = (rows[-1][0], int(rows[-1][1]))


def _ref(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": row["name"], "paper_id": row["id"], "title": row["title"],
            "day": str(row["announced"] or row["sort_date"] or "")[:10]}
