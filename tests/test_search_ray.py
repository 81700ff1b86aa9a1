"""The ray embedding engine: a local Ray embeds a small store to the same vectors as this process, and a killed worker's chunk is embedded again and written once."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from papersift.engines import run_ray
from papersift.search import Embed
from papersift.search.embed import LocalEmbedder
from papersift.search.engines import embed_job
from papersift.settings import Settings
from papersift.store import add_records, open_store
from tests.test_search_embed import local_embedder, model_root, paper, search_settings  # noqa: F401

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")
pytestmark = pytest.mark.slow

WORDS = ["graph", "neural", "networks", "message", "passing", "molecules", "diffusion", "images", "denoising", "reward", "policy", "agents", "language", "models", "protein", "folding", "speech", "recognition"]


def _papers(count: int) -> list:
    return [paper(f"2508.{i:05d}", f"{WORDS[i % len(WORDS)]} study {i}",
                  " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(10 + i % 40)))
            for i in range(count)]


@pytest.fixture(scope="module")
def local_ray() -> object:
    """A local Ray of two CPUs for this module (started once: it takes seconds)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_engine_gives_the_in_process_vectors(tmp_path: Path, search_settings: Settings,  # noqa: F811
                                                 local_embedder: LocalEmbedder,  # noqa: F811
                                                 local_ray: object) -> None:
    settings = search_settings.replace(threads=1, ray_actors=2)
    records = _papers(600)
    reports, vectors = {}, {}
    for engine in ("local", "ray"):
        with open_store(tmp_path / f"{engine}.db") as store:
            add_records(store, records)
            reports[engine] = Embed(embedder=local_embedder, engine=engine,
                                    update_index=False).run(store, settings)
            vectors[engine] = store.embeddings.embedding_matrix(local_embedder.model_id)
            again = Embed(embedder=local_embedder, engine=engine,
                          update_index=False).run(store, settings)
            assert again.counts["embedded"] == 0  # resumable: nothing is embedded twice
    assert reports["ray"].details["engine"] == "ray" and reports["ray"].counts["embedded"] == 600
    assert vectors["ray"][0] == vectors["local"][0] == [r.id for r in records]
    assert np.allclose(vectors["ray"][1], vectors["local"][1], atol=1e-5)


def _actor_pids() -> list[int]:
    return [p.pid for p in psutil.process_iter(["cmdline"])
            if any("_EmbedActor" in part for part in (p.info["cmdline"] or []))]


def test_a_killed_workers_chunk_is_redone_and_returned_once(
        search_settings: Settings, local_embedder: LocalEmbedder,  # noqa: F811
        local_ray: object) -> None:
    settings = search_settings.replace(threads=1, ray_actors=2)
    texts = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(30)) for i in range(16 * 32)]
    chunks = [[(f"p{i}", "h", texts[i]) for i in range(start, start + 32)]
              for start in range(0, len(texts), 32)]
    results = run_ray(settings, embed_job(local_embedder), iter(chunks))
    seen = [next(results)]
    deadline = time.monotonic() + 60
    while not _actor_pids():  # the actors' processes take their names when they start work
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.kill(_actor_pids()[0], signal.SIGKILL)
    seen += list(results)
    ids = [pid for chunk, _ in seen for pid, _, _ in chunk]
    assert sorted(ids) == sorted(f"p{i}" for i in range(len(texts)))  # each once
    for chunk, vectors in seen:  # the same texts in the same batch (int8 activations are
        # quantized per batch, so a vector depends slightly on its batch's other texts)
        assert np.allclose(vectors, local_embedder.embed([t for _, _, t in chunk]), atol=1e-5)
