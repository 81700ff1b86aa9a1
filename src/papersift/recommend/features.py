"""What the recommender sees of a paper: words (tf-idf of title and abstract), meaning (its embedding) and categories."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

# Words as arxiv-sanity-lite splits them (a letter first), English stop words out.
TOKEN_PATTERN = r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b"


def paper_text(row: Mapping[str, Any]) -> str:
    return f"{row['title']}. {row['abstract']}"


class TextSpace:
    """A tf-idf space of words and 2-3 word phrases, fitted on a corpus of papers.

    Rare terms are what a researcher's papers share (a method's name, a data set's): unlike
    arxiv-sanity-lite's 20,000-term cap, every term in at least two papers is kept, phrases up
    to three words. Measured on the recommendation task (docs/benchmark-log.md, Readers):
    nDCG@10 0.157 against 0.126 with the capped vocabulary, both halves of the readers alike.
    """

    def __init__(self, texts: Sequence[str], min_df: int = 2, max_df: float = 0.1,
                 ngrams: int = 3) -> None:
        # min_df and max_df count documents; on a corpus too small for them keep every term.
        small = len(texts) < 50
        self.vectorizer = TfidfVectorizer(
            strip_accents="unicode", lowercase=True, analyzer="word", stop_words="english",
            token_pattern=TOKEN_PATTERN, ngram_range=(1, ngrams), norm="l2", sublinear_tf=True,
            min_df=1 if small else min_df, max_df=1.0 if small else max_df, dtype=np.float32)
        self.matrix = self.vectorizer.fit_transform(texts).tocsr()
        self.terms = self.vectorizer.get_feature_names_out()
        self._analyzer = self.vectorizer.build_analyzer()

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        if not texts:
            return sp.csr_matrix((0, len(self.terms)), dtype=np.float32)
        return self.vectorizer.transform(texts).tocsr()

    def words(self, text: str) -> list[str]:
        """The single words of a text as this space tokenizes it (stop words dropped)."""
        return [t for t in self._analyzer(text) if " " not in t]


@dataclass
class Papers:
    """Rows of papers with their features, aligned: row i of `words` and `meaning` is rows[i]."""

    rows: list[dict[str, Any]]
    words: sp.csr_matrix
    meaning: np.ndarray  # unit vectors; a paper without an embedding has a zero row
    # Columns of the rows as arrays (and the category numbering), made on first use and
    # sliced by subset(): a feed ranks a subset of the window's papers on every request, the
    # window's columns are made once.
    _columns: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _category_index: dict[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def ids(self) -> list[str]:
        return [r["id"] for r in self.rows]

    def subset(self, keep: Sequence[int]) -> Papers:
        index = np.asarray(keep, dtype=np.int64)
        return Papers([self.rows[i] for i in index], self.words[index], self.meaning[index],
                      {name: column[index] for name, column in self._columns.items()},
                      self._category_index)

    def ints(self, key: str) -> np.ndarray:
        """rows[i][key] (a topic or section id) as an array, -1 where it is None."""
        name = f"ints:{key}"
        if name not in self._columns:
            self._columns[name] = np.array([-1 if r.get(key) is None else int(r[key])
                                            for r in self.rows], dtype=np.int64)
        return self._columns[name]

    def categories(self) -> tuple[sp.csr_matrix, dict[str, int]]:
        """Each paper's arXiv categories as a row of 1/len(categories) over the categories
        numbered (a paper without any has an empty row), and their numbers."""
        if "categories" not in self._columns:
            index: dict[str, int] = {}
            indptr, indices, data = [0], [], []
            for row in self.rows:
                cats = row["categories"]
                indices += [index.setdefault(c, len(index)) for c in cats]
                data += [1.0 / len(cats)] * len(cats)
                indptr.append(len(indices))
            self._category_index = index
            self._columns["categories"] = sp.csr_matrix(
                (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                 np.asarray(indptr, dtype=np.int64)), shape=(len(self.rows), max(1, len(index))))
        assert self._category_index is not None
        return self._columns["categories"], self._category_index


def featurize(rows: list[dict[str, Any]], space: TextSpace,
              vectors: Mapping[str, np.ndarray], dim: int) -> Papers:
    """Rows with their tf-idf and embedding (zeros where a paper has no vector yet)."""
    meaning = np.zeros((len(rows), dim), dtype=np.float32)
    for i, row in enumerate(rows):
        vector = vectors.get(row["id"])
        if vector is not None:
            meaning[i] = vector
    return Papers(rows, space.transform([paper_text(r) for r in rows]), meaning)
