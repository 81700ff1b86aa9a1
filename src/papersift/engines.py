"""Where a stage's batches are computed: in this process (local), or by actors of a Ray cluster (ray), for backfills of millions of papers."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from papersift.errors import UsageError
from papersift.plugins import EnginePlugin, Plugins
from papersift.settings import Settings

# Chunks queued per actor: while it computes one, the next is already there (no idle gap
# while the driver receives a result and sends more), and no more than that is in memory.
_QUEUED_PER_ACTOR = 2
# A killed actor is started again and its queued chunks are run again this many times.
_RESTARTS = 3
_END = object()


def _whole(chunk: Any) -> Any:
    return chunk


@dataclass(frozen=True)
class Job:
    """One batch function over chunks, as an engine runs it.

    `worker(settings, *shared)` is built once per Ray actor (or once in this process) and
    `worker.run(payload(chunk))` computes one chunk's result. `shared` holds the large
    read-only inputs (a corpus matrix, centroids): Ray puts each in its object store once and
    every actor reads it from there. `here` is an already built worker the local engine uses
    instead (the stage's own embedder); `identity`, when set, is what every actor's
    identity() must return (the model it embeds with), checked before any chunk is sent.
    """

    worker: type
    shared: tuple[Any, ...] = ()
    here: Any = None
    identity: str | None = None
    payload: Callable[[Any], Any] = _whole


def run_local(settings: Settings, job: Job, chunks: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    """Each chunk computed here, in turn (the default)."""
    worker = job.here if job.here is not None else job.worker(settings, *job.shared)
    for chunk in chunks:
        yield chunk, worker.run(job.payload(chunk))


def start_ray(settings: Settings) -> tuple[Any, bool]:
    """The ray module, connected (to ray_address / RAY_ADDRESS, else a local Ray started
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


def _actor_class(worker: type) -> type:
    """The Ray actor of a worker class, named as it (its processes are named after it).

    It builds the worker on its first call, from the references to the shared inputs that
    come with every call (nested in a list: Ray hands them over unread), and keeps it. As
    constructor arguments they would make Ray log an error for every actor (it could not be
    restarted once they are gone: they are not, the driver holds them for the run); this
    way an actor that was restarted builds its worker again on its next chunk.
    """

    class Actor:
        def __init__(self, settings: Settings) -> None:
            self.settings, self.worker = settings, None

        def built(self, shared: list[Any]) -> Any:
            if self.worker is None:
                import ray

                self.worker = worker(self.settings, *ray.get(shared))
            return self.worker

        def identity(self, shared: list[Any]) -> str:
            return str(self.built(shared).identity())

        def run(self, shared: list[Any], payload: Any) -> Any:
            return self.built(shared).run(payload)

    Actor.__name__ = Actor.__qualname__ = worker.__name__
    Actor.__module__ = worker.__module__
    return Actor


def start_actors(ray: Any, settings: Settings, job: Job) -> tuple[list[Any], list[Any]]:
    """ray_actors actors of the job (0: one per `threads` CPUs of the cluster), each using
    `threads`, and the object-store references of the shared inputs (put once, held for the
    run: each call of an actor carries them)."""
    threads = max(1, int(settings.threads))
    count = int(settings.ray_actors) or max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
    shared = [ray.put(value) for value in job.shared]
    remote = ray.remote(num_cpus=threads, max_restarts=_RESTARTS,
                        max_task_retries=_RESTARTS)(_actor_class(job.worker))
    actors = [remote.remote(settings) for _ in range(count)]
    if job.identity is not None:
        found = set(ray.get([actor.identity.remote(shared) for actor in actors]))
        if found != {job.identity}:
            for actor in actors:
                ray.kill(actor)
            raise UsageError(f"the Ray workers compute with {sorted(found)}, this process with "
                             f"{job.identity}: install the same papersift and model on every node")
    return actors, shared


def run_ray(settings: Settings, job: Job, chunks: Iterator[Any]) -> Iterator[tuple[Any, Any]]:
    """Chunks spread over Ray actors, each result yielded as it comes back (the stage writes
    it: a chunk whose actor died is run again by Ray and written once, by paper id)."""
    ray, started_here = start_ray(settings)
    actors: list[Any] = []
    try:
        actors, shared = start_actors(ray, settings, job)
        queued: dict[Any, tuple[Any, int]] = {}
        load = [0] * len(actors)
        pending, exhausted = iter(chunks), False
        while True:
            while not exhausted and min(load) < _QUEUED_PER_ACTOR:
                chunk = next(pending, _END)
                if chunk is _END:
                    exhausted = True
                    break
                which = load.index(min(load))
                queued[actors[which].run.remote(shared, job.payload(chunk))] = (chunk, which)
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
        "local", "in this process (the default)", run_local))
    plugins.engines.add(EnginePlugin(
        "ray", "Ray actors: a local Ray started on demand, or the cluster at RAY_ADDRESS "
        "(or ray_address); pip install 'papersift[distributed]'", run_ray))
