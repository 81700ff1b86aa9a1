"""One paper, many sources: which stored records are one paper, why, and undoing a merge.

A record of another source that is one paper with a stored one is stored as its own row and
linked by `duplicate_of` (as duplicates always were), so its sources, versions and links stay
its own and an unmerge only clears the link. What this concern adds, written once for both
backends over store.sql's Database:

- the match keys of records from sources other than arXiv (`paper_keys`) and the relations
  records assert (`paper_relations`), written while a batch is stored;
- the merge decision for the papers new to the store (`plan_links`, called by the papers
  upsert): the rules the store always applied (same DOI, same title and first author) for
  arXiv records among themselves, and `sources.matching.same_paper` on the few candidates the
  keys find whenever one side comes from another source;
- the `merges` table: every merge with its rule and its reason in words, and unmerges, which
  keep the two records apart from then on.

arXiv's bulk path pays two index probes a batch (are there keyed records? was anything ever
unmerged?) and two small integer rows a paper (`title_halves`: CRC-32s of its title's halves,
so that a journal version with one word changed finds it); otherwise arXiv papers are found by
the papers table's own indexes (id, DOI, title key). In a store holding other sources, an arXiv
record is probed by strings preparing computed already (its id, DOIs, title key and halves).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from papersift.clock import utc_now
from papersift.records import PaperRecord
from papersift.records.prepare import PreparedRecord, norm_title_key
from papersift.sources.markup import inline_text
from papersift.sources.matching import SAME_WORK, Verdict, candidate_keys, identifiers, same_paper
from papersift.store.sql import Concern, Database

_CANDIDATES = 20  # stored records compared with one new record at most (a title shared widely)


def is_foreign(paper_id: str) -> bool:
    """Whether a paper id comes from a source other than arXiv (namespaced: 'doi:...')."""
    return ":" in paper_id


# ---------------------------------------------------------------- the ingest's side
def plan_links(db: Database, items: Sequence[PreparedRecord], originals: dict[str, str]
               ) -> dict[str, str]:
    """{id: the paper it is merged into} for these papers new to the store, given the links
    the store's own rules found (`originals`); writes their keys, relations and merges.

    Runs inside the upsert's transaction, after the backend locked out other writers."""
    foreign = [p for p in items if is_foreign(p.id)]
    keyed = bool(foreign) or db.value("SELECT 1 FROM paper_keys LIMIT 1") is not None
    # Most batches: arXiv records into a store no unmerge touched; two index probes in all.
    maybe = [p.id for p in items] if keyed else sorted({*originals, *originals.values()})
    apart = _kept_apart(db, maybe) if maybe and db.value(
        "SELECT 1 FROM merges WHERE unmerged_at IS NOT NULL LIMIT 1") is not None else set()
    links: dict[str, tuple[str, str, str, dict[str, str]]] = {}
    for paper_id, original in originals.items():
        if is_foreign(paper_id) or is_foreign(original) or (paper_id, original) in apart:
            continue  # another source is involved: the matching decides (below)
        links[paper_id] = (original, *_old_rule(db, items, paper_id, original))
    if keyed:
        records = _Records(items)
        _match(db, items, records, apart, links)
        _write_keys(db, foreign, records)
    _write_relations(db, [p.record() for p in items if p.values[-2]])
    halves = [(half, p.id) for p in items if not is_foreign(p.id) and p.norm_key
              for half in title_halves(p.norm_key.rpartition("|")[0])]
    if halves:
        db.executemany("INSERT INTO title_halves (half, paper_id) VALUES (?, ?)"
                       " ON CONFLICT DO NOTHING", halves)
    if links:
        now = utc_now()
        db.executemany(
            "INSERT INTO merges (record_id, paper_id, rule, reason, evidence, merged_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(record_id, original, rule, reason, json.dumps(evidence, sort_keys=True), now)
             for record_id, (original, rule, reason, evidence) in sorted(links.items())])
    return {record_id: link[0] for record_id, link in links.items()}


def refresh_keys(db: Database, items: Sequence[PreparedRecord]) -> None:
    """Keys and relations of stored records whose source gave something new (a bioRxiv
    preprint that now says where it was published): written again."""
    records = [p.record() for p in items if is_foreign(p.id) or p.values[-2]]
    if not records:
        return
    ids = sorted({r.id for r in records})
    for table in ("paper_keys", "paper_relations"):
        among, params = db.any_of("paper_id", ids)
        db.execute(f"DELETE FROM {table} WHERE {among}", params)
    _write_keys(db, [p for p in items if is_foreign(p.id)], _Records(items))
    _write_relations(db, records)
    _late_links(db, [r for r in records if r.relations])


def _papers_named(db: Database, wanted: set[str]) -> set[str]:
    """Stored papers with one of these ids, or one of their DOIs ('doi:10...'), by papers'
    id and DOI indexes."""
    ids = sorted(i for i in wanted if not i.startswith("doi:"))
    dois = sorted(i[4:] for i in wanted if i.startswith("doi:"))
    found: set[str] = set()
    if ids:
        among, params = db.any_of("id", ids)
        found |= set(db.column(f"SELECT id FROM papers WHERE {among}", params))
    if dois:
        among, params = db.any_of("lower(doi)", dois)
        found |= set(db.column(f"SELECT id FROM papers WHERE {among}", params))
    return found


def _late_links(db: Database, records: Sequence[PaperRecord]) -> None:
    """Stored papers that a changed record now links to (a preprint that says, since, where
    it was published): one paper from now on, the later-stored one shown as part of the
    earlier (its own merged records follow it). Only links: a title changed on the way to
    the journal was already compared when the second record was stored."""
    for record in records:
        found = _papers_named(db, {t for kind, t in record.relations if kind in SAME_WORK})
        stored = _stored_records(db, found | {record.id})
        me = stored.get(record.id)
        if me is None:
            continue
        for other_id in sorted(found - {record.id}):
            other = stored[other_id]
            mine, theirs = me["duplicate_of"] or me["id"], other["duplicate_of"] or other["id"]
            if mine == theirs or _kept_apart(db, [record.id, other_id]) & {
                    (record.id, other_id), (record.id, theirs), (mine, other_id)}:
                continue
            said = same_paper(record, other["record"])
            if not said.same:
                continue
            pks = dict(db.rows("SELECT id, pk FROM papers WHERE id IN (?, ?)", (mine, theirs)))
            keep, join = (mine, theirs) if pks[mine] < pks[theirs] else (theirs, mine)
            now = utc_now()
            db.execute("UPDATE papers SET duplicate_of = ? WHERE id = ? OR duplicate_of = ?",
                       (keep, join, join))
            db.execute("UPDATE merges SET paper_id = ? WHERE paper_id = ? AND unmerged_at IS NULL",
                       (keep, join))
            db.execute(
                "INSERT INTO merges (record_id, paper_id, rule, reason, evidence, merged_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (join, keep, said.rule, said.reason, json.dumps(dict(said.evidence),
                                                                sort_keys=True), now))
            break


def _old_rule(db: Database, items: Sequence[PreparedRecord], paper_id: str, original: str
              ) -> tuple[str, str, dict[str, str]]:
    """The rule and reason of a link the store's own rules made (same DOI, else title key)."""
    item = next(p for p in items if p.id == paper_id)
    if item.doi_key:
        other = db.value("SELECT lower(doi) FROM papers WHERE id = ?", (original,))
        if other is None:  # the original is in this batch
            other = next((p.doi_key for p in items if p.id == original), None)
        if other == item.doi_key:
            return "doi", f"{paper_id} and {original} carry the same DOI {item.doi_key}", {
                "identifier": "doi:" + item.doi_key}
    return "title-key", (f"{paper_id} and {original} have the same title and first author"), {}


def _kept_apart(db: Database, ids: Sequence[str]) -> set[tuple[str, str]]:
    """Pairs an unmerge separated (both orders), for records among `ids`."""
    if not ids:
        return set()
    among, params = db.any_of("record_id", list(ids))
    found: set[tuple[str, str]] = set()
    for record_id, paper_id in db.rows(
            f"SELECT record_id, paper_id FROM merges WHERE {among} AND unmerged_at IS NOT NULL",
            params):
        found |= {(record_id, paper_id), (paper_id, record_id)}
    among, params = db.any_of("paper_id", list(ids))
    for record_id, paper_id in db.rows(
            f"SELECT record_id, paper_id FROM merges WHERE {among} AND unmerged_at IS NOT NULL",
            params):
        found |= {(record_id, paper_id), (paper_id, record_id)}
    return found


def _match(db: Database, items: Sequence[PreparedRecord], records: _Records,
           apart: set[tuple[str, str]], links: dict[str, tuple[str, str, str, dict[str, str]]]
           ) -> None:
    """Links by sources.matching for every new record of another source, and for new arXiv
    records when keyed records are stored: candidates by keys, identifiers and title keys,
    then same_paper on each, an identifier's verdict preferred to a title's."""
    keys = {p.id: match_keys(records[p.id]) if is_foreign(p.id) else _probe_keys(p)
            for p in items}
    every_key = list({k for found in keys.values() for k in found})
    keyed: dict[str, set[str]] = {}
    if every_key:
        among, params = db.any_of("key", every_key)
        for key, paper_id in db.rows(f"SELECT key, paper_id FROM paper_keys WHERE {among}",
                                     params):
            keyed.setdefault(key, set()).add(paper_id)
    foreign = [p for p in items if is_foreign(p.id)]
    if not keyed and not foreign:
        return  # arXiv records none of which a stored record of another source resembles
    # Only records of another source, or with a stored candidate, go on (the arXiv path in a
    # mixed store: the few records whose keys met one).
    todo = [p for p in items if is_foreign(p.id) or (keyed and any(
        k in keyed for k in keys[p.id]))]
    candidates = {p.id: set().union(*(keyed[k] for k in keys[p.id] if k in keyed))
                  for p in todo}
    for item in foreign:
        candidates[item.id] |= _by_papers_indexes(db, records[item.id])
    stored = _stored_records(db, {c for found in candidates.values() for c in found})
    # Earlier records of this batch by key, when it holds records of another source (an
    # arXiv-only batch has nothing to compare within itself: the store's own rules did).
    in_batch: dict[str, list[str]] = {}
    for item in items if foreign else todo:
        verdict: tuple[str, Verdict] | None = None
        if item.id not in links:
            found = sorted((stored[c] for c in candidates.get(item.id, ()) if c in stored),
                           key=lambda row: row["pk"])
            verdict = _best_stored(records[item.id], found[:_CANDIDATES], apart) if found \
                else None
            if in_batch and (verdict is None or not _strength(verdict[1])):
                earlier = dict.fromkeys(i for k in keys[item.id] for i in in_batch.get(k, ()))
                for other_id in earlier:
                    if not (is_foreign(item.id) or is_foreign(other_id)):
                        continue  # two arXiv records: the store's own rules decided
                    target = links[other_id][0] if other_id in links else other_id
                    if not _may_join(item.id, other_id, target, apart):
                        continue
                    said = same_paper(records[item.id], records[other_id])
                    if said.same and (verdict is None or _strength(said) > _strength(verdict[1])):
                        verdict = (target, said)
                        if _strength(said):
                            break
        if verdict:
            target, said = verdict
            links[item.id] = (target, said.rule, said.reason, dict(said.evidence))
        if foreign:
            for key in keys[item.id]:
                in_batch.setdefault(key, []).append(item.id)


class _Records(dict[str, PaperRecord]):
    """The batch's records, each made from its PreparedRecord when first asked for (an arXiv
    batch in a keyed store asks for the few with candidates)."""

    def __init__(self, items: Sequence[PreparedRecord]) -> None:
        super().__init__()
        self.items = {p.id: p for p in items}

    def __missing__(self, paper_id: str) -> PaperRecord:
        record = self[paper_id] = self.items[paper_id].record()
        return record


def match_keys(record: PaperRecord) -> set[str]:
    """The keys a record of another source is stored under: sources.matching's candidate
    keys, and its title as the papers' title key writes it (`nk:`), which an arXiv record
    gives for free (PreparedRecord.norm_key)."""
    keys = candidate_keys(record)
    for title in dict.fromkeys((record.title, inline_text(record.title))):
        key = norm_title_key(title, ["x"])
        if key:
            keys.add("nk:" + key[:-2])
            keys.update(_half_keys(key[:-2]))
    return keys


def _probe_keys(item: PreparedRecord) -> list[str]:
    """What an arXiv record is looked up by, from what preparing it computed already: its id,
    arXiv's DOI of it, its DOI and its title key's title (string work only: the arXiv path
    must stay as fast as it was)."""
    keys = [f"id:{item.id}", f"id:doi:10.48550/arxiv.{item.id.lower()}"]
    if item.doi_key:
        keys.append(f"id:doi:{item.doi_key}")
    if item.norm_key:
        words = item.norm_key.rpartition("|")[0]
        keys.append("nk:" + words)
        keys += _half_keys(words)
    return keys


_MIN_HALVES = 6  # words a title needs for its halves to be looked up (3 words or more each)


@lru_cache(maxsize=8192)  # a batch's arXiv titles are probed, then written: split once
def _halves_of(words: str) -> tuple[str, str] | None:
    parts = words.split()
    if len(parts) < _MIN_HALVES:
        return None
    half = (len(parts) + 1) // 2
    return " ".join(parts[:half]), " ".join(parts[half:])


def _half_keys(words: str) -> list[str]:
    """'nkh:' and 'nkt:' keys of a title key's words (one edit leaves one half whole)."""
    found = _halves_of(words)
    return [f"nkh:{found[0]}", f"nkt:{found[1]}"] if found else []


def title_halves(words: str) -> tuple[int, ...]:
    """CRC-32s of the first and the second half of a title key's words ('h ', 't ' first):
    what title_halves holds of an arXiv paper."""
    found = _halves_of(words)
    if not found:
        return ()
    return (zlib.crc32(("h " + found[0]).encode()), zlib.crc32(("t " + found[1]).encode()))


def _best_stored(record: PaperRecord, found: Sequence[dict[str, Any]],
                 apart: set[tuple[str, str]]) -> tuple[str, Verdict] | None:
    """The stored paper (its original's id) this record is, by the strongest verdict."""
    verdict: tuple[str, Verdict] | None = None
    for row in found:
        target = row["duplicate_of"] or row["id"]
        if row["id"] == record.id or not _may_join(record.id, row["id"], target, apart):
            continue
        if not (is_foreign(record.id) or is_foreign(row["id"])):
            continue  # two arXiv records: the store's own rules decided (plan_links)
        said = same_paper(record, row["record"])
        if said.same and (verdict is None or _strength(said) > _strength(verdict[1])):
            verdict = (target, said)  # an identifier or a link says more than a title
            if _strength(said):
                break
    return verdict


def _strength(verdict: Verdict) -> int:
    """1 for what identifiers decided (the same id, a link one record asserts), 0 for text."""
    return int(verdict.rule in ("id", "relation"))


def _may_join(record_id: str, candidate: str, target: str, apart: set[tuple[str, str]]) -> bool:
    return target != record_id and (record_id, candidate) not in apart and (
        record_id, target) not in apart


def _by_papers_indexes(db: Database, record: PaperRecord) -> set[str]:
    """Stored papers (of any source) a record of another source may be: by an identifier it
    carries or links to (papers' id and DOI indexes), or by its title (the title key's index,
    any first author: a range over the key's 'title|' prefix)."""
    found = _papers_named(db, identifiers(record)
                          | {t for kind, t in record.relations if kind in SAME_WORK})
    halves: set[int] = set()
    for title in dict.fromkeys((record.title, inline_text(record.title))):
        key = norm_title_key(title, ["x"])
        if key:
            words = key[:-2]  # 'words|x' -> 'words'
            # Surname slugs are [a-z0-9-], all below '}': this range is every first author.
            found |= set(db.column(
                "SELECT id FROM papers WHERE norm_key >= ? AND norm_key < ? LIMIT ?",
                (words + "|", words + "}", _CANDIDATES)))
            halves.update(title_halves(words))
    if halves:  # an arXiv paper whose title differs in one half (a word changed, added)
        among, params = db.any_of("half", sorted(halves), kind="bigint")
        found |= set(db.column(f"SELECT paper_id FROM title_halves WHERE {among} LIMIT ?",
                               (*params, 2 * _CANDIDATES)))
    return found


def _stored_records(db: Database, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """{id: {pk, id, duplicate_of, record}} of stored papers, each as a PaperRecord with its
    authors in order and its relations, for same_paper."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    among, params = db.any_of("id", wanted)
    rows = db.dicts(f"SELECT pk, id, duplicate_of, text_source, title, abstract, doi"
                    f" FROM papers WHERE {among}", params)
    among, params = db.any_of("pa.paper_id", wanted)
    authors: dict[str, list[str]] = {}
    for paper_id, name in db.rows(
            f"SELECT pa.paper_id, a.name FROM paper_authors pa JOIN authors a"
            f" ON a.id = pa.author_id WHERE {among} ORDER BY pa.paper_id, pa.position", params):
        authors.setdefault(paper_id, []).append(name)
    relations = _relations_of(db, wanted)
    found = {}
    for row in rows:
        row["record"] = PaperRecord(
            id=row["id"], title=row["title"], abstract=row["abstract"],
            authors=authors.get(row["id"], []), categories=[], source=row["text_source"],
            doi=row["doi"], relations=relations.get(row["id"], []))
        found[row["id"]] = row
    return found


def _relations_of(db: Database, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    if not ids:
        return {}
    among, params = db.any_of("paper_id", list(ids))
    found: dict[str, list[tuple[str, str]]] = {}
    for paper_id, kind, target in db.rows(
            f"SELECT paper_id, kind, target FROM paper_relations WHERE {among}"
            " ORDER BY paper_id, kind, target", params):
        found.setdefault(paper_id, []).append((kind, target))
    return found


def _write_keys(db: Database, items: Sequence[PreparedRecord], records: dict[str, PaperRecord]
                ) -> None:
    rows = sorted({(key, p.id) for p in items for key in match_keys(records[p.id])})
    if rows:
        db.executemany("INSERT INTO paper_keys (key, paper_id) VALUES (?, ?)"
                       " ON CONFLICT DO NOTHING", rows)


def _write_relations(db: Database, records: Sequence[PaperRecord]) -> None:
    rows = sorted({(r.id, kind, target) for r in records for kind, target in r.relations})
    if rows:
        db.executemany("INSERT INTO paper_relations (paper_id, kind, target) VALUES (?, ?, ?)"
                       " ON CONFLICT DO NOTHING", rows)


# ---------------------------------------------------------------- what pages and unmerge ask
class Merges(Concern):
    """The records of a paper across sources and why they are one.

    The merge decision is a step of `Papers.upsert_papers` (plan_links / refresh_keys are
    called from store.papers' shared planning), so every backend has it; `papersift migrate`
    copies paper_keys, title_halves, paper_relations and merges (store.tables) with the rest.
    """

    def paper_records(self, paper_id: str) -> list[dict[str, Any]]:
        """Every record shown as this paper, itself first, then in the order they were
        stored: id, sources (with what each source alone said, its extras), versions, DOI,
        links, relations and (for a merged record) the rule and reason of its merge."""
        with self.db.snapshot():
            ids = [paper_id, *self.db.column(
                "SELECT id FROM papers WHERE duplicate_of = ? ORDER BY pk", (paper_id,))]
            among, params = self.db.any_of("id", ids)
            rows = {r["id"]: r for r in self.db.dicts(
                f"SELECT id, version, text_source, title, doi, links, submitted"
                f" FROM papers WHERE {among}", params)}
            if paper_id not in rows:
                return []
            among, params = self.db.any_of("paper_id", ids)
            sources: dict[str, list[str]] = {}
            extras: dict[str, dict[str, Any]] = {}
            for pid, source, given in self.db.rows(
                    f"SELECT paper_id, source, extras FROM paper_sources WHERE {among}"
                    " ORDER BY paper_id, source", params):
                sources.setdefault(pid, []).append(source)
                extras.setdefault(pid, {})[source] = json.loads(given)
            versions: dict[str, list[dict[str, Any]]] = {}
            for pid, version, day in self.db.rows(
                    f"SELECT paper_id, version, date FROM paper_versions WHERE {among}"
                    " ORDER BY paper_id, version", params):
                versions.setdefault(pid, []).append({"version": version, "date": day})
            relations = _relations_of(self.db, ids)
            among, params = self.db.any_of("record_id", ids)
            merged = {r["record_id"]: r for r in self.db.dicts(
                f"SELECT record_id, paper_id, rule, reason, evidence, merged_at FROM merges"
                f" WHERE {among} AND unmerged_at IS NULL", params)}
        found = []
        for pid in ids:
            row = rows[pid]
            merge = merged.get(pid) if pid != paper_id else None
            found.append({
                "id": pid, "sources": sources.get(pid, [row["text_source"]]),
                "extras": extras.get(pid, {}),
                "version": row["version"], "versions": versions.get(pid, []),
                "title": row["title"], "doi": row["doi"], "submitted": row["submitted"],
                "links": json.loads(row["links"]),
                "relations": [{"kind": k, "target": t} for k, t in relations.get(pid, [])],
                "merge": {"rule": merge["rule"], "reason": merge["reason"],
                          "evidence": json.loads(merge["evidence"]),
                          "merged_at": merge["merged_at"]} if merge else (
                    None if pid == paper_id else {
                        "rule": "before-merges", "reason": "linked as a duplicate before merges"
                        " were recorded (same DOI, or same title and first author)",
                        "evidence": {}, "merged_at": None}),
            })
        return found

    def merges_of(self, paper_id: str) -> list[dict[str, Any]]:
        """Every merge into or of this record, live and undone, oldest first."""
        return [dict(r, evidence=json.loads(r["evidence"])) for r in self.db.dicts(
            "SELECT id, record_id, paper_id, rule, reason, evidence, merged_at, unmerged_at"
            " FROM merges WHERE record_id = ? OR paper_id = ? ORDER BY id",
            (paper_id, paper_id))]

    def unmerge(self, paper_id: str) -> list[str] | None:
        """Split `paper_id` from the paper it was merged into, or, for a paper others were
        merged into, split them all: each becomes a paper of its own again, and the pairs
        stay apart in later ingests. The ids split off ([] when nothing was merged); None
        when the store holds no such id."""
        def work() -> list[str] | None:
            # Upserts wait (their planning must not see half of it), readers do not.
            self.db.lock_table("papers", "SHARE ROW EXCLUSIVE")
            row = self.db.one("SELECT id, duplicate_of FROM papers WHERE id = ?", (paper_id,))
            if row is None:
                return None
            if row["duplicate_of"]:
                pairs = [(paper_id, row["duplicate_of"])]
            else:
                pairs = [(r, paper_id) for r in self.db.column(
                    "SELECT id FROM papers WHERE duplicate_of = ? ORDER BY id", (paper_id,))]
            now = utc_now()
            for record_id, into in pairs:
                self.db.execute("UPDATE papers SET duplicate_of = NULL WHERE id = ?",
                                (record_id,))
                if not self.db.execute(
                        "UPDATE merges SET unmerged_at = ? WHERE record_id = ?"
                        " AND unmerged_at IS NULL", (now, record_id)):
                    # Linked before merges were recorded: a row that keeps them apart.
                    self.db.execute(
                        "INSERT INTO merges (record_id, paper_id, rule, reason, merged_at,"
                        " unmerged_at) VALUES (?, ?, 'before-merges', ?, ?, ?)",
                        (record_id, into, "linked as a duplicate before merges were recorded",
                         now, now))
            return [record_id for record_id, _ in pairs]

        return self.db.write(work)

