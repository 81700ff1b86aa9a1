"""Links and threads on real papers: names coined and mentioned, old names refused, collisions
told apart, incremental runs equal to a full build, and the dev threads' evaluation."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from functools import lru_cache
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from typer.testing import CliRunner

from papersift.cli.main import app
from papersift.links.evaluate import load_dev, score_links, thread_purity
from papersift.links.linker import (
    LinkParams,
    LinkState,
    Paper,
    VectorSource,
    build,
    read_paper,
    update,
)
from papersift.links.names import coined_names, mentioned_names, name_shaped
from papersift.links.threads import Corpus, build_threads
from tests.conftest import shared_file

DAYS = 12  # the first days of the recent corpus: ~3,000 papers


@lru_cache(maxsize=1)
def _corpus() -> dict[str, Paper]:
    path = shared_file("arxiv-2025-2026.jsonl.gz")
    found: dict[str, Paper] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            found.setdefault(row["id"], Paper(row["id"], row["title"], row["abstract"],
                                              tuple(row["categories"]), row["announced"]))
    return found


def _papers(limit_days: int = DAYS) -> list[Paper]:
    found = _corpus()
    days = sorted({p.announced for p in found.values()})[:limit_days]
    return [p for p in found.values() if p.announced <= days[-1]]


def _dev() -> list[dict]:
    return load_dev(shared_file("stories/threads-dev.jsonl"))[1]


def _all_papers_of(ids: set[str]) -> dict[str, Paper]:
    corpus = _corpus()
    return {pid: corpus[pid] for pid in ids}


# Word-count cosines run lower than a sentence model's: thresholds for that space.
WORDS = LinkParams(min_similarity=0.12, risky_similarity=0.22)


def _meaning(papers: Sequence[Paper]) -> VectorSource:
    """Unit word-count vectors of the papers' text: a model-free stand-in for embeddings whose
    cosine still tells a watermarking paper from a reasoning one."""
    hashing = HashingVectorizer(n_features=2**14, stop_words="english", alternate_sign=False)
    matrix = hashing.transform([f"{p.title}. {p.abstract}" for p in papers]).toarray()
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
    row = {p.id: i for i, p in enumerate(papers)}
    return lambda ids: matrix[[row[i] for i in ids]].astype(np.float32)


def test_every_dev_origin_coins_its_name_in_its_title() -> None:
    dev = _dev()
    papers = _all_papers_of({t["origin"] for t in dev})
    for thread in dev:
        paper = papers[thread["origin"]]
        coined = {c.name: c.how for c in read_paper(paper)[0]}
        assert coined.get(thread["name"]) == "title", (thread["name"], paper.title)


def test_names_and_mentions() -> None:
    assert [c.name for c in coined_names("LoGRA: Scalable Gradient Projection", "")] == ["LoGRA"]
    intro = coined_names("A title", "In this work we introduce SkillsBench, a benchmark of skills.")
    assert [(c.name, c.how) for c in intro] == [("SkillsBench", "intro")]
    # "a PEFT method" uses a known name as a modifier: nothing coined.
    assert coined_names("A title", "We propose a PEFT method for adapters.") == []
    assert mentioned_names("", "on MS MARCO and BEIR, LoGRA-based probes") == {"BEIR", "LoGRA"}
    for word in ("The", "Large-Scale", "LLMs", "GPU", "2025", "UAVs"):
        assert not name_shaped(word), word


def test_old_names_are_no_recent_artefact() -> None:
    papers = _papers()
    _, result = build(papers, _meaning(papers))
    names = {a.name for a in result.artefacts}
    for old in ("GRPO", "PPO", "BERT", "DPO", "CLIP", "LoRA", "RLHF"):
        assert old not in names, old
    assert len(result.artefacts) > 100
    # Every link goes to an earlier day, and to an artefact of the name it is about.
    by_key = {(a.name, a.origin): a for a in result.artefacts}
    day = {p.id: p.announced for p in papers}
    for link in result.links:
        assert (link.name, link.target) in by_key
        assert day[link.target] < day[link.source]


def test_an_incremental_run_gives_what_a_full_build_gives() -> None:
    papers = _papers()
    vectors = _meaning(papers)
    _, full = build(papers, vectors)
    cut = sorted({p.announced for p in papers})[DAYS // 2]
    state = LinkState()
    first = update(state, [p for p in papers if p.announced < cut], vectors)
    second = update(state, [p for p in papers if p.announced >= cut], vectors)
    retracted = set(second.retracted)
    kept = [k for k in first.links if f"{k.name}@{k.target}" not in retracted] + second.links
    assert sorted(kept, key=repr) == sorted(full.links, key=repr)
    assert {a.key for a in first.artefacts + second.artefacts} - retracted == \
        {a.key for a in full.artefacts}


def _dev_slice(names: set[str]) -> tuple[list[dict], dict[str, Paper]]:
    dev = [t for t in _dev() if t["name"] in names]
    papers = _all_papers_of({p for t in dev for p in [t["origin"], *t["followups"]]})
    return dev, papers


def test_colliding_names_are_told_apart_and_real_follow_ups_linked() -> None:
    dev, papers = _dev_slice({"SEAL", "BrowseComp", "HealthBench", "MOSEv2", "TACO"})
    ordered = sorted(papers.values(), key=lambda p: (p.announced, p.id))
    _, result = build(ordered, _meaning(ordered), params=WORDS)
    linked = {(k.source, k.target) for k in result.links if k.status == "linked"}
    seal = next(t for t in dev if t["name"] == "SEAL")
    # "SEAL: Steerable Reasoning Calibration" is not a follow-up of "SEAL: Semantic Aware
    # Image Watermarking": a new artefact of the same name.
    titled = [f for f in seal["followups"] if papers[f].title.startswith("SEAL:")]
    assert titled
    for follower in titled:
        assert (follower, seal["origin"]) not in linked
        assert any(a.origin == follower and a.name == "SEAL" for a in result.artefacts)
    report = score_links(dev, result, papers)
    assert report["collisions_kept_apart"] >= 0.8
    browse = next(t for t in dev if t["name"] == "BrowseComp")
    assert sum((f, browse["origin"]) in linked for f in browse["followups"]) >= \
        0.8 * len(browse["followups"])


def test_threads_hold_origin_follow_ups_and_close_papers() -> None:
    dev, papers = _dev_slice({"BrowseComp", "MOSEv2", "HealthBench"})
    ordered = sorted(papers.values(), key=lambda p: (p.announced, p.id))
    vectors = _meaning(ordered)
    _, result = build(ordered, vectors, params=WORDS)
    corpus = Corpus([p.id for p in ordered], [p.announced for p in ordered],
                    vectors([p.id for p in ordered]))
    threads = build_threads(result.artefacts, result.links, corpus)
    assert threads
    for thread in threads:
        assert thread.members[0]["role"] == "origin"
        assert thread.members[0]["paper"] == thread.origin
        assert len(set(thread.paper_ids)) == len(thread.paper_ids)
    assert thread_purity(dev, threads)["purity"] >= 0.9


@pytest.mark.slow
def test_eval_threads_command_on_a_slice_of_the_dev_file(tmp_path: Path) -> None:
    names = {"BrowseComp", "SEAL", "MOSEv2", "TACO", "HealthBench", "RAID"}
    dev, papers = _dev_slice(names)
    (tmp_path / "threads.jsonl").write_text(
        json.dumps({"task": {"note": "slice"}}) + "\n" + "".join(json.dumps(t) + "\n" for t in dev))
    with (tmp_path / "papers.jsonl").open("w") as out:
        for p in papers.values():
            out.write(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract,
                                  "categories": list(p.categories), "announced": p.announced}) + "\n")
    ordered = list(papers.values())
    np.save(tmp_path / "v.npy", _meaning(ordered)([p.id for p in ordered]))
    (tmp_path / "ids.json").write_text(json.dumps([p.id for p in ordered]))
    result = CliRunner().invoke(app, [
        "--data-dir", str(tmp_path / "data"), "eval", "threads", "--threads",
        str(tmp_path / "threads.jsonl"), "--papers", str(tmp_path / "papers.jsonl"),
        "--vectors", str(tmp_path / "v.npy"), "--ids", str(tmp_path / "ids.json"),
        "--min-similarity", str(WORDS.min_similarity), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["dev_threads"] == len(dev)
    assert report["recall_using"] >= 0.8
    assert report["precision"] >= 0.9
    assert 0 <= report["purity"] <= 1


def test_first_lines_of_the_corpus_read_fast() -> None:
    path = shared_file("arxiv-2025-2026.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in islice(handle, 300)]
    for row in rows:
        paper = Paper(row["id"], row["title"], row["abstract"], tuple(row["categories"]),
                      row["announced"])
        coined, mentions = read_paper(paper)
        assert all(name_shaped(c.name) for c in coined)
        assert all(name_shaped(m) for m in mentions)
