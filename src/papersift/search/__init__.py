"""Keyword, semantic and hybrid search over the store, and the embed stage that feeds it."""

from papersift.search.embed import EmbedderError, default_embedder
from papersift.search.keyword import QueryError
from papersift.search.service import SearchHit, SearchResults, search, similar_papers
from papersift.search.stage import Embed

__all__ = [
    "Embed", "EmbedderError", "QueryError", "SearchHit", "SearchResults", "default_embedder",
    "search", "similar_papers",
]
