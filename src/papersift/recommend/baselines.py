"""Three public recommenders, as their projects rank, for the offline benchmark beside ours.

- arxiv-sanity-lite: tf-idf of title and abstract (1-2 grams, sublinear tf, 20,000
  features, its own stop words and min/max document frequency) and a linear SVM (C=0.01,
  balanced classes), the reader's papers against random earlier papers.
- zotero-arxiv-daily: the sum of a candidate's cosine similarities to each profile paper,
  weighted 1/(1+log10(rank+1)) by recency rank (newest first), normalized.
- Scholar Inbox: logistic regression (C=0.1, balanced classes) on the dense embeddings,
  against the same random papers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from papersift.recommend.features import TOKEN_PATTERN


def sanity_vectorizer() -> TfidfVectorizer:
    """arxiv-sanity-lite's own settings (compute.py)."""
    return TfidfVectorizer(
        strip_accents="unicode", lowercase=True, analyzer="word", stop_words="english",
        token_pattern=TOKEN_PATTERN, ngram_range=(1, 2), max_features=20_000, norm="l2",
        use_idf=True, smooth_idf=True, sublinear_tf=True, max_df=0.1, min_df=5,
        dtype=np.float32)


def _examples(positives: sp.csr_matrix | np.ndarray, negatives: sp.csr_matrix | np.ndarray):  # noqa: ANN202
    labels = np.r_[np.ones(positives.shape[0]), np.zeros(negatives.shape[0])]
    stack = sp.vstack if sp.issparse(positives) else np.vstack
    return stack([positives, negatives]), labels


def arxiv_sanity_lite(profile: sp.csr_matrix, negatives: sp.csr_matrix,
                      candidates: sp.csr_matrix) -> np.ndarray:
    features, labels = _examples(profile, negatives)
    svm = LinearSVC(class_weight="balanced", max_iter=10_000, tol=1e-6, C=0.01)
    return svm.fit(features, labels).decision_function(candidates)


def zotero_arxiv_daily(profile: np.ndarray, profile_dates: Sequence[str | None],
                       candidates: np.ndarray) -> np.ndarray:
    order = sorted(range(len(profile_dates)), key=lambda i: profile_dates[i] or "", reverse=True)
    weights = 1.0 / (1.0 + np.log10(np.arange(len(order)) + 1))
    weights /= weights.sum()
    return (candidates @ profile[order].T * weights).sum(axis=1)


def scholar_inbox(profile: np.ndarray, negatives: np.ndarray, candidates: np.ndarray
                  ) -> np.ndarray:
    features, labels = _examples(profile, negatives)
    model = LogisticRegression(C=0.1, class_weight="balanced", solver="liblinear")
    return model.fit(features, labels).decision_function(candidates)
