"""Key-phrase labels: class-based TF-IDF over words and 2-3-word phrases, with stopword,
near-duplicate and uniqueness rules."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words: a phrase never starts or ends with one, nor contains one (except "of",
# which makes "mixture of experts" and "chain of thought").
STOPWORDS = frozenset(ENGLISH_STOP_WORDS) | _words(
    "via vs versus etc ie eg i.e e.g also yet thus hence upon within without across among whose "
    "towards toward can could may might would should shall will must does did doing done"
)
# Words of scientific prose that say nothing about what a paper is about. A label phrase
# must hold at least one word outside this list and must not start or end with a verb of it.
GENERIC = _words(
    """paper papers work works study studies approach approaches method methods methodology
    result results propose proposes proposed proposing present presents presented introduce
    introduces introduced introducing show shows showed shown demonstrate demonstrates
    demonstrated achieve achieves achieved achieving novel new based using use used uses
    existing state-of-the-art sota significant significantly various different several
    however furthermore moreover additionally extensive experiments experiment experimental
    performance performances improve improves improved improving improvement improvements
    effective effectively efficient efficiently outperforms outperform outperforming task
    tasks problem problems framework frameworks technique techniques challenge challenges
    challenging key important crucial recent recently large-scale first code available
    github com https http www publicly release released leverage leverages leveraging
    enable enables enabling address addresses addressing provide provides providing
    existing remains remain including include includes particular particularly specific
    specifically well high low better best good strong robust simple general generalization
    comprehensive evaluation evaluate evaluated evaluations analysis analyses benchmark
    benchmarks dataset datasets data model models modeling modelling learning training
    trained train system systems applications application real-world way ways aim aims
    paradigm potential impact insights insight findings finding understanding capabilities
    capability ability abilities limited limitations limitation lack lacks gap gaps end-to-end
    wide widely range variety across baseline baselines compared comparison prior previous
    current extensive numerous multiple single step steps stage stages level levels process
    processes scenarios scenario setting settings conditions condition quality accuracy
    accurate achieve level-wise large small scale scales high-quality fine-grained
    open-source open source number numbers set sets type types form forms time times
    effectiveness efficiency superior competitive consistent consistently substantial
    substantially notably notable demonstrating validate validated validates extensive
    theoretical empirical empirically theoretically term terms case cases example examples
    make makes making made need needs needed require requires required requiring called
    known given often typically usually commonly rely relies relying explore explores
    explored exploring investigate investigates investigated investigating focus focuses
    key-value respectively thereby despite whereas while"""
)
# Words too vague to be a label alone, though they carry meaning inside a phrase
# ("image generation", "object detection", "feature extraction").
WEAK_ALONE = _words(
    """parameter parameters useful effect
    effects feature features module modules content old algorithm algorithms representation
    representations network networks structure structures knowledge inference label labels
    class classes score scores evaluating answer answers detection estimation generation
    text image images information mechanism mechanisms component components strategy
    strategies objective objectives function functions space spaces tool tools metric
    metrics loss losses input inputs output outputs signal signals previously normal concerns
    deep research texts samples sample responses response user users human humans world
    visual textual semantic"""
)
# A label phrase may not start or end with these: they make "propose novel" fragments.
_BAD_EDGE = STOPWORDS | _words(
    """paper papers work propose proposes proposed proposing present presents presented
    introduce introduces introduced introducing show shows showed shown demonstrate
    demonstrates demonstrated achieve achieves achieved achieving novel new based using use
    used uses existing various different several however furthermore moreover additionally
    significant significantly effective effectively efficient efficiently outperforms
    outperform outperforming improve improves improved improving enable enables enabling
    address addresses addressing provide provides providing leverage leverages leveraging
    including include includes particular particularly specifically remains remain extensive
    make makes making made need needs require requires required called known given often
    typically usually commonly rely relies relying explore explores explored exploring
    investigate investigates investigated investigating focus focuses respectively thereby
    despite whereas while key first recent recently crucial important strong simple better
    best good well wide widely compared prior previous current numerous multiple substantial
    substantially notably notable demonstrating validate validated validates consistent
    consistently superior competitive comprehensive available publicly release released
    specific general reveal reveals revealed conduct conducts conducted promising comparable
    future employ employs employing generate generates generated evolving driven specialized
    underlying basic severe correct accurate stable findings results remarkable impressive
    remarkably promising achieves yields yield leads lead surpass surpasses surpassing unlike
    like consists consist consisting increase increases increasing create creates creating
    observe observed observes potentially solely newly predominantly rigorous confirm
    confirms drives guides advancing estimated total highest lower higher positive relative
    inherent capable absence hope surpass emerged emerge emerges emerging"""
)

_LATEX_MATH = re.compile(r"\$[^$]*\$")
_LATEX_CMD = re.compile(r"\\[a-zA-Z]+\*?(\{[^}]*\})?")
_URL = re.compile(r"https?://\S+|www\.\S+")
# Clauses end at punctuation: a phrase never spans a comma or a full stop.


MIN_LOG_LIFT = float(np.log(1.5))
TRUNCATED_SHARE = 0.6
# Words that want a noun after them: a phrase ending in one is a fragment.
NO_END = _words(
    """large neural deep convolutional multimodal multi-modal named generative pre-trained
    pretrained recurrent spiking supervised unsupervised self-supervised semi-supervised
    fine-tuned vision-language visual textual based""")


@dataclass
class DocTerms:
    """Binary document-term matrix over words and 2-3-word phrases, and the term strings."""

    matrix: sparse.csr_matrix  # docs x terms, 1 where the doc contains the term
    terms: list[str]
    df: np.ndarray | None = None  # documents holding each term

    def truncated(self, share: float = TRUNCATED_SHARE) -> np.ndarray:
        """Terms that are mostly the start of one longer term: "large language" (models),
        "reinforcement" (learning). Such fragments make poor labels."""
        df = self.df if self.df is not None else np.asarray(self.matrix.sum(axis=0)).ravel()
        index = {term: i for i, term in enumerate(self.terms)}
        continued = np.zeros(len(self.terms), dtype=np.float64)
        for i, term in enumerate(self.terms):
            head, _, _ = term.rpartition(" ")
            j = index.get(head) if head else None
            if j is not None:
                continued[j] = max(continued[j], df[i] / max(df[j], 1))
        truncated = continued >= share
        # "multimodal large language" ends in the fragment "large language": also a fragment.
        for i, term in enumerate(self.terms):
            words = term.split()
            if len(words) == 3:
                j = index.get(" ".join(words[1:]))
                if j is not None and truncated[j]:
                    truncated[i] = True
        return truncated


def clean(text: str) -> str:
    text = _URL.sub(" ", text)
    text = _LATEX_MATH.sub(" , ", text)
    text = _LATEX_CMD.sub(" ", text)
    return text


def stem(word: str) -> str:
    """A crude stem for near-duplicate tests: plurals, -ing/-ed, British/American spellings."""
    for british, american in (("isation", "ization"), ("ising", "izing"), ("ised", "ized"),
                              ("ise", "ize"), ("yse", "yze"), ("our", "or")):
        if word.endswith(british):
            word = word[: -len(british)] + american
            break
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", "e"),
                         ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith(
                ("ss", "us", "is", "as")):
            word = word[: -len(suffix)] + repl
            break
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiousz":
        word = word[:-1]  # modell(ing) -> model
    return word


def phrase_key(phrase: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in phrase.split() if w != "of")


_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*|[.,;:!?()\[\]{}\"/\x00]|\s-\s|--")
_SEP = "\x00"
_BREAK = "."  # a boundary token the tokenizer makes anyway
# Terms are coded as integers: word ids a, b, c (< _V) -> a + _V*(b+1) + _V^2*(c+1).
_V = 1 << 20
_CHUNK_DOCS = 4000
_BOUNDARY, _OF, _WORDTOKEN = 0, 1, 2


class _Vocab:
    """Word ids with, per id, whether it can be part of a phrase, edge one, or stand alone."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        self.kind: list[int] = []
        self.bad_edge: list[bool] = []
        self.generic: list[bool] = []
        self.weak: list[bool] = []

    def add(self, word: str) -> int:
        index = self.ids.get(word)
        if index is not None:
            return index
        index = len(self.words)
        if index >= _V - 1:
            # A vocabulary this large: further new words are rare ones; treat as boundaries
            # (a boundary that is not the separator, which would start a new document).
            self.ids[word] = self.ids[_BREAK]
            return self.ids[_BREAK]
        self.ids[word] = index
        self.words.append(word)
        if word == "of":
            word_kind = _OF
        elif (len(word) < 2 or word in STOPWORDS or not word[0].isalnum()
              or word.replace("-", "").isdigit() or not any(ch.isalpha() for ch in word)):
            word_kind = _BOUNDARY
        else:
            word_kind = _WORDTOKEN
        self.kind.append(word_kind)
        self.bad_edge.append(word in _BAD_EDGE)
        self.generic.append(word in GENERIC or word == "of")
        self.weak.append(word in WEAK_ALONE)
        return index

    def decode(self, code: int) -> str:
        a, rest = code % _V, code // _V
        b, c = rest % _V - 1, rest // _V - 1
        return " ".join(self.words[i] for i in (a, b, c) if i >= 0)


def doc_phrases(text: str) -> set[str]:
    """The words and 2-3-word phrases of one text that may become label phrases."""
    found = doc_terms([text], min_df=1)
    return set(found.terms)


def _chunk_codes(texts: Sequence[str], vocab: _Vocab, first_doc: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc index, term code) pairs, one per distinct term of each doc of this chunk."""
    # The separator must be the documents' own: one inside a text (a NUL in a title) would
    # split it in two and shift every later document's index.
    corpus = f" {_SEP} ".join(clean(t).lower().replace(_SEP, " ") for t in texts) + f" {_SEP}"
    tokens = _TOKEN.findall(corpus)
    # map() over a dict lookup runs in C; only the chunk's new words go through Python.
    for word in sorted(set(tokens).difference(vocab.ids)):
        vocab.add(word)
    ids = np.fromiter(map(vocab.ids.get, tokens), dtype=np.int64, count=len(tokens))
    sep = vocab.ids[_SEP]
    doc = np.cumsum(ids == sep) - (ids == sep) + first_doc
    kind = np.asarray(vocab.kind, dtype=np.int8)[ids]
    bad = np.asarray(vocab.bad_edge, dtype=bool)[ids]
    gen = np.asarray(vocab.generic, dtype=bool)[ids]
    weak = np.asarray(vocab.weak, dtype=bool)[ids]
    word = kind == _WORDTOKEN
    edge = word & ~bad
    parts_doc, parts_code = [], []
    uni = edge & ~gen & ~weak
    parts_doc.append(doc[uni])
    parts_code.append(ids[uni])
    bi = edge[:-1] & edge[1:] & ~(gen[:-1] & gen[1:])
    idx = np.flatnonzero(bi)
    parts_doc.append(doc[idx])
    parts_code.append(ids[idx] + _V * (ids[idx + 1] + 1))
    middle = word[1:-1] | (kind[1:-1] == _OF)
    tri = edge[:-2] & middle & edge[2:] & ~(gen[:-2] & gen[1:-1] & gen[2:])
    idx = np.flatnonzero(tri)
    parts_doc.append(doc[idx])
    parts_code.append(ids[idx] + _V * (ids[idx + 1] + 1) + _V * _V * (ids[idx + 2] + 1))
    docs = np.concatenate(parts_doc)
    codes = np.concatenate(parts_code)
    order = np.lexsort((codes, docs))
    docs, codes = docs[order], codes[order]
    keep = np.ones(len(codes), dtype=bool)
    keep[1:] = (codes[1:] != codes[:-1]) | (docs[1:] != docs[:-1])
    return docs[keep], codes[keep]


def doc_terms(texts: Sequence[str], min_df: int = 3) -> DocTerms:
    """Build the binary document-term matrix, keeping terms seen in at least min_df docs.

    Vectorised over integer-coded n-grams: the corpus of 98,752 abstracts takes seconds,
    where a per-document Python loop over n-gram strings took minutes.
    """
    vocab = _Vocab()
    vocab.add(_SEP)
    vocab.add(_BREAK)
    all_docs, all_codes = [], []
    for start in range(0, len(texts), _CHUNK_DOCS):
        docs, codes = _chunk_codes(texts[start:start + _CHUNK_DOCS], vocab, start)
        all_docs.append(docs.astype(np.int32))
        all_codes.append(codes)
    # Each (doc, term) pair once: ~200 per abstract, so at a million papers every copy of
    # these arrays is a gigabyte or more. Each goes as soon as the next step has used it.
    docs = np.concatenate(all_docs) if all_docs else np.zeros(0, dtype=np.int32)
    codes = np.concatenate(all_codes) if all_codes else np.zeros(0, dtype=np.int64)
    del all_docs, all_codes
    unique, inverse, df = np.unique(codes, return_inverse=True, return_counts=True)
    del codes
    kept = df >= min_df
    mask = kept[inverse]
    columns = (np.cumsum(kept, dtype=np.int32) - 1)[inverse[mask]]
    del inverse
    # The pairs come sorted by doc, then by term (chunk after chunk, each sorted): they are
    # the matrix's rows as they stand, with no conversion that would sort a copy of them.
    rows = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.bincount(docs[mask], minlength=len(texts)), out=rows[1:])
    del docs, mask
    matrix = sparse.csr_matrix(
        (np.ones(len(columns), dtype=np.float32), columns, rows),
        shape=(len(texts), int(kept.sum())),
    )
    return DocTerms(matrix=matrix, terms=[vocab.decode(int(c)) for c in unique[kept]],
                    df=df[kept])


def class_tfidf(doc_terms: DocTerms, labels: np.ndarray, n_classes: int) -> sparse.csr_matrix:
    """Score of every term for every class: share of the class's docs holding the term,
    weighted by how much more often it occurs there than outside (log lift).

    Returns a sparse classes x terms matrix of the positive scores; classes with label < 0
    are ignored. Only (class, term) pairs that occur can score, so only they are computed: a
    dense array would hold classes x terms cells (400 x millions of phrases at a million
    papers: gigabytes each, and the build ran out of 24 GB).
    """
    valid = labels >= 0
    rows = np.flatnonzero(valid)
    indicator = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (labels[valid], rows)),
        shape=(n_classes, len(labels)),
    )
    counts = (indicator @ doc_terms.matrix).tocoo()  # classes x terms: docs holding each
    c, t, count = counts.row, counts.col, counts.data
    sizes = np.bincount(labels[valid], minlength=n_classes).astype(np.float64)
    total_df = np.asarray(doc_terms.matrix.sum(axis=0)).ravel()
    n_docs = len(labels)
    inside = count / np.maximum(sizes, 1)[c]
    outside = (total_df[t] - count + 1.0) / (n_docs - sizes[c] + 2.0)
    lift = np.log(np.maximum(inside, 1e-12) / outside)
    # A phrase distinguishes a class only if it is clearly more common there than elsewhere.
    keep = (lift > MIN_LOG_LIFT) & (count >= 2)
    return sparse.csr_matrix((inside[keep] * lift[keep], (c[keep], t[keep])),
                             shape=(n_classes, doc_terms.matrix.shape[1]))


def same_word(a: str, b: str) -> bool:
    """Stems of one word: equal, or sharing most of the shorter one ("agent"/"agentic",
    "anomaly"/"anomalous", "diagnosis"/"diagnostic")."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    common = len(os.path.commonprefix([a, b]))
    return common >= 4 and common >= 0.75 * shorter


def near_duplicate(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Two phrases of one label repeat each other when they share a word: "video diffusion"
    and "video generation" say "video" twice, "agents" and "agentic" are one word."""
    return any(same_word(x, y) for x in a for y in b)


class _Owned:
    """Phrase keys already given to a class, indexed so that containment ("diffusion" inside
    "diffusion models") is a set lookup rather than a scan of every owned phrase."""

    def __init__(self) -> None:
        self.words: Counter[str] = Counter()          # single-word keys
        self.in_phrases: Counter[str] = Counter()     # words of multi-word keys
        self.pairs: Counter[frozenset[str]] = Counter()  # 2-word subsets of multi-word keys
        self.two_word: Counter[frozenset[str]] = Counter()

    def _parts(self, key: tuple[str, ...]) -> list[frozenset[str]]:
        words = sorted(set(key))
        return [frozenset((a, b)) for i, a in enumerate(words) for b in words[i + 1:]]

    def add(self, key: tuple[str, ...], sign: int = 1) -> None:
        if len(key) == 1:
            self.words[key[0]] += sign
            return
        for word in set(key):
            self.in_phrases[word] += sign
        for pair in self._parts(key):
            self.pairs[pair] += sign
        if len(set(key)) == 2:
            self.two_word[frozenset(key)] += sign

    def remove(self, key: tuple[str, ...]) -> None:
        self.add(key, -1)

    def overlaps(self, key: tuple[str, ...]) -> bool:
        if len(key) == 1:
            return self.in_phrases[key[0]] > 0
        if any(self.words[w] > 0 for w in key):
            return True
        if len(set(key)) == 2:
            return self.pairs[frozenset(key)] > 0
        return any(self.two_word[p] > 0 for p in self._parts(key))


def _overlaps_elsewhere(taken: _Owned, key: tuple[str, ...], own: list[tuple[str, ...]]) -> bool:
    """Whether key overlaps a phrase of another class (this class's own ones set aside)."""
    for k in own:
        taken.remove(k)
    try:
        return taken.overlaps(key)
    finally:
        for k in own:
            taken.add(k)


def _candidate_pool(scores: np.ndarray | sparse.spmatrix, terms: Sequence[str],
                    candidates: int, phrase_bonus: float) -> list[tuple[float, int, int]]:
    """(boosted score, class, term) of each class's best terms, best first (ties: the term
    that comes first)."""
    bonus = np.array([phrase_bonus if len(t.split()) > 1 else 1.0 for t in terms])
    # Phrases read better than single words: "reward modelling" over "reward".
    scores = sparse.csr_matrix(scores)
    pool: list[tuple[float, int, int]] = []
    for c in range(scores.shape[0]):
        row = scores.getrow(c)
        positive = row.data > 0
        found, boosted = row.indices[positive], row.data[positive] * bonus[row.indices[positive]]
        best = np.lexsort((found, -boosted))[:candidates]
        pool.extend((float(boosted[i]), c, int(found[i])) for i in best)
    pool.sort(key=lambda item: (-item[0], item[1], terms[item[2]]))
    return pool


class _Labels:
    """The phrases chosen so far, per class, and which phrase keys are owned by any class."""

    def __init__(self, n_classes: int) -> None:
        self.chosen: list[list[tuple[str, tuple[str, ...]]]] = [[] for _ in range(n_classes)]
        self.score: dict[tuple[int, tuple[str, ...]], float] = {}
        self.owner: set[tuple[str, ...]] = set()
        self.owner_words: set[frozenset[str]] = set()
        self.taken = _Owned()

    def blocked(self, c: int, key: tuple[str, ...]) -> bool:
        # The same words in another order label another class already ("models of language"),
        # or a phrase inside or around this one does ("diffusion" / "diffusion models").
        return key in self.owner or frozenset(key) in self.owner_words or _overlaps_elsewhere(
            self.taken, key, [k for _, k in self.chosen[c]])

    def own(self, c: int, key: tuple[str, ...], score: float) -> None:
        self.score[(c, key)] = score
        self.owner.add(key)
        self.owner_words.add(frozenset(key))
        self.taken.add(key)

    def disown(self, key: tuple[str, ...]) -> None:
        self.owner.discard(key)
        self.owner_words.discard(frozenset(key))
        self.taken.remove(key)

    def upgrade(self, c: int, clashes: list[int], term: str, key: tuple[str, ...],
                score: float) -> None:
        """"social media" reads better than the "social" chosen before it: upgrade single
        words to the phrase that contains them when the phrase scores at least half as much.
        "social" and "media" both give way to "social media"."""
        old_keys = [self.chosen[c][i][1] for i in clashes]
        if not (len(key) > 1 and all(len(k) == 1 and k[0] in key for k in old_keys) and (
                score >= 0.5 * max(self.score[(c, k)] for k in old_keys))):
            return
        self.chosen[c][clashes[0]] = (term, key)
        for i in reversed(clashes[1:]):
            del self.chosen[c][i]
        for old_key in old_keys:
            self.disown(old_key)
        self.own(c, key, score)


def choose_labels(
    scores: np.ndarray | sparse.spmatrix, terms: Sequence[str], max_phrases: int = 5,
    candidates: int = 40, phrase_bonus: float = 1.5, truncated: np.ndarray | None = None,
) -> list[list[str]]:
    """Up to max_phrases distinguishing phrases per class, no two near-duplicates within a
    class and no phrase (by stem) used by two classes: a phrase goes to the class where it
    scores highest, in one global pass over all (score, class, phrase) candidates.
    truncated marks terms that are mostly the start of a longer phrase ("large language")."""
    labels = _Labels(scores.shape[0])
    for score, c, t in _candidate_pool(scores, terms, candidates, phrase_bonus):
        if len(labels.chosen[c]) >= max_phrases:
            continue
        term = terms[t]
        if truncated is not None and truncated[t]:
            continue
        words = term.split()
        if len(words) > 1 and words[-1] in NO_END:
            continue
        key = phrase_key(term)
        if labels.blocked(c, key):
            continue
        clashes = [i for i, (_, k) in enumerate(labels.chosen[c]) if near_duplicate(key, k)]
        if clashes:
            labels.upgrade(c, clashes, term, key, score)
            continue
        labels.chosen[c].append((term, key))
        labels.own(c, key, score)
    return [[term for term, _ in chosen] for chosen in labels.chosen]


def surface_forms(phrases: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
    """The most common written form of each lowercased phrase in these texts ("LLMs", "GANs")."""
    forms: dict[str, str] = {}
    joined = " \n ".join(clean(t) for t in texts)
    for phrase in phrases:
        pattern = re.compile(
            r"(?<![\w-])" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"(?![\w-])",
            re.IGNORECASE,
        )
        counts = Counter(" ".join(m.group(0).split()) for m in pattern.finditer(joined))
        if not counts:
            forms[phrase] = phrase
            continue
        # Lower case unless a cased form dominates: acronyms ("LLMs", "LoRA") always, title
        # case ("Gaussian Splatting") only when the phrase is never written in lower case,
        # since titles capitalise every word.
        best, best_n = counts.most_common(1)[0]
        lower_n = counts.get(phrase, 0)
        if best != phrase and best_n > 2 * lower_n and (
                not _title_case_only(best) or lower_n == 0):
            forms[phrase] = best
        else:
            forms[phrase] = phrase
    return forms


def _title_case_only(form: str) -> bool:
    """'Reward Modelling' may be a title's capitalisation rather than a name."""
    return all(not w[1:] or w[1:].islower() for w in form.split())
