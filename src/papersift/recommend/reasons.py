"""Why a paper is in a reader's feed, from facts only: what they follow that matched, the liked paper it is closest to, the words that weighed most, the interest it belongs to, the entries it matched."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from papersift.latex import readable
from papersift.recommend.features import Papers
from papersift.recommend.model import ReaderModel, Scores

_FOLLOW_TEXT = {
    "author": "by {label}, whom you follow", "topic": "in {label}, a topic you follow",
    "section": "in {label}, a section you follow", "category": "in {value}, which you follow",
    "search": "matches your saved search “{value}”",
    "thread": "in the {label} thread, which you follow",
}
_ENTRY_TEXT = {"more": "you asked for more: {phrase}", "less": "you asked for less: {phrase}"}
# Below this cosine a liked paper is not "close" enough to name as the reason.
CLOSE_COSINE = 0.35


def name_interests(model: ReaderModel, win: Any) -> dict[int, str]:
    """A name for each interest: the topic most of its liked papers are in, else the words
    its liked papers share most. Interests that get one name are one interest (the model's
    `interest` numbers are merged to match)."""
    names = _names(model, win)
    first: dict[str, int] = {}
    for interest, name in sorted(names.items()):
        keep = first.setdefault(name, interest)
        if keep != interest:
            model.interest[model.interest == interest] = keep
    return {k: v for k, v in names.items() if first[v] == k}


def _names(model: ReaderModel, win: Any) -> dict[int, str]:
    names: dict[int, str] = {}
    for interest in sorted(set(model.interest.tolist())):
        members = np.flatnonzero(model.interest == interest)
        topics = Counter(model.liked.rows[i]["topic_id"] for i in members
                         if model.liked.rows[i]["topic_id"] in win.topics)
        if topics:
            names[interest] = win.topics[topics.most_common(1)[0][0]]["label"]
            continue
        weights = np.asarray(model.liked.words[members].sum(axis=0)).ravel()
        top = [str(model.space.terms[j]) for j in np.argsort(-weights)[:3] if weights[j] > 0]
        names[interest] = ", ".join(top) or readable(model.liked.rows[members[0]]["title"])[:60]
    return names


def item_reasons(i: int, slot: str, candidates: Papers, scores: Scores, model: ReaderModel,
                 interests: dict[int, str], follows: list[dict[str, str]],
                 entries: list[dict[str, Any]], slot_note: str) -> list[dict[str, Any]]:
    """[{kind, text, ...}] for one candidate, strongest fact first."""
    reasons: list[dict[str, Any]] = []
    if slot == "trending":
        reasons.append({"kind": "trending", "text": f"trending: {slot_note}"})
    if slot == "exploring":
        reasons.append({"kind": "exploring", "text": "exploring: further from what you liked "
                                                     "than the rest of your feed"})
    reasons += [{"kind": f"follow:{f['kind']}", "text": _FOLLOW_TEXT[f["kind"]].format(**f)}
                for f in follows]
    reasons += [{"kind": f"entry:{e['kind']}", "text": _ENTRY_TEXT[e["kind"]].format(**e)}
                for e in entries if e["kind"] in _ENTRY_TEXT]
    nearest = int(scores.nearest[i])
    if nearest >= 0 and scores.nearest_cosine[i] >= CLOSE_COSINE:
        liked = model.liked.rows[nearest]
        title = readable(liked["title"])
        reasons.append({"kind": "closest", "text": f"close to a paper you liked: {title}",
                        "paper_id": liked["id"], "title": title,
                        "similarity": round(float(scores.nearest_cosine[i]), 2)})
        interest = int(model.interest[nearest])
        if len(interests) > 1:
            reasons.append({"kind": "interest", "text": f"your interest in {interests[interest]}",
                            "interest": interest})
    matrix = candidates.words
    start, end = matrix.indptr[i], matrix.indptr[i + 1]
    words = model.top_words_of(matrix.indices[start:end], matrix.data[start:end])
    if words and scores.words[i] > 0:
        reasons.append({"kind": "words", "text": "words that weighed most: " + ", ".join(words),
                        "words": words})
    if not reasons:
        reasons.append({"kind": "new", "text": "new in the last days (rate papers or follow "
                                               "topics to rank your feed)"})
    return reasons
