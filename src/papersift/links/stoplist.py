"""Old names: the name-shaped tokens that many papers of an older corpus already used (BERT,
PPO, LSTM, ImageNet), learned once from an arXiv snapshot file and kept in a small text file."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

from papersift.errors import UsageError
from papersift.links.names import clean, mentioned_names

# Names used by at least this many older papers are old: measured on the 2019 corpus, 3 keeps
# the acronyms every field reuses (SEAL, MARS: those are told apart by meaning instead, see
# linker.LinkParams) out only when the old use was common.
MIN_PAPERS = 3


def count_names(snapshot: Path, limit: int | None = None) -> Counter[str]:
    """Papers of a snapshot file (OAI snapshot or papersift JSON lines) using each name."""
    if not snapshot.is_file():
        raise UsageError(f"file not found: {snapshot}")
    counts: Counter[str] = Counter()
    opener = gzip.open if snapshot.suffix == ".gz" else open
    with opener(snapshot, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if limit is not None and number >= limit:
                break
            row = json.loads(line)
            counts.update(mentioned_names(clean(row.get("title") or ""),
                                          clean(row.get("abstract") or "")))
    return counts


def learn_stoplist(snapshot: Path, cache: Path, min_papers: int = MIN_PAPERS) -> frozenset[str]:
    """The old names of a snapshot, counted once and kept in `cache` (one "name count" a
    line); delete the cache to count again."""
    if not cache.is_file():
        counts = count_names(snapshot)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text("".join(f"{name}\t{n}\n" for name, n in counts.most_common() if n >= 2),
                       encoding="utf-8")
        tmp.replace(cache)
    return read_stoplist(cache, min_papers)


def read_stoplist(cache: Path, min_papers: int = MIN_PAPERS) -> frozenset[str]:
    names = []
    for line in cache.read_text(encoding="utf-8").splitlines():
        name, _, count = line.partition("\t")
        if count and int(count) >= min_papers:
            names.append(name)
    return frozenset(names)
