"""Topic assignment through the ray engine: a local Ray assigns a small store's new papers exactly as this process does (in one batch or in chunks, with exact neighbours or a shared HNSW graph), and a chunk whose worker is killed while computing it is computed again and written once."""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from papersift.records import PaperRecord
from papersift.settings import Settings, load_settings
from papersift.stages import Progress
from papersift.store import add_records, open_store
from papersift.topics import AssignTopics, BuildTopics
from papersift.topics import cluster as cluster_module
from tests.store_sql import run_sql
from tests.test_topics_build import FIELDS, PARAMS, abstract_for

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.slow

DIM = 384  # the local model's: a chunk's neighbours cost what they cost in use
MODEL = "local:all-MiniLM-L6-v2:int8"
# New papers, assigned in chunks of CHUNK: ten chunks of ~0.2 s each on one thread (long
# enough to kill a worker in the middle of one).
NEW, CHUNK = 10_000, 1024


def _papers(count: int, start: int, seed: int) -> list[tuple[str, str, str, np.ndarray]]:
    """(id, title, abstract, unit vector): papers of the four fields, one in ten of none."""
    centers = np.linalg.qr(np.random.default_rng(7).normal(size=(DIM, DIM)))[0][:len(FIELDS)]
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(start, start + count):
        field = n % (len(FIELDS) + 1)
        title, abstract = abstract_for(list(FIELDS)[field % len(FIELDS)], rng)
        center = centers[field] if field < len(FIELDS) else np.zeros(DIM)
        vector = center + rng.normal(scale=0.9 / np.sqrt(DIM), size=DIM)
        rows.append((f"2606.{n:05d}", title, abstract,
                     (vector / np.linalg.norm(vector)).astype(np.float32)))
    return rows


def _add(store, papers) -> None:  # noqa: ANN001
    add_records(store, [PaperRecord(id=pid, title=title, abstract=abstract, authors=[f"Ada {pid}"],
                                    categories=["cs.LG"], source="file", announced="2026-06-01")
                        for pid, title, abstract, _ in papers])
    store.embeddings.put_embeddings(MODEL, [(pid, "h", vec) for pid, _, _, vec in papers])


@pytest.fixture(scope="module")
def local_ray() -> object:
    """A local Ray of two CPUs for this module (started once: it takes seconds)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Settings, list[str]]:
    """A store whose topics were built on 600 papers, then NEW papers without a topic (copied
    for each run); the settings; the new papers' ids."""
    root = tmp_path_factory.mktemp("topics-ray")
    settings = load_settings(data_dir=str(root / "data"), threads=1, ray_actors=2)
    path = root / "built.db"
    with open_store(path) as store:
        _add(store, _papers(600, 0, seed=1))
        BuildTopics(params=PARAMS).run(store, settings)
        new = _papers(NEW, 600, seed=2)
        _add(store, new)
    return path, settings, [pid for pid, _, _, _ in new]


def _assign(built, tmp_path: Path, name: str, stage: AssignTopics, on_progress=None):  # noqa: ANN001
    path, settings, new_ids = built
    copy = tmp_path / f"{name}.db"
    shutil.copy(path, copy)
    with open_store(copy) as store:
        report = stage.run(store, settings, *([on_progress] if on_progress else []))
        rows = {pid: (tid, sim) for pid, tid, sim in run_sql(
            store, "SELECT paper_id, topic_id, similarity FROM paper_topics")}
        assert AssignTopics(engine="local").run(store, settings).counts["assigned"] == 0
    assert report.counts["assigned"] == len(new_ids)  # each chunk written once
    return report, rows


@pytest.mark.parametrize("graph", [False, True], ids=["exact", "hnsw-graph"])
def test_ray_engine_assigns_as_this_process(built, tmp_path: Path, local_ray: object,  # noqa: ANN001
                                            graph: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if graph:  # this process decides, for every chunk: one graph of the corpus, shared
        monkeypatch.setattr(cluster_module, "_EXACT_PAIRS", 0)
        monkeypatch.setattr(cluster_module, "_GRAPH_ROWS", 0)
    whole = _assign(built, tmp_path, "whole", AssignTopics(engine="local", chunk=16 * CHUNK))[1]
    chunked = _assign(built, tmp_path, "local", AssignTopics(engine="local", chunk=CHUNK))[1]
    report, on_ray = _assign(built, tmp_path, "ray", AssignTopics(engine="ray", chunk=CHUNK))
    assert report.details["engine"] == "ray"
    assert set(whole) >= set(built[2])
    assert 0 < report.counts["to_other"] < len(built[2]) // 2  # both outcomes occur
    assert chunked == whole  # cutting the papers in chunks changes no bit
    assert on_ray == whole


def _actors() -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"])
            if any("_AssignActor" in part for part in (p.info["cmdline"] or []))]


def _running(actors: list[psutil.Process]) -> psutil.Process | None:
    """The actor computing a chunk now (Ray names its process after the method it runs)."""
    for actor in actors:
        try:
            if any("_AssignActor.run" in part for part in actor.cmdline()):
                return actor
        except psutil.NoSuchProcess:
            continue
    return None


def test_a_chunk_whose_worker_is_killed_is_redone_and_written_once(
        built, tmp_path: Path, local_ray: object) -> None:  # noqa: ANN001
    killed: list[int] = []

    def kill_one_at_work(progress: Progress) -> None:
        if killed or not progress.done:  # after the first chunk is written
            return
        actors, deadline = _actors(), time.monotonic() + 30
        while (actor := _running(actors)) is None:  # the next chunks are queued on both
            assert time.monotonic() < deadline
        actor.send_signal(signal.SIGKILL)
        killed.append(actor.pid)

    reference = _assign(built, tmp_path, "local", AssignTopics(engine="local", chunk=CHUNK))[1]
    _, on_ray = _assign(built, tmp_path, "ray", AssignTopics(engine="ray", chunk=CHUNK),
                        kill_one_at_work)
    assert killed  # the kill happened while a chunk was computed ...
    assert on_ray == reference  # ... and every paper still got its topic, once
