"""Sections: fine topics grouped by their centroids into broader sections, labelled the way
a news desk lists its beats ("Reinforcement learning, reward modelling, preference optimisation")."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.cluster import AgglomerativeClustering

from papersift.topics.phrases import phrase_key


def choose_sections(n_topics: int) -> int:
    """About one section per eight to twelve topics, between 2 and 24."""
    return int(min(24, max(2, round(np.sqrt(n_topics) * 1.1)))) if n_topics > 2 else 1


def group_sections(centroids: np.ndarray, n_sections: int) -> list[list[int]]:
    """Topic indices per section (Ward on unit centroids), each list largest-first later."""
    n = len(centroids)
    if n == 0:
        return []
    if n_sections <= 1 or n <= 2:
        return [list(range(n))]
    labels = AgglomerativeClustering(n_clusters=min(n_sections, n), linkage="ward").fit_predict(
        centroids)
    groups: dict[int, list[int]] = {}
    for index, label in enumerate(labels):
        groups.setdefault(int(label), []).append(index)
    return list(groups.values())


def section_label(lead_phrases: Sequence[str], max_parts: int = 4) -> str:
    """'Reinforcement learning, reward modelling, preference optimisation': the lead phrases
    of a section's largest topics, near-duplicates dropped, first letter capitalised."""
    parts: list[str] = []
    keys: list[set[str]] = []
    for phrase in lead_phrases:
        key = set(phrase_key(phrase))
        if not phrase or any(key <= k or k <= key for k in keys):
            continue
        parts.append(phrase)
        keys.append(key)
        if len(parts) == max_parts:
            break
    if not parts:
        return "Miscellaneous"
    first = parts[0]
    parts[0] = first[:1].upper() + first[1:] if not first[:2].isupper() else first
    return ", ".join(parts)
