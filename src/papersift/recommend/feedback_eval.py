"""The feedback path, measured: how "more: X", "less: Y" and "exclude: Y" move a reader's top 20.

For a sample of readers, X is the topic with the most candidates among those that hold none
of the reader's profile papers, Y the topic that holds most of them; each entry is written
as the topic's label, as a reader would copy it from the site.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from papersift.recommend.entries import apply_entries
from papersift.recommend.features import Papers
from papersift.recommend.task import Task, Universe

TOP = 20


def _share(order: np.ndarray, candidates: Papers, topic: int) -> float:
    return float(np.mean([candidates.rows[i]["topic_id"] == topic for i in order[:TOP]]))


def _top(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[:TOP]


def _topics_of(world: Universe, reader: dict[str, Any], candidates: Papers
               ) -> tuple[int, int] | None:
    """(X, Y) for a reader, or None when the profile's papers have no topic."""
    profile = Counter(world.papers.rows[world.index[p]]["topic_id"] for p in reader["profile"]
                      if p in world.index)
    profile = Counter({t: n for t, n in profile.items() if t in world.topics})
    if not profile:
        return None
    held = Counter(r["topic_id"] for r in candidates.rows)
    unheld = [t for t in world.topics if t not in profile and held[t] >= TOP]
    if not unheld:
        return None
    return max(unheld, key=lambda t: (held[t], -t)), profile.most_common(1)[0][0]


def feedback_effect(world: Universe, task: Task, candidates: Papers,
                    base: dict[str, np.ndarray], sample: int) -> dict[str, Any]:
    step = max(1, len(task.readers) // max(1, sample))
    measured: list[dict[str, float]] = []
    for reader in task.readers[::step][:sample]:
        pair = _topics_of(world, reader, candidates)
        if pair is None:
            continue
        x, y = pair
        scores = base[reader["reader"]]
        row = {"x_before": _share(_top(scores), candidates, x),
               "y_before": _share(_top(scores), candidates, y)}
        for kind, topic, key in (("more", x, "x_more"), ("less", y, "y_less"),
                                 ("exclude", y, "y_exclude")):
            effect = apply_entries([{"kind": kind, "phrase": world.topics[topic]["label"]}],
                                   candidates, world.topics)
            moved = np.where(effect.excluded, -np.inf, scores + effect.adjustment)
            row[key] = _share(_top(moved), candidates, topic)
        measured.append(row)
    if not measured:
        return {"readers": 0}
    mean = {k: round(float(np.mean([m[k] for m in measured])), 4) for k in measured[0]}
    return {
        "readers": len(measured), **mean,
        "more_points": round(100 * (mean["x_more"] - mean["x_before"]), 1),
        "less_ratio": round(mean["y_less"] / mean["y_before"], 3) if mean["y_before"] else None,
        "more_met": mean["x_more"] - mean["x_before"] >= 0.20,
        "less_met": mean["y_less"] <= 0.5 * mean["y_before"],
        "exclude_met": mean["y_exclude"] == 0.0,
    }
