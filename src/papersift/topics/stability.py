"""Mapping a rebuild's clusters onto the previous topics by membership overlap: kept topics,
new ones, splits, merges, and where a retired topic's slug should redirect."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from papersift.records.prepare import slugify

# A new cluster keeps an old topic's identity when at least this share of the old topic's
# papers went to it AND at least this share of its papers that had a topic came from it.
KEEP_SHARE = 0.5
# A part counts in a split or merge when it holds at least this share.
PART_SHARE = 0.25


@dataclass
class ClusterMapping:
    """How new clusters relate to the previous build's topics."""

    kept: dict[int, int] = field(default_factory=dict)          # cluster -> old topic id
    retired: list[dict[str, Any]] = field(default_factory=list)  # {id, redirect_to, reason}
    splits: dict[int, list[int]] = field(default_factory=dict)   # old id -> clusters
    merges: dict[int, list[int]] = field(default_factory=dict)   # cluster -> old ids


def map_clusters(
    paper_ids: Sequence[str],
    labels: Sequence[int],
    old_assignment: Mapping[str, int],
    old_topic_ids: Iterable[int],
) -> ClusterMapping:
    """Match clusters (labels >= 0; -1 is "other") to old non-other topics one-to-one by
    overlap, largest overlaps first. Unmatched old topics are retired and redirect to the
    cluster that took most of their papers ("split" when their papers spread over several
    clusters, "merge" when they went mostly into one that also holds another topic)."""
    old_ids = set(old_topic_ids)
    overlap: Counter[tuple[int, int]] = Counter()
    old_size: Counter[int] = Counter()
    carried: Counter[int] = Counter()  # papers of each cluster that had any old topic
    for pid, label in zip(paper_ids, labels, strict=True):
        old = old_assignment.get(pid)
        if old is None:
            continue
        if label >= 0:
            carried[label] += 1
        if old in old_ids:
            old_size[old] += 1
            if label >= 0:
                overlap[(label, old)] += 1
    result = ClusterMapping()
    matched_old: set[int] = set()
    for (cluster, old), n in sorted(overlap.items(), key=lambda kv: (-kv[1], kv[0])):
        if cluster in result.kept or old in matched_old:
            continue
        if n >= KEEP_SHARE * old_size[old] and n >= KEEP_SHARE * carried[cluster]:
            result.kept[cluster] = old
            matched_old.add(old)
    by_old: dict[int, list[tuple[int, int]]] = defaultdict(list)
    by_cluster: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (cluster, old), n in overlap.items():
        by_old[old].append((n, cluster))
        by_cluster[cluster].append((n, old))
    for old, parts in by_old.items():
        big = sorted(c for n, c in parts if n >= PART_SHARE * old_size[old])
        if len(big) > 1:
            result.splits[old] = big
    for cluster, parts in by_cluster.items():
        big = sorted(o for n, o in parts if n >= PART_SHARE * carried[cluster])
        if len(big) > 1:
            result.merges[cluster] = big
    for old in sorted(old_ids - matched_old):
        parts = sorted(by_old.get(old, []), key=lambda nc: (-nc[0], nc[1]))
        if not parts:
            result.retired.append({"id": old, "redirect_to": None, "reason": "merge"})
            continue
        target = parts[0][1]
        spread = old in result.splits or parts[0][0] < KEEP_SHARE * old_size[old]
        result.retired.append({"id": old, "redirect_to": target,
                               "reason": "split" if spread else "merge"})
    return result


def unique_slug(phrases: Sequence[str], taken: set[str], max_length: int = 60) -> str:
    """A URL slug from the first key phrases, unique against `taken` (which it extends)."""
    words: list[str] = []
    for phrase in phrases[:3]:
        candidate = slugify(" ".join([*words, phrase]))
        if words and len(candidate) > max_length:
            break
        words.append(phrase)
    base = slugify(" ".join(words))[:max_length].strip("-") or "topic"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


def map_sections(
    new_sections: Sequence[Sequence[int]],
    old_sections: Sequence[dict[str, Any]],
    topic_sizes: Mapping[int, int],
) -> dict[int, dict[str, Any]]:
    """Match new sections (lists of topic ids) to old ones ({id, slug, topic_ids}) by the
    papers of the topics they share, so a section keeps its slug when mostly the same."""
    def weight(ids: Iterable[int]) -> int:
        return sum(topic_sizes.get(t, 0) for t in ids)

    pairs = []
    for i, members in enumerate(new_sections):
        for old in old_sections:
            shared = weight(set(members) & set(old["topic_ids"]))
            if shared:
                pairs.append((shared, i, old))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]["id"]))
    matched: dict[int, dict[str, Any]] = {}
    used: set[int] = set()
    for shared, i, old in pairs:
        if i in matched or old["id"] in used:
            continue
        if shared >= KEEP_SHARE * weight(new_sections[i]) and shared >= KEEP_SHARE * weight(
                old["topic_ids"]):
            matched[i] = old
            used.add(old["id"])
    return matched
