"""Sentence splitting on hard cases and LaTeX cleanup of arXiv titles and abstracts."""

from __future__ import annotations

import pytest

from papersift.summarize.text import clean_latex, split_sentences


@pytest.mark.parametrize("text, expected", [
    ("Smith et al. show this works. It is good.", ["Smith et al. show this works.", "It is good."]),
    ("We test e.g. BERT and i.e. encoders. Results follow.",
     ["We test e.g. BERT and i.e. encoders.", "Results follow."]),
    ("Accuracy rose by 3.5 points (p < 0.05). Then it fell.",
     ["Accuracy rose by 3.5 points (p < 0.05).", "Then it fell."]),
    ("As shown in Fig. 3 the loss drops. See Eq. 2 and Sec. 4 for details. Done here.",
     ["As shown in Fig. 3 the loss drops.", "See Eq. 2 and Sec. 4 for details.", "Done here."]),
    ("The U.S. Army funded J. Smith. He agreed.", ["The U.S. Army funded J. Smith.", "He agreed."]),
    ("We study catastrophic forgetting (CF). Our results follow.",
     ["We study catastrophic forgetting (CF).", "Our results follow."]),
    ("It compares A vs. B in depth. Next sentence here.",
     ["It compares A vs. B in depth.", "Next sentence here."]),
    ("Is it possible? Yes, it is! We show how.", ["Is it possible?", "Yes, it is!", "We show how."]),
    ("The model is called “Jumpout.” Jumpout samples rates.",
     ["The model is called “Jumpout.”", "Jumpout samples rates."]),
    ("Cited by Ekstrom et al.. A graph is built.", ["Cited by Ekstrom et al..", "A graph is built."]),
    ("We call it MPerS.They design prompts.", ["We call it MPerS.", "They design prompts."]),
    ("accountability To address these challenges, we propose SMA.",
     ["accountability", "To address these challenges, we propose SMA."]),
    ("decisions.To address this we act. This enables capability.(ii) We train it.",
     ["decisions.", "To address this we act.", "This enables capability.", "(ii) We train it."]),
])
def test_splitter_hard_cases(text: str, expected: list[str]) -> None:
    assert split_sentences(clean_latex(text)) == expected


def test_splitter_joins_hard_wrapped_lines_and_latex_periods() -> None:
    raw = ("We propose a method with $\\epsilon = 0.1$ and\nmeasure $O(n^2)$ cost. The second\n"
           "sentence ends here. A third one\nfollows.")
    assert split_sentences(clean_latex(raw)) == [
        "We propose a method with ε = 0.1 and measure O(n²) cost.",
        "The second sentence ends here.",
        "A third one follows.",
    ]


def test_splitter_on_empty_and_unpunctuated_text() -> None:
    assert split_sentences("") == []
    assert split_sentences("no punctuation at all here") == ["no punctuation at all here"]


@pytest.mark.parametrize("raw, expected", [
    ("$\\alpha$-divergence", "α-divergence"),
    ("\\textbf{LoGRA} beats \\emph{all}", "LoGRA beats all"),
    ("as shown \\cite{smith2020,lee2021} before", "as shown before"),
    ("cost $O(n^2)$ and $\\mathcal{O}(\\sqrt{n})$", "cost O(n²) and O(√n)"),
    ("improves by 45\\% on \\texttt{code}", "improves by 45% on code"),
    ("see Fig.~3 and Tab.~2", "see Fig. 3 and Tab. 2"),
    ("$x_{i}$ in $\\mathbb{R}^{d}$", "xᵢ in ℝ^d"),
    ("Schr\\\"odinger and G\\\"{o}del and Erd\\H{o}s", "Schrödinger and Gödel and Erdős"),
    ("$\\frac{1}{2}$ of $10^{-3}$", "1/2 of 10⁻³"),
    ("a $\\leq$ b, $\\sim$10$\\times$ faster", "a ≤ b, ~10× faster"),
    ("\\href{https://x.org}{our code} and \\url{https://y.org}", "our code and https://y.org"),
    ("{\\em old style} font", "old style font"),
    ("range 1--5 and a---b, ``quoted''", "range 1–5 and a—b, “quoted”"),
    ("costs \\$5 and 5\\&6", "costs $5 and 5&6"),
    ("network of \\$n\\$ particles, \\$10 to \\$20", "network of n particles, $10 to $20"),
    ("plain text stays plain.", "plain text stays plain."),
])
def test_clean_latex(raw: str, expected: str) -> None:
    assert clean_latex(raw) == expected


def test_clean_latex_is_idempotent_and_total() -> None:
    raw = "We use $\\beta$-VAE with \\textit{$k$} latents \\cite{x} at 99.5\\% recall."
    once = clean_latex(raw)
    assert clean_latex(once) == once
    for broken in ("$unclosed math", "\\textbf{unclosed", "}{ stray", "\\", "$$", "\\unknowncmd{x}"):
        assert isinstance(clean_latex(broken), str)
    assert "\\" not in clean_latex("\\unknowncmd{x} text")
