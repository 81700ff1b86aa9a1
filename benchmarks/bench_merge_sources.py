"""Benchmark: merging records across sources (papersift.sources.matching): precision and recall on real-derived pairs.

Run by hand:  .venv/bin/python benchmarks/bench_merge_sources.py [--papers 3000] [--seed 7]

Pairs that must merge (one paper as two sources give it):
- arXiv papers from ../shared/data/arxiv-2025-2026.jsonl.gz and a copy as a journal or a
  preprint server would give it: another id (a DOI), another version, the abstract as JATS
  or unwrapped, the title with markup or a changed word, the author names reordered,
  abbreviated ("K. M. Wright", "Wright, K. M.", "Wright KM"); some copies carry arXiv's DOI;
- the recorded bioRxiv/medRxiv answers (../shared/formats/biorxiv_api/): the versions of one
  DOI, and each preprint with a `published` DOI against a journal copy of it (linked by that
  DOI, and again with the link removed so that only title and authors can join them);
- the recorded Crossref works (../shared/formats/crossref_api/) against a bioRxiv-style copy
  (abbreviated names, plain abstract with the heading run in), and the real has-preprint pair.

Pairs that must stay apart: the same title by other authors; "Comment on ..." and "Reply
to ..." papers (the reply by the same authors); a series' next part by the same authors; each
paper against a journal copy of the arXiv paper whose title is most like its own; the
recorded Crossref works (one author's papers) against copies of each other; bioRxiv preprints
against copies of other preprints of the same category.

Prints precision, recall, per-kind figures and the comparisons' speed; --json for a line of JSON.

`--store N` also stores N pairs drawn at random, each into a fresh SQLite store (one record,
then the other, in both orders in turn), and scores what the store made of them: one paper or
two (store.merges: candidates by keys and papers' indexes, then same_paper). Run with
PYTHONPATH pointing at older code to see what its store made of the same pairs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from papersift.records import PaperRecord
from papersift.sources import biorxiv, crossref
from papersift.sources.matching import candidate_keys, normalized_title, same_paper

SHARED = Path(os.environ.get("PAPERSIFT_SHARED_DATA",
                             Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
FORMATS = SHARED.parent / "formats"
Pair = tuple[str, PaperRecord, PaperRecord, bool]  # kind, a, b, whether they are one paper
_GROUP = re.compile(r"\b(?:team|consortium|collaboration|group|lab|project|inc)\b", re.I)


def arxiv_records(count: int, rng: random.Random) -> list[PaperRecord]:
    with gzip.open(SHARED / "arxiv-2025-2026.jsonl.gz", "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    rows = [r for r in rows if r.get("authors") and r.get("title")]
    return [PaperRecord(id=r["id"], version=1, title=r["title"], abstract=r["abstract"],
                        authors=r["authors"], categories=r["categories"], source="arxiv",
                        announced=r["announced"]) for r in rng.sample(rows, count)]


# ------------------------------------------------------------- how another source writes it
def abbreviated(name: str, style: int) -> str:
    parts = name.split()
    # Nobody abbreviates a team's name ("NAVER Cloud HyperCLOVA X Team").
    if len(parts) < 2 or len(parts) > 4 or _GROUP.search(name):
        return name
    family, given = parts[-1], parts[:-1]
    initials = [g[0].upper() for g in given if g[:1].isalpha()]
    if style == 0:
        return " ".join(f"{i}." for i in initials) + f" {family}"
    if style == 1:
        return f"{family}, " + " ".join(f"{i}." for i in initials)
    return f"{family} {''.join(initials)}"


def jats(abstract: str) -> str:
    text = " ".join(abstract.split()).replace("&", "&amp;").replace("<", "&lt;")
    return f"<jats:title>Abstract</jats:title>\n        <jats:p>{text}</jats:p>"


def retitled(title: str, rng: random.Random, how: int) -> str:
    words = " ".join(title.split()).split(" ")
    if how == 0:
        return " ".join(words) + "."
    if how == 1 and len(words) > 3:
        k = rng.randrange(1, len(words))
        return " ".join([*words[:k], f"<i>{words[k]}</i>", *words[k + 1:]])
    if how == 2:
        return " ".join(words).upper() if len(words) < 6 else " ".join(words).title()
    if how == 3 and len(words) > 6:
        # a word changed on the way to the journal (not a number: that makes another paper)
        k = rng.choice([n for n in range(1, len(words)) if not any(c.isdigit() for c in words[n])]
                       or [len(words) - 1])
        return " ".join([*words[:k], {"a": "the", "the": "a"}.get(words[k].lower(), "novel"),
                         *words[k + 1:]])
    return title


def journal_copy(paper: PaperRecord, index: int, rng: random.Random, variant: int
                 ) -> PaperRecord:
    """The paper as a journal (Crossref) or another server would list it."""
    authors = list(paper.authors)
    if variant in (1, 3) and len(authors) > 1:
        authors = authors[1:] + authors[:1]  # reordered
    if variant in (2, 3):
        authors = [abbreviated(a, (index + n) % 3) for n, a in enumerate(authors)]
    doi = f"10.5555/bench.{index}"
    copy = PaperRecord(
        id=f"doi:{doi}", doi=doi, source="crossref", version=1 + variant % 3,
        title=retitled(paper.title, rng, variant if variant < 4 else index % 4),
        abstract=jats(paper.abstract) if variant % 2 == 0 else " ".join(paper.abstract.split()),
        authors=authors, categories=[])
    if variant == 4:  # a copy that says which arXiv paper it is
        copy = replace(copy, relations=[("is-version-of", f"doi:10.48550/arxiv.{paper.id}")])
    return copy


# ------------------------------------------------------------- pairs
def arxiv_pairs(papers: list[PaperRecord], rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    by_title = _nearest_titles(papers)
    for index, paper in enumerate(papers):
        variant = index % 5
        pairs.append((f"arxiv copy v{variant}", paper, journal_copy(paper, index, rng, variant), True))
        other = _stranger(papers, paper, index)
        if index % 3 == 0:
            pairs.append(("same title, other authors", paper,
                          replace(journal_copy(paper, index, rng, 0), authors=other.authors), False))
        elif index % 3 == 1:
            comment = replace(journal_copy(paper, index, rng, 1),
                              title=f"Comment on \u201c{paper.title}\u201d",
                              authors=other.authors[:2], abstract=other.abstract)
            reply = replace(journal_copy(paper, index + 1, rng, 0),
                            title=f"Reply to: Comment on {paper.title}")
            pairs += [("comment", paper, comment, False), ("reply by the authors", paper, reply, False)]
        else:
            part = replace(journal_copy(paper, index, rng, 1), title=f"{paper.title}: Part II",
                           abstract=other.abstract)
            pairs.append(("next part, same authors", replace(paper, title=f"{paper.title}: Part I"),
                          part, False))
        neighbour = by_title[index]
        pairs.append(("closest other title", paper,
                      journal_copy(papers[neighbour], len(papers) + index, rng, index % 4), False))
    return pairs


def _stranger(papers: list[PaperRecord], paper: PaperRecord, index: int) -> PaperRecord:
    """Another paper none of whose authors has a family name of this one's."""
    families = {a.split()[-1].lower() for a in paper.authors if a.split()}
    for step in range(1, len(papers)):
        other = papers[(index * 7 + step) % len(papers)]
        if not families & {a.split()[-1].lower() for a in other.authors if a.split()}:
            return other
    raise ValueError("every paper shares an author with this one")


def _nearest_titles(papers: list[PaperRecord]) -> list[int]:
    """For each paper, the other paper whose title shares the most rare words."""
    words = [set(normalized_title(p.title).split()) for p in papers]
    frequency = Counter(w for ws in words for w in ws)
    index: dict[str, list[int]] = defaultdict(list)
    for n, ws in enumerate(words):
        for w in ws:
            if frequency[w] <= 50:
                index[w].append(n)
    nearest = []
    for n, ws in enumerate(words):
        scores: Counter[int] = Counter()
        for w in ws:
            if frequency[w] <= 50:
                scores.update(m for m in index[w] if m != n)
        nearest.append(scores.most_common(1)[0][0] if scores else (n + 1) % len(papers))
    return nearest


def recorded_pairs(rng: random.Random) -> list[Pair]:
    pairs: list[Pair] = []
    preprints: list[PaperRecord] = []
    for server in ("biorxiv", "medrxiv"):
        path = next((FORMATS / "biorxiv_api").glob(f"*_{server}_details_*.json"))
        records = [biorxiv.parse_item(item, server)
                   for item in json.loads(path.read_bytes())["collection"]]
        preprints += records
        versions = defaultdict(list)
        for record in records:
            versions[record.id].append(record)
        for group in versions.values():
            pairs += [("bioRxiv versions", a, b, True) for a, b in zip(group, group[1:], strict=False)]
    latest = list({r.id: r for r in preprints}.values())
    for index, preprint in enumerate(latest):
        if preprint.published_doi:
            published = _published_copy(preprint, index)
            pairs.append(("bioRxiv published (linked)", preprint, published, True))
            pairs.append(("bioRxiv published (unlinked)", replace(preprint, relations=[]),
                          published, True))
        others = [p for p in latest if p.id != preprint.id and p.categories == preprint.categories]
        for other in rng.sample(others, min(3, len(others))):
            pairs.append(("other preprint, same category", preprint,
                          _published_copy(replace(other, relations=[]), 1000 + index), False))
    works = [crossref.parse_item(item) for item in _crossref_items()]
    works = [w for w in works if w.authors]
    copies = {w.id: _preprint_copy(w, n) for n, w in enumerate(works)}
    for work in works:
        if work.relations:
            target = next(w for w in works if w.id == work.relations[0][1]) \
                if any(w.id == work.relations[0][1] for w in works) else None
            if target:
                pairs.append(("Crossref has-preprint (real)", work, target, True))
        pairs.append(("Crossref work vs preprint copy", work, copies[work.id], True))
        for other in works:
            if other.id != work.id and not _real_pair(work, other):
                pairs.append(("one author's other papers", work, copies[other.id], False))
    return pairs


def _real_pair(a: PaperRecord, b: PaperRecord) -> bool:
    """The recorded preprint and its published version (one paper, whatever the copies)."""
    return normalized_title(a.title) == normalized_title(b.title)


def _crossref_items() -> list[dict]:
    return [item for path in sorted((FORMATS / "crossref_api").glob("*.json"))
            for item in json.loads(path.read_bytes())["message"]["items"]]


def _published_copy(preprint: PaperRecord, index: int) -> PaperRecord:
    """A journal's listing of a preprint: its DOI, JATS abstract, names as 'Given Family'."""
    doi = preprint.published_doi or f"10.5555/pub.{index}"
    authors = list(preprint.authors)
    if len(authors) > 2:
        authors[-1], authors[-2] = authors[-2], authors[-1]
    return PaperRecord(id=f"doi:{doi}", doi=doi, source="crossref", title=preprint.title.rstrip(".") + ".",
                       abstract=jats(preprint.abstract), authors=authors, categories=[])


def _preprint_copy(work: PaperRecord, index: int) -> PaperRecord:
    """A Crossref work as bioRxiv would list its preprint: abbreviated names, plain abstract."""
    line = "; ".join(abbreviated(a, 1) for a in work.authors)
    abstract = ("Abstract" + work.abstract.replace("\n\n", "")) if work.abstract else ""
    # A posted preprint's copy is its journal version: bioRxiv gives a paper one DOI.
    doi = f"10.5555/journal.{index}" if work.doi.startswith("10.1101/") else f"10.1101/bench.{index}"
    return PaperRecord(id=f"doi:{doi}", doi=doi, source="biorxiv", version=1,
                       title=work.title, abstract=abstract, authors=biorxiv.split_authors(line),
                       categories=["biorxiv/ecology"])


# ------------------------------------------------------------- scoring
def score(pairs: list[Pair]) -> dict:
    by_kind: dict[str, Counter] = defaultdict(Counter)
    totals: Counter = Counter()
    blocked = 0
    mistakes: list[str] = []
    started = time.perf_counter()
    for kind, a, b, truth in pairs:
        verdict = same_paper(a, b)
        cell = ("tp" if verdict.same else "fn") if truth else ("fp" if verdict.same else "tn")
        by_kind[kind][cell] += 1
        totals[cell] += 1
        if cell in ("fp", "fn") and len(mistakes) < 20:
            mistakes.append(f"{cell} [{kind}] {a.title[:60]!r} / {b.title[:60]!r}: {verdict.reason}")
    elapsed = time.perf_counter() - started
    for kind, a, b, truth in pairs:
        met = bool(candidate_keys(a) & candidate_keys(b))
        blocked += truth and met
        if truth and not met and len(mistakes) < 26:
            mistakes.append(f"unblocked [{kind}] {a.title[:70]!r} / {b.title[:70]!r}")
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    return {
        "pairs": len(pairs), "positives": tp + fn, "negatives": fp + totals["tn"],
        "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
        "blocking_recall": blocked / (tp + fn) if tp + fn else 1.0,
        "us_per_pair": 1e6 * elapsed / len(pairs), "by_kind": {k: dict(v) for k, v in by_kind.items()},
        "mistakes": mistakes,
    }


def store_score(pairs: list[Pair], count: int, rng: random.Random) -> dict:
    """What a store makes of `count` pairs drawn at random: one paper or two."""
    from papersift.store import add_records, open_store

    totals: Counter = Counter()
    mistakes: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for n, (kind, a, b, truth) in enumerate(rng.sample(pairs, min(count, len(pairs)))):
            first, second = (a, b) if n % 2 else (b, a)
            with open_store(Path(folder) / f"{n}.db") as store:
                add_records(store, [first])
                add_records(store, [second])
                one = store.papers.count_papers() == 1
            cell = ("tp" if one else "fn") if truth else ("fp" if one else "tn")
            totals[cell] += 1
            if cell in ("fp", "fn") and len(mistakes) < 12:
                mistakes.append(f"store {cell} [{kind}] {first.id} then {second.id}: "
                                f"{first.title[:50]!r} / {second.title[:50]!r}")
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    return {"store_pairs": sum(totals.values()), "store_positives": tp + fn,
            "store_precision": tp / (tp + fp) if tp + fp else 1.0,
            "store_recall": tp / (tp + fn) if tp + fn else 1.0,
            "store_seconds": round(time.perf_counter() - started, 1),
            "store_mistakes": mistakes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", type=int, default=0,
                        help="Also store this many pairs, each in a fresh SQLite store.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pairs = arxiv_pairs(arxiv_records(args.papers, rng), rng) + recorded_pairs(rng)
    result = score(pairs)
    if args.store:
        result.update(store_score(pairs, args.store, random.Random(args.seed + 1)))
    result.update(machine=f"{platform.machine()} {os.cpu_count()} cores, Python "
                  f"{platform.python_version()}", date=datetime.now(UTC).isoformat(timespec="minutes"),
                  load=os.getloadavg()[0], seed=args.seed, papers=args.papers)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['date']}  {result['machine']}  load {result['load']:.1f}  seed {args.seed}")
    print(f"pairs {result['pairs']:,} ({result['positives']:,} one paper, "
          f"{result['negatives']:,} two): precision {result['precision']:.4f}, "
          f"recall {result['recall']:.4f}, blocking recall {result['blocking_recall']:.4f}, "
          f"{result['us_per_pair']:.0f} us a pair")
    print("| kind | one paper? | merged | kept apart |\n|---|---|---|---|")
    for kind, cells in result["by_kind"].items():
        positive = "tp" in cells or "fn" in cells
        merged = cells.get("tp", 0) + cells.get("fp", 0)
        apart = cells.get("tn", 0) + cells.get("fn", 0)
        print(f"| {kind} | {'yes' if positive else 'no'} | {merged:,} | {apart:,} |")
    for line in result["mistakes"]:
        print(re.sub(r"\s+", " ", line))
    if args.store:
        print(f"through the store: {result['store_pairs']:,} pairs ({result['store_positives']:,}"
              f" one paper): precision {result['store_precision']:.4f}, recall "
              f"{result['store_recall']:.4f} ({result['store_seconds']} s)")
        for line in result["store_mistakes"]:
            print(re.sub(r"\s+", " ", line))


if __name__ == "__main__":
    main()
