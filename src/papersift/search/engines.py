"""Where the embed stage's chunks are embedded: in this process (local), or by actors of a Ray cluster (ray) for backfills of millions of papers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from papersift.errors import UsageError
from papersift.plugins import EnginePlugin, Plugins
from papersift.settings import Settings
from papersift.stages import no_progress

Chunk = list[tuple[str, str, str]]  # (paper id, text hash, text)

# Chunks queued per actor: while it embeds one, the next is already there (no idle gap
# while the driver receives a result and sends more), and no more than that is in memory.
_QUEUED_PER_ACTOR = 2
# A killed actor is started again and its queued chunks are run again this many times.
_RESTARTS = 3


def local_chunks(settings: Settings, embedder: Any, chunks: Iterator[Chunk]
                 ) -> Iterator[tuple[Chunk, np.ndarray]]:
    """Each chunk embedded here, in turn (the default)."""
    for chunk in chunks:
        yield chunk, embedder.embed([text for _, _, text in chunk])


class _EmbedActor:
    """One Ray actor: the embedder of these settings, loaded once, embedding chunk after chunk."""

    def __init__(self, settings: Settings) -> None:
        from papersift.search.embed import default_embedder

        self.embedder = default_embedder(settings)
        prepare = getattr(self.embedder, "prepare", None)
        if prepare is not None:  # a node of a cluster may have to export the model first
            prepare(no_progress)

    def model_id(self) -> str:
        return self.embedder.model_id

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)


def _start_ray(settings: Settings) -> tuple[Any, bool]:
    """The ray module, connected (to RAY_ADDRESS / ray_address, else a local Ray started
    here); whether this call started it (and must stop it)."""
    try:
        import ray
    except ImportError:
        raise UsageError("the ray engine needs Ray: pip install 'papersift[distributed]'") from None
    if ray.is_initialized():
        return ray, False
    address = settings.ray_address or os.environ.get("RAY_ADDRESS") or None
    ray.init(address=address, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    return ray, True


def _actors(ray: Any, settings: Settings, model_id: str) -> list[Any]:
    """ray_actors actors (0: one per `threads` CPUs of the cluster), each using `threads`."""
    threads = max(1, int(settings.threads))
    count = int(settings.ray_actors) or max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
    remote = ray.remote(num_cpus=threads, max_restarts=_RESTARTS,
                        max_task_retries=_RESTARTS)(_EmbedActor)
    actors = [remote.remote(settings) for _ in range(count)]
    models = set(ray.get([actor.model_id.remote() for actor in actors]))
    if models != {model_id}:
        raise UsageError(f"the Ray workers embed with {sorted(models)}, this process with "
                         f"{model_id}: install the same papersift and model on every node")
    return actors


def ray_chunks(settings: Settings, embedder: Any, chunks: Iterator[Chunk]
               ) -> Iterator[tuple[Chunk, np.ndarray]]:
    """Chunks spread over Ray actors, each result yielded as it comes back (the stage writes
    it: a chunk whose actor died is run again by Ray and written once, by paper id)."""
    ray, started_here = _start_ray(settings)
    actors: list[Any] = []
    try:
        actors = _actors(ray, settings, embedder.model_id)
        queued: dict[Any, tuple[Chunk, int]] = {}
        load = [0] * len(actors)
        pending = iter(chunks)
        exhausted = False
        while True:
            while not exhausted and min(load) < _QUEUED_PER_ACTOR:
                chunk = next(pending, None)
                if chunk is None:
                    exhausted = True
                    break
                which = load.index(min(load))
                queued[actors[which].embed.remote([text for _, _, text in chunk])] = (chunk, which)
                load[which] += 1
            if not queued:
                return
            [done], _ = ray.wait(list(queued), num_returns=1)
            chunk, which = queued.pop(done)
            load[which] -= 1
            yield chunk, ray.get(done)
    finally:
        for actor in actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()


def register(plugins: Plugins) -> None:
    plugins.engines.add(EnginePlugin(
        "local", "in this process (the default)", local_chunks))
    plugins.engines.add(EnginePlugin(
        "ray", "Ray actors: a local Ray started on demand, or the cluster at RAY_ADDRESS "
        "(or ray_address); pip install 'papersift[distributed]'", ray_chunks))
