"""The embed stage's batch function for the engines (papersift.engines): an embedder, loaded once per worker, embedding chunk after chunk."""

from __future__ import annotations

from typing import Any

import numpy as np

from papersift.engines import Job
from papersift.settings import Settings
from papersift.stages import no_progress

Chunk = list[tuple[str, str, str]]  # (paper id, text hash, text)


class _EmbedActor:
    """One worker: the embedder of these settings (or the one given), embedding chunk after chunk."""

    def __init__(self, settings: Settings | None, embedder: Any = None) -> None:
        if embedder is None:
            from papersift.search.embed import default_embedder

            embedder = default_embedder(settings)
            prepare = getattr(embedder, "prepare", None)
            if prepare is not None:  # a node of a cluster may have to export the model first
                prepare(no_progress)
        self.embedder = embedder

    def identity(self) -> str:
        return str(self.embedder.model_id)

    def run(self, texts: list[str]) -> np.ndarray:
        return self.embedder.embed(texts)


def _texts(chunk: Chunk) -> list[str]:
    return [text for _, _, text in chunk]


def embed_job(embedder: Any) -> Job:
    """The embedding of chunks: in this process with `embedder`; on Ray by actors that load
    the embedder of the settings and must embed with the same model."""
    return Job(worker=_EmbedActor, here=_EmbedActor(None, embedder),
               identity=str(embedder.model_id), payload=_texts)
