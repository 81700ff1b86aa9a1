"""Topics stage: stable, labelled fine topics grouped into sections, with trends and optional LLM names."""

from __future__ import annotations

from papersift.topics.plan import STAGE_VERSION, BuildParams
from papersift.topics.stage import AssignTopics, BuildTopics, Topics, TopicsError
from papersift.topics.trends import trending, weekly_series

__all__ = [
    "STAGE_VERSION", "AssignTopics", "BuildParams", "BuildTopics", "Topics", "TopicsError",
    "trending", "weekly_series",
]
