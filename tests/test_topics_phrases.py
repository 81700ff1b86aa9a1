"""Key-phrase labels: n-gram extraction, class-based TF-IDF, and the label rules (no stopwords,
no near-duplicates, no phrase shared by two topics), plus section labels and slugs."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from papersift.topics.phrases import (
    STOPWORDS,
    choose_labels,
    class_tfidf,
    doc_phrases,
    doc_terms,
    phrase_key,
    stem,
    surface_forms,
)
from papersift.topics.sections import section_label
from papersift.topics.stability import unique_slug


def test_phrases_skip_stopwords_punctuation_and_latex() -> None:
    found = doc_phrases("We propose a novel method for reward modelling, using $\\alpha$-divergence "
                        "and a mixture of experts. See https://example.org/x for code.")
    assert "reward modelling" in found
    assert "mixture of experts" in found
    assert all(p.split()[0] not in STOPWORDS and p.split()[-1] not in STOPWORDS for p in found)
    assert "modelling using" not in found  # 'using' may not end a phrase
    assert not any("," in p or "alpha" in p or "example" in p for p in found)
    assert "propose" not in found and "novel method" not in found  # generic filler
    assert "modelling mixture" not in found  # phrases do not span clauses


def test_stems_join_spellings_and_plurals() -> None:
    assert phrase_key("language models") == phrase_key("language model")
    assert phrase_key("preference optimisation") == phrase_key("preference optimization")
    assert stem("modelling") == stem("modeling") == stem("model")
    assert phrase_key("graph neural networks") != phrase_key("graph transformers")


def _corpus() -> tuple[list[str], np.ndarray]:
    a = [f"Reward modelling and preference optimisation for language models, study {i}."
         for i in range(10)]
    b = [f"Graph neural networks and message passing for language models, study {i}."
         for i in range(10)]
    return a + b, np.array([0] * 10 + [1] * 10)


def test_class_tfidf_prefers_distinguishing_phrases() -> None:
    texts, labels = _corpus()
    terms = doc_terms(texts, min_df=2)
    scores = class_tfidf(terms, labels, 2)
    # Only pairs that occur are held: a dense classes x terms array ran out of memory at a
    # million papers.
    assert sparse.issparse(scores) and scores.nnz < scores.shape[0] * scores.shape[1]
    index = {t: i for i, t in enumerate(terms.terms)}
    assert scores[0, index["reward modelling"]] > 0
    assert scores[1, index["reward modelling"]] == 0
    # Shared by both classes: distinguishes neither.
    assert scores[0, index["language models"]] == 0 and scores[1, index["language models"]] == 0
    phrases = choose_labels(scores, terms.terms)
    assert any("reward" in p for p in phrases[0]) and any("graph" in p for p in phrases[1])
    assert not {phrase_key(p) for p in phrases[0]} & {phrase_key(p) for p in phrases[1]}


def test_choose_labels_rules() -> None:
    terms = ["language model", "language models", "reward", "reward modelling", "the model",
             "policy", "diffusion", "image synthesis"]
    scores = np.array([
        [9.0, 8.5, 7.0, 6.0, 0.0, 5.0, 0.0, 0.0],
        [8.0, 0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 3.0],
    ])
    labels = choose_labels(scores, terms, max_phrases=5)
    # 'language model(s)' go once, to the class where they score highest; plural is dropped.
    assert labels[0][0] == "language model" and "language models" not in labels[0]
    assert "language model" not in labels[1]
    # 'reward modelling' scores lower than 'reward' but reads better; never both.
    assert ("reward" in labels[0]) != ("reward modelling" in labels[0])
    assert labels[1] == ["image synthesis", "diffusion"]  # phrases get a bonus over words
    assert all(len(label) <= 5 for label in labels)


def test_surface_forms_keep_acronyms_not_title_case() -> None:
    texts = ["We evaluate LLMs on math.", "LLMs fail.", "Reward Modelling for LLMs",
             "reward modelling works", "reward modelling again", "Gaussian Splatting rocks",
             "Gaussian Splatting again"]
    forms = surface_forms(["llms", "reward modelling", "gaussian splatting"], texts)
    assert forms == {"llms": "LLMs", "reward modelling": "reward modelling",
                     "gaussian splatting": "Gaussian Splatting"}


def test_section_label_reads_like_a_news_desk() -> None:
    label = section_label(["reinforcement learning", "reward modelling", "reward models",
                           "preference optimisation", "agents", "planning"])
    assert label == "Reinforcement learning, reward modelling, preference optimisation, agents"
    assert section_label(["LLMs", "agents"]).startswith("LLMs")


def test_unique_slugs() -> None:
    taken: set[str] = {"reward-modelling-preference-optimisation"}
    first = unique_slug(["reward modelling", "preference optimisation"], taken)
    assert first == "reward-modelling-preference-optimisation-2"
    assert first in taken
    long = unique_slug(["a" * 40, "b" * 40, "c"], taken)
    assert len(long) <= 60 and long == "a" * 40


def test_no_phrase_inside_another_topics_phrase() -> None:
    terms = ["diffusion models", "diffusion", "inverse problems", "image synthesis", "sampling"]
    scores = np.array([
        [9.0, 0.0, 0.0, 5.0, 0.0],
        [0.0, 8.0, 7.0, 0.0, 3.0],
    ])
    labels = choose_labels(scores, terms)
    assert labels[0] == ["diffusion models", "image synthesis"]
    assert "diffusion" not in labels[1]  # inside topic 0's "diffusion models"
    assert labels[1] == ["inverse problems", "sampling"]


def test_words_give_way_to_the_phrase_that_holds_them() -> None:
    terms = ["social", "media", "social media", "sentiment"]
    scores = np.array([[9.0, 8.0, 5.0, 4.0]])
    assert choose_labels(scores, terms) == [["social media", "sentiment"]]


def test_a_section_of_one_topic_is_named_by_more_of_its_phrases() -> None:
    from papersift.topics.plan import BuildParams, _sections

    centroids = np.array([[1.0, 0.0, 0.0], [0.99, 0.14, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    phrases = [["reward modelling", "preference optimisation", "policy gradient"],
               ["reinforcement learning", "offline RL", "reward hacking"],
               ["channel", "communication", "wireless", "antennas"]]
    topics = [{"key": c, "id": None} for c in range(3)]
    sections = _sections(centroids, np.array([30, 20, 10]), phrases, topics, None,
                         BuildParams(sections=2))
    labels = sorted(s["label"] for s in sections)
    assert labels == ["Channel, communication, wireless, antennas",
                      "Reward modelling, reinforcement learning, preference optimisation, "
                      "offline RL"]


def test_equal_scores_past_the_candidates_go_to_the_first_terms() -> None:
    terms = ["graph", "protein", "galaxy", "reward", "speech", "quantum", "market", "robot",
             "vision", "climate", "music", "legal"]
    dense = np.full((1, len(terms)), 2.0)
    chosen = choose_labels(dense, terms, max_phrases=5, candidates=5)
    assert chosen == [["galaxy", "graph", "protein", "reward", "speech"]]
    assert choose_labels(sparse.csr_matrix(dense), terms, max_phrases=5, candidates=5) == chosen
