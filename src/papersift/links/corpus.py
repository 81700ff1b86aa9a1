"""Papers and vectors for the linker outside the store: a papers file, a vector matrix file, or
an embedder asked only for the papers a decision needs (its vectors kept in a cache folder)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from papersift.errors import UsageError
from papersift.links.linker import Paper, VectorSource, array_source
from papersift.search.embed import Embedder, embedding_text

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def load_papers(path: Path) -> list[Paper]:
    """The papers of a JSON-lines file (arxiv-2025-2026.jsonl.gz layout), first copy of each id."""
    if not path.is_file():
        raise UsageError(f"file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    papers: dict[str, Paper] = {}
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            if row["id"] in papers or not row.get("announced"):
                continue
            categories = row.get("categories") or ()
            if isinstance(categories, str):
                categories = categories.split()
            papers[row["id"]] = Paper(row["id"], row.get("title") or "", row.get("abstract") or "",
                                      tuple(categories), str(row["announced"])[:10])
    return list(papers.values())


def matrix_source(vectors: Path, ids: Path) -> VectorSource:
    """Vectors from a matrix file and its id list (benchmarks/export_vectors.py's layout)."""
    for path in (vectors, ids):
        if not path.is_file():
            raise UsageError(f"file not found: {path}")
    return array_source(json.loads(ids.read_text()), np.load(vectors, mmap_mode="r"))


class EmbeddingCache:
    """A VectorSource that embeds papers on first use and keeps their vectors in a folder."""

    def __init__(self, papers: Sequence[Paper], embedder: Embedder, folder: Path) -> None:
        self.papers = {p.id: p for p in papers}
        self.embedder = embedder
        self.folder = folder / _UNSAFE.sub("_", embedder.model_id)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.rows: dict[str, np.ndarray] = {}
        self._load()
        self.embedded = 0

    def _load(self) -> None:
        for part in sorted(self.folder.glob("part-*.npz")):
            data = np.load(part)
            self.rows.update(zip(data["ids"].tolist(), data["vectors"], strict=True))

    def save(self, ids: list[str]) -> None:
        if ids:
            part = self.folder / f"part-{len(list(self.folder.glob('part-*.npz'))):06d}.npz"
            np.savez(part, ids=np.array(ids), vectors=np.stack([self.rows[i] for i in ids]))

    def __call__(self, ids: Sequence[str]) -> np.ndarray:
        missing = sorted({pid for pid in ids if pid not in self.rows})
        if missing:
            texts = [embedding_text(self.papers[p].title, self.papers[p].abstract) for p in missing]
            self.rows.update(zip(missing, self.embedder.embed(texts), strict=True))
            self.embedded += len(missing)
            self.save(missing)
        return np.stack([self.rows[pid] for pid in ids]) if ids else np.zeros((0, 384), np.float32)
