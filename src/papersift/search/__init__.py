"""Keyword, semantic and hybrid search over the store, and the embed stage that feeds it."""

from papersift.search.embed import EmbedderError, default_embedder
from papersift.search.stage import embed_papers

__all__ = ["EmbedderError", "default_embedder", "embed_papers"]
