"""A small store of two fields for readers' tests: papers a month old to like, a week of new ones (each field's, and blends of both)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from papersift.recommend import window as window_cache
from papersift.records import PaperRecord
from papersift.store import Store, add_records

MODEL = "test:model"
FIELDS = {
    "graphs": "graph neural network molecule message passing node embedding chemistry bonds "
              "atoms molecular property prediction",
    "rl": "reinforcement learning reward policy agent value function exploration bandit "
          "markov decision process returns",
}
GENERIC = "a general study of methods results models data experiments approaches tasks"


def _vector(center: np.ndarray, rng: np.random.Generator, noise: float = 0.15) -> np.ndarray:
    v = center + noise * rng.normal(size=center.shape)
    return (v / np.linalg.norm(v)).astype(np.float32)


def _paper(n: int, words: str, day: str, rng: np.random.Generator, author: str) -> PaperRecord:
    picked = rng.choice(words.split(), size=8)
    title = " ".join(picked[:5]).capitalize() + f" study {n}"
    return PaperRecord(id=f"2606.{n:05d}", title=title, abstract=" ".join(picked) + ". "
                       + " ".join(rng.choice(words.split(), size=30)) + ".",
                       authors=[author, "Co Author"], categories=["cs.LG"], source="file",
                       announced=day)


def make_world(store: Store) -> dict[str, list[str]]:
    """Liked-able papers of both fields a month ago, then a week of new ones: each field's
    and blends that mix both (their vectors halfway between the fields')."""
    rng = np.random.default_rng(7)
    centers = {f: rng.normal(size=16) for f in FIELDS}
    centers = {f: c / np.linalg.norm(c) for f, c in centers.items()}
    today = datetime.now(UTC).date()
    old, new = (today - timedelta(days=40)).isoformat(), today.isoformat()
    made: dict[str, list[str]] = {"old-graphs": [], "old-rl": [], "graphs": [], "rl": [],
                                  "blend": []}
    records, vectors, n = [], [], 0
    for kind, day, count in (("old-graphs", old, 6), ("old-rl", old, 6), ("graphs", new, 12),
                             ("rl", new, 12), ("blend", new, 12)):
        for _ in range(count):
            field = kind.removeprefix("old-")
            if field == "blend":
                words, center = f"{FIELDS['graphs']} {FIELDS['rl']} {GENERIC} {GENERIC}", \
                    centers["graphs"] + centers["rl"]
                center = center / np.linalg.norm(center)
            else:
                words, center = FIELDS[field], centers[field]
            author = "Grace Hopper" if kind == "rl" and n % 7 == 0 else f"Author {n}"
            records.append(_paper(n, words, day, rng, author))
            vectors.append((records[-1].id, "h", _vector(center, rng)))
            made[kind].append(records[-1].id)
            n += 1
    add_records(store, records)
    store.embeddings.put_embeddings(MODEL, vectors)
    window_cache.clear()
    return made
