"""Label rules hold on real abstracts: categories of the recent corpus as stand-in topics."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from itertools import islice

import numpy as np
import pytest

from papersift.topics.evaluate import label_checks
from papersift.topics.phrases import choose_labels, class_tfidf, doc_terms
from tests.conftest import shared_file


@pytest.mark.slow
def test_labels_of_real_abstracts_follow_the_rules() -> None:
    path = shared_file("arxiv-2025-2026.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in islice(handle, 4000)]
    primary = [(r["categories"] or ["?"])[0] for r in rows]
    top = [c for c, _ in Counter(primary).most_common(6)]
    labels = np.array([top.index(c) if c in top else -1 for c in primary])
    terms = doc_terms([f"{r['title']}. {r['abstract']}" for r in rows])
    phrases = choose_labels(class_tfidf(terms, labels, len(top)), terms.terms,
                            truncated=terms.truncated())
    topics = [{"slug": c, "label": ", ".join(p[:3]), "key_phrases": p, "is_other": False}
              for c, p in zip(top, phrases, strict=True)]
    checks = label_checks(topics)
    assert checks["problems"] == 0, checks["examples"]
    assert all(len(p) == 5 for p in phrases)
    by_category = dict(zip(top, phrases, strict=True))
    if "cs.CV" in by_category:  # images, video, 3D: never the language-model vocabulary
        assert not any("language" in p.lower() for p in by_category["cs.CV"])
