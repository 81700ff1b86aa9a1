"""Write a store's embeddings as the matrix and id list the benchmarks read (recent-embeddings.npy, recent-ids.json).

The benchmarks that need the real all-MiniLM vectors of the 98,752 recent papers (bench_million,
bench_topics, bench_writers, bench_postgres_ann, bench_ray_topics) read them from two files
instead of embedding the papers again (about 31 minutes on two cores). Make them once:

  papersift --data-dir /work/cache/recent ingest file:../shared/data/arxiv-2025-2026.jsonl.gz
  papersift --data-dir /work/cache/recent embed
  python benchmarks/export_vectors.py --data-dir /work/cache/recent --out /work/cache

Row i of the matrix (float32, unit length) is the vector of the i-th id; duplicates are left
out, as every reader of the store leaves them out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from papersift.search.embed import default_embedder
from papersift.settings import load_settings
from papersift.store import open_store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True, help="folder for the two files")
    parser.add_argument("--name", default="recent", help="file prefix (default: recent)")
    args = parser.parse_args()
    settings = load_settings(data_dir=str(args.data_dir))
    model = default_embedder(settings).model_id
    with open_store(settings, readonly=True) as store:
        ids, matrix = store.embeddings.embedding_matrix(model)
    if not ids:
        raise SystemExit(f"no {model} embeddings in {args.data_dir}: run `papersift embed` first")
    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / f"{args.name}-embeddings.npy", matrix)
    (args.out / f"{args.name}-ids.json").write_text(json.dumps(ids))
    print(f"{len(ids):,} vectors of {model} -> {args.out}/{args.name}-embeddings.npy")


if __name__ == "__main__":
    main()
