"""Topics stage: stable, labelled fine topics grouped into sections, with trends and optional LLM names."""

from __future__ import annotations

from papersift.topics.stage import (
    STAGE_VERSION,
    BuildParams,
    TopicsError,
    assign_topics,
    build_topics,
    model_id,
)
from papersift.topics.trends import trending, weekly_series

__all__ = [
    "STAGE_VERSION", "BuildParams", "TopicsError", "assign_topics", "build_topics", "model_id",
    "trending", "weekly_series",
]
