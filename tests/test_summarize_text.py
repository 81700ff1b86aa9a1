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


# ----------------------------------------------- the speed work's rewrites find the same
_TRICKY = ["we", "We", "WE", "our", "us", "Us", "me", "novel", "State-of-the-art", "SOTA", " ",
           "\n", ". ", "(", "[", '"', "“", "'", "-", "1", "2,000", "0.5", "et al", "x", "é",
           "\u0130", "\u0131", "\u017f", "\u212a", "K", "s", "i", "and", "of", "the"]


def _strings(seed: int, count: int, longest: int = 10) -> list[str]:
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(_TRICKY) for _ in range(rng.randint(0, longest)))
            for _ in range(count)]


def test_caseless_finds_what_ignorecase_finds() -> None:
    """Searched in the folded text, a pattern matches where its re.IGNORECASE form matches,
    also in texts with the characters whose case rules are wider (İ, ı, ſ, the Kelvin sign)."""
    import re

    from papersift.summarize.text import Caseless, fold

    sources = [r"\b(?:we|our)\b", r"\bstate[- ]of[- ]the[- ]art|\bSOTA\b", r"\b(?:us|me)\b[^.]{0,5}",
               r"(?<!not )significant(?= [a-z])", r"\bkis\b|\bsi\b"]
    for source in sources:
        caseless, exact = Caseless(source, needs=()), re.compile(source, re.I)
        for text in _strings(1, 3000):
            want = [m.span() for m in exact.finditer(text)]
            assert [m.span() for m in caseless.finditer(text, fold(text))] == want, (source, text)
            assert bool(caseless.search(text, fold(text))) == bool(want)
    with pytest.raises(ValueError):
        Caseless(r"\S+")  # an escape lower case would change


def test_last_word_and_dangling_end_as_their_patterns() -> None:
    """The word before a full stop and a cut sentence's dangling end, found without searching
    every position, are what the patterns find."""
    from papersift.summarize import compress, text

    def dangling(sentence: str) -> str:
        return compress._DANGLING.sub("", sentence)

    for value in _strings(2, 5000):
        match = text._RE_LAST_TOKEN.search(value)
        assert text._last_token(value) == (match.group(1) if match else ""), value
        stripped = value.strip().rstrip(",;:–— ")
        expected = dangling(stripped).rstrip(",;:–— ")
        expected = expected + "." if expected and expected[-1] not in ".!?" else expected
        assert compress.finish(value) == expected, value


def test_missing_space_after_a_comma_as_its_pattern() -> None:
    """The space put after , or ; between words ("models,which"), found with str.find, is
    where the pattern puts it: on random strings of the characters that matter and on real
    abstracts with their spaces after commas taken out."""
    import gzip
    import itertools
    import json
    import random
    import re

    from papersift import latex
    from tests.conftest import shared_file

    pattern = re.compile(r"([,;])(?<=[a-z]{2}[,;])(?=[A-Za-z]{2})")
    rng = random.Random(7)
    values = ["".join(rng.choice("ab,;Z é1") for _ in range(rng.randint(0, 12)))
              for _ in range(20_000)]
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt") as handle:
        values += [json.loads(line)["abstract"].replace(", ", ",").replace("; ", ";")
                   for line in itertools.islice(handle, 500)]
    changed = 0
    for value in values:
        expected = pattern.sub(r"\1 ", value)
        assert latex._missing_space(value) == expected, value
        changed += expected != value
    assert changed > 300
