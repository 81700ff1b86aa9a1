"""One reader's model: what their liked papers share in words and in meaning, against papers in general.

The score of a candidate adds three standardized parts (weights measured on the
recommendation task, docs/benchmark-log.md, Readers):
- words: a linear SVM on tf-idf, the liked papers against a fixed sample of the store (and
  the disliked papers, which weigh more), as arxiv-sanity-lite ranks, with a richer
  vocabulary (recommend.features);
- meaning: the cosine to the nearest liked paper (the nearest, not the mean: a reader of RL
  theory and of medical imaging has two interests, not their average);
- categories: how much of the reader's likes share the candidate's arXiv categories.
Recent likes weigh more in the word model (half-life HALF_LIFE_DAYS); disliked papers are
its strongest negatives and pull the meaning part down.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date

import numpy as np
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from papersift.recommend.features import Papers, TextSpace
from papersift.search.ann import dot

WEIGHT_WORDS, WEIGHT_MEANING, WEIGHT_CATEGORIES = 1.0, 0.5, 0.2
SVM_C = 0.01
DISLIKE_WEIGHT = 3.0
# Measured on the task: half-life 180 days cost 0.004 nDCG@10, weighting the meaning part by
# recency 0.016 (a researcher's older interests still predict); 365 days on the word model
# alone costs nothing measurable and still lets a reader's tastes move.
HALF_LIFE_DAYS = 365.0
MIN_LIKE_WEIGHT = 0.5
# Liked papers closer than this (cosine) belong to one interest.
INTEREST_SIMILARITY = 0.45


def standardize(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if not values.size:
        return values
    spread = values.std()
    return (values - values.mean()) / spread if spread > 1e-12 else np.zeros_like(values)


def recency_weights(dates: list[str | None], today: str) -> np.ndarray:
    """1 for a like of today, halving every HALF_LIFE_DAYS, never below MIN_LIKE_WEIGHT."""
    end = date.fromisoformat(today[:10])
    ages = np.array([(end - date.fromisoformat(d[:10])).days if d else 0 for d in dates],
                    dtype=np.float64)
    return np.maximum(MIN_LIKE_WEIGHT, 0.5 ** (np.maximum(ages, 0) / HALF_LIFE_DAYS))


@dataclass
class Scores:
    """A model's scores of candidates, and the facts behind each."""

    total: np.ndarray
    words: np.ndarray      # standardized SVM margin (0 without likes)
    meaning: np.ndarray    # standardized cosine to the nearest liked paper
    nearest: np.ndarray    # index of that liked paper (-1 without likes)
    nearest_cosine: np.ndarray
    categories: np.ndarray


class ReaderModel:
    """Fitted on a reader's liked papers (with recency weights) and disliked papers."""

    def __init__(self, liked: Papers, like_weights: np.ndarray, disliked: Papers,
                 background: Papers, space: TextSpace) -> None:
        self.liked, self.disliked, self.space = liked, disliked, space
        self.like_weights = np.asarray(like_weights, dtype=np.float64)
        self.svm: LinearSVC | None = None
        if liked.rows and (background.rows or disliked.rows):
            self.svm = self._fit(background)
        self.interest = interests(liked.meaning)
        counts = Counter(c for row in liked.rows for c in row["categories"])
        total = sum(counts.values())
        self.category_share = {c: n / total for c, n in counts.items()} if total else {}

    def _fit(self, background: Papers) -> LinearSVC | None:
        liked_ids = set(self.liked.ids) | set(self.disliked.ids)
        keep = [i for i, pid in enumerate(background.ids) if pid not in liked_ids]
        if not keep and not self.disliked.rows:
            return None
        negatives = sp.vstack([self.disliked.words, background.words[keep]]).tocsr()
        features = sp.vstack([self.liked.words, negatives]).tocsr()
        labels = np.r_[np.ones(self.liked.words.shape[0]), np.zeros(negatives.shape[0])]
        weights = np.r_[self.like_weights, np.full(self.disliked.words.shape[0], DISLIKE_WEIGHT),
                        np.ones(len(keep))]
        svm = LinearSVC(class_weight="balanced", C=SVM_C, tol=1e-3, max_iter=10_000)
        svm.fit(features, labels, sample_weight=weights)
        svm.coef_ = svm.coef_.astype(np.float32)  # half the memory; the features are float32
        return svm

    def score(self, candidates: Papers) -> Scores:
        n = len(candidates.rows)
        words = np.zeros(n)
        nearest = np.full(n, -1)
        cosine = np.zeros(n)
        meaning = np.zeros(n)
        if self.svm is not None and n:
            # decision_function's arithmetic without its input checks (a few ms a feed).
            margin = candidates.words @ self.svm.coef_.T + self.svm.intercept_
            words = standardize(np.asarray(margin).ravel())
        if self.liked.rows and n:
            # On one BLAS thread (search.ann.dot): a product this small gains nothing from
            # more, and on busy cores their wake-ups cost most of a feed (24 ms against 0.2).
            similarity = dot(candidates.meaning, self.liked.meaning.T)
            nearest = similarity.argmax(axis=1)
            cosine = similarity[np.arange(n), nearest]
            meaning = standardize(cosine)
            if self.disliked.rows:
                meaning -= 0.5 * standardize(dot(candidates.meaning, self.disliked.meaning.T)
                                             .max(axis=1))
        categories = standardize(self._category_affinity(candidates))
        total = WEIGHT_WORDS * words + WEIGHT_MEANING * meaning + WEIGHT_CATEGORIES * categories
        return Scores(total, words, meaning, nearest, cosine, categories)

    def _category_affinity(self, candidates: Papers) -> np.ndarray:
        """The mean share of the reader's likes in each candidate's categories (0 without)."""
        matrix, index = candidates.categories()
        share = np.zeros(matrix.shape[1])
        for category, value in self.category_share.items():
            if category in index:
                share[index[category]] = value
        return matrix @ share

    def top_words(self, candidate_words: sp.csr_matrix, k: int = 3) -> list[str]:
        """The terms that added most to one candidate's word score."""
        row = candidate_words.tocsr()
        return self.top_words_of(row.indices, row.data, k)

    def top_words_of(self, indices: np.ndarray, data: np.ndarray, k: int = 3) -> list[str]:
        """top_words of a row given as its CSR indices and values (slicing a row out of a
        matrix costs more than the rest)."""
        if self.svm is None:
            return []
        weights = self.svm.coef_[0][indices] * data
        order = np.argsort(-weights)[:k]
        return [str(self.space.terms[indices[i]]) for i in order if weights[i] > 0]


def interests(meaning: np.ndarray) -> np.ndarray:
    """An interest number for each liked paper: papers link to every liked paper within
    INTEREST_SIMILARITY of them, an interest is a group so linked (single linkage)."""
    n = meaning.shape[0]
    labels = np.arange(n)
    if n < 2:
        return labels
    close = (meaning @ meaning.T) >= INTEREST_SIMILARITY
    for i in range(n):  # union-find by relabelling: n is a reader's likes, small
        for j in np.flatnonzero(close[i]):
            if labels[j] != labels[i]:
                labels[labels == labels[j]] = labels[i]
    _, compact = np.unique(labels, return_inverse=True)
    return compact
