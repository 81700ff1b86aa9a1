"""`papersift eval threads`: links and threads against the named-artefact threads of a dev file.

The dev file (stories/threads-dev.jsonl) is mechanical: every paper of the 90 days after an
origin that writes the name counts as a follow-up, so about half of its pairs are papers that
coin the same name for something else ("TACO: Task as Context Prompting" after "TACO: Taming
Diffusion"). Recall is therefore given twice: over every pair, and over the pairs whose
follow-up only uses the name (does not define it again in its title, after "we propose", or
as an acronym spelled out). Precision is over our links to the dev origins inside the same 90
days: the share that are dev pairs.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from papersift.errors import UsageError
from papersift.links.linker import (
    LinkParams,
    LinkResult,
    OldNames,
    Paper,
    VectorSource,
    build,
    read_paper,
)
from papersift.links.threads import Corpus, Thread, ThreadParams, build_threads

WINDOW_DAYS = 90


def load_judged(path: Path) -> set[tuple[str, str]]:
    """Pairs of the dev file a reader judged genuine follow-ups: a JSON list of
    [follow-up, origin, name] (docs/links-dev-judged.json)."""
    if not path.is_file():
        raise UsageError(f"file not found: {path}")
    return {(str(row[0]), str(row[1])) for row in json.loads(path.read_text(encoding="utf-8"))}


def load_dev(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    if not path.is_file():
        raise UsageError(f"file not found: {path}")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if not lines or "task" not in lines[0]:
        raise UsageError(f"{path}: not a threads file (first line should be a task)")
    threads = lines[1:]
    for thread in threads:
        if not {"name", "origin", "followups"} <= set(thread):
            raise UsageError(f"{path}: a thread needs name, origin and followups")
    return lines[0]["task"], threads


def _within(day: str, origin_day: str) -> bool:
    end = (date.fromisoformat(origin_day) + timedelta(days=WINDOW_DAYS)).isoformat()
    return origin_day < day <= end


def score_links(dev: Sequence[dict[str, Any]], result: LinkResult,
                papers: dict[str, Paper], read: Callable[[Paper], Any] = read_paper,
                judged: set[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Recall (all pairs, pairs that only use the name, pairs a reader judged genuine
    follow-ups), precision and how collisions went."""
    linked = {(k.source, k.target) for k in result.links if k.status == "linked"}
    ambiguous = {(k.source, k.target) for k in result.links if k.status == "ambiguous"}
    origins = {t["origin"]: t for t in dev}
    pairs, using = set(), set()
    for thread in dev:
        for follower in thread["followups"]:
            pairs.add((follower, thread["origin"]))
            coined = {c.name for c in read(papers[follower])[0]}
            if thread["name"] not in coined:
                using.add((follower, thread["origin"]))
    ours = {(s, t) for s, t in linked if t in origins
            and _within(papers[s].announced, papers[t].announced)}
    collisions = pairs - using
    extra = {}
    if judged:
        extra = {"judged_pairs": len(judged),
                 "recall_judged": _share(len(judged & linked), len(judged)),
                 "judged_links_wrong": len((ours & pairs) - judged - collisions)}
    return extra | {
        "dev_threads": len(dev), "dev_pairs": len(pairs), "dev_pairs_using": len(using),
        "recall_all": _share(len(pairs & linked), len(pairs)),
        "recall_using": _share(len(using & linked), len(using)),
        "precision": _share(len(ours & pairs), len(ours)),
        "links_to_dev_origins": len(ours),
        "collisions_kept_apart": _share(len(collisions - linked), len(collisions)),
        "ambiguous_dev_pairs": len(pairs & ambiguous),
        "origins_found": _share(len({a.origin for a in result.artefacts} & set(origins)),
                                len(origins)),
    }


def thread_purity(dev: Sequence[dict[str, Any]], threads: Sequence[Thread]) -> dict[str, Any]:
    """Of the papers of our threads that the dev file places, the share that sit in their
    thread's majority dev thread (threads with at least two placed papers)."""
    place: dict[str, set[int]] = {}
    for i, thread in enumerate(dev):
        for pid in [thread["origin"], *thread["followups"]]:
            place.setdefault(pid, set()).add(i)
    kept = total = measured = 0
    for thread in threads:
        placed = [place[p] for p in thread.paper_ids if p in place]
        if len(placed) < 2:
            continue
        counts = Counter(i for where in placed for i in where)
        majority = counts.most_common(1)[0][0]
        kept += sum(majority in where for where in placed)
        total += len(placed)
        measured += 1
    return {"purity": _share(kept, total), "threads_measured": measured, "papers_measured": total}


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def evaluate_threads(dev_path: Path, papers: Sequence[Paper], vectors: VectorSource,
                     corpus_vectors: Callable[[], Corpus] | None = None,
                     old_names: OldNames | None = None,
                     params: LinkParams = LinkParams(),
                     thread_params: ThreadParams = ThreadParams(),
                     judged: set[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Links over every paper, scored against the dev threads; threads' purity when a full
    corpus of vectors is given (close papers need every paper's vector)."""
    task, dev = load_dev(dev_path)
    by_id = {p.id: p for p in papers}
    missing = {p for t in dev for p in [t["origin"], *t["followups"]]} - set(by_id)
    if missing:
        raise UsageError(f"{len(missing)} papers of the threads file are not in the papers file")
    reads = {p.id: read_paper(p) for p in papers}  # read once, used three times

    def read(paper: Paper) -> Any:
        return reads[paper.id]
    if corpus_vectors is None:
        vectors, report_focus = focused(vectors, papers, {t["name"] for t in dev}, read)
    else:
        report_focus = len(papers)
    clock = time.perf_counter()
    _, result = build(papers, vectors, old_names or {}, params, read)
    seconds = time.perf_counter() - clock
    report: dict[str, Any] = {"papers": len(papers), "artefacts": len(result.artefacts),
                              "links": sum(k.status == "linked" for k in result.links),
                              "ambiguous": sum(k.status == "ambiguous" for k in result.links),
                              "link_seconds": round(seconds, 1),
                              "papers_with_vectors": report_focus}
    report |= score_links(dev, result, by_id, read, judged)
    corpus = corpus_vectors() if corpus_vectors else Corpus(
        [p.id for p in papers], [p.announced for p in papers], _no_vectors(len(papers)))
    threads = build_threads(result.artefacts, result.links, corpus,
                            thread_params if corpus_vectors else ThreadParams(close_similarity=2.0))
    report["threads"] = len(threads)
    report |= thread_purity(dev, threads)
    return report


def focused(source: VectorSource, papers: Sequence[Paper], names: set[str],
            read: Callable[[Paper], Any] = read_paper) -> tuple[VectorSource, int]:
    """A source that asks `source` only for papers that coin or mention one of `names`, and
    gives every other paper a zero vector (it links to nothing). The links of those names are
    exactly the ones full vectors would give: their decisions only look at such papers. So
    the dev file's figures need ~2,000 papers embedded, not the corpus."""
    wanted = set()
    for paper in papers:
        coined, mentions = read(paper)
        if names & (mentions | {c.name for c in coined}):
            wanted.add(paper.id)
    dim = [0]

    def vectors(ids: Sequence[str]) -> Any:
        import numpy as np

        keep = [pid for pid in ids if pid in wanted]
        found = dict(zip(keep, source(keep), strict=True)) if keep else {}
        if found:
            dim[0] = len(next(iter(found.values())))
        zero = np.zeros(dim[0] or 384, dtype=np.float32)
        return np.stack([found.get(pid, zero) for pid in ids])
    return vectors, len(wanted)


def _no_vectors(n: int) -> Any:
    import numpy as np

    return np.zeros((n, 1), dtype=np.float32)
