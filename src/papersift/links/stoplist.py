"""Old names: how many papers of an older corpus used each name-shaped token (BERT, PPO, LSTM,
ImageNet), counted once from an arXiv snapshot file and kept in a small text file; the linker's
thresholds (LinkParams.old_min_papers*) decide from how many a name is old."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

from papersift.errors import UsageError
from papersift.links.names import quick_names

_RE_LOWER = re.compile(r"\b[a-z]{3,}\b")


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
            text = f"{row.get('title') or ''} {row.get('abstract') or ''}"
            counts.update(quick_names(text))
            # Lowercase words too: the capitals of a common word ("SECOND") are a risky name.
            counts.update(set(_RE_LOWER.findall(text)))
    return counts


def learn_old_names(snapshot: Path, cache: Path) -> dict[str, int]:
    """How many papers of a snapshot used each name (twice or more), counted once and kept in
    `cache` (one "name<TAB>count" a line); delete the cache to count again."""
    if not cache.is_file():
        counts = count_names(snapshot)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text("".join(f"{name}\t{n}\n" for name, n in counts.most_common() if n >= 2),
                       encoding="utf-8")
        tmp.replace(cache)
    return read_old_names(cache)


def read_old_names(cache: Path) -> dict[str, int]:
    names = {}
    for line in cache.read_text(encoding="utf-8").splitlines():
        name, _, count = line.partition("\t")
        if count:
            names[name] = int(count)
    return names
