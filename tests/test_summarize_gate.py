"""The faithfulness gate: invented numbers, foreign names, first person, hype, LaTeX and lengths."""

from __future__ import annotations

import pytest

from papersift.summarize.gate import check, numbers_in

PAPER = {
    "title": "LoGRA: Low-Rank Gradient Approximation for Memory-Efficient Reasoning",
    "abstract": ("We propose LoGRA, a low-rank gradient approximation. On GSM8K and 1,000 held-out "
                 "problems it reduces memory by up to 45.7\\% at $10^{5}$ steps while matching "
                 "the accuracy of full fine-tuning with two GPUs."),
    "authors": ["Wei Zhang", "Ana Lopez", "Sam Osei"],
}
TLDR = "LoGRA cuts fine-tuning memory by up to 45.7 percent without losing accuracy."
BLURB = ("Zhang et al. present LoGRA, a low-rank gradient approximation that lets large models "
         "be fine-tuned for reasoning with less memory. The authors test it on GSM8K and on 1000 "
         "held-out problems, using 2 GPUs. They report memory reductions of up to 45.7% at "
         "10^5 steps while matching the accuracy of full fine-tuning.")


def test_faithful_summary_passes() -> None:
    assert check(TLDR, BLURB, PAPER) == []


def test_catches_an_invented_number() -> None:
    reasons = check(TLDR, BLURB.replace("45.7%", "52.3%"), PAPER)
    assert reasons == ["blurb: number not in the abstract: 52.3"]
    assert check(TLDR.replace("45.7", "47"), BLURB, PAPER) == ["tldr: number not in the abstract: 47"]


def test_catches_a_foreign_method_name() -> None:
    reasons = check(TLDR, BLURB.replace("on GSM8K", "on MATH500"), PAPER)
    assert any("name not in the abstract: MATH500" in r for r in reasons)
    reasons = check(TLDR.replace("LoGRA", "GaLore"), BLURB, PAPER)
    assert reasons == ["tldr: name not in the abstract: GaLore"]


def test_catches_first_person() -> None:
    reasons = check(TLDR, BLURB.replace("The authors test", "We test"), PAPER)
    assert reasons == ["blurb: first person: We"]
    reasons = check("In our tests LoGRA cuts memory by up to 45.7 percent.", BLURB, PAPER)
    assert reasons == ["tldr: first person: our"]
    quoted = BLURB.replace("They report", "Their motto, “we fit”, holds; they report")
    assert check(TLDR, quoted, PAPER) == []


def test_catches_hype_latex_length_and_opening() -> None:
    assert check(TLDR.replace("cuts", "dramatically cuts"), BLURB, PAPER) == [
        "tldr: hype word not in the abstract: dramatically"]
    assert check(TLDR, BLURB.replace("45.7%", "$45.7\\%$"), PAPER) == [
        "blurb: LaTeX left in the text"]
    long_tldr = "LoGRA " + "works well and " * 10 + "saves memory."
    assert any("tldr: 33 words" in r for r in check(long_tldr, BLURB, PAPER))
    assert any(r.startswith("blurb: 13 words (allowed 19-90)") for r in check(TLDR, BLURB[:80] + ".", PAPER))
    assert check(TLDR, "In a new paper, " + BLURB, PAPER) == [
        "blurb: does not open with the authors ('Zhang et al.')"]
    assert check("", BLURB, PAPER) == ["tldr: empty"]


def test_number_normalisation() -> None:
    assert numbers_in("1,000 and 1000 and 45.70% and 10⁵ and v2.1") == {"1000", "45.7", "10", "5", "2.1"}
    assert numbers_in("three models") == set()


# --- the length and shape rules, each on its own (issue 20: planted bugs that survived)

def test_a_tldr_of_two_sentences_fails() -> None:
    two = "LoGRA cuts fine-tuning memory. It keeps the accuracy of full fine-tuning."
    assert check(two, BLURB, PAPER) == ["tldr: 2 sentences (allowed 1)"]
    assert check(two.replace(". It", " and"), BLURB, PAPER) == []


@pytest.mark.parametrize("latex", ["\\cite{lora}", "\\emph{low-rank}", "\\(x\\)", "\\[x\\]",
                                   "$k$"])
def test_latex_commands_and_math_are_flagged(latex: str) -> None:
    blurb = BLURB.replace("GSM8K", f"GSM8K {latex}")
    assert check(TLDR, blurb, PAPER) == ["blurb: LaTeX left in the text"]
    tldr = TLDR.replace("accuracy", f"accuracy {latex}")
    assert check(tldr, BLURB, PAPER) == ["tldr: LaTeX left in the text"]


def test_a_blurb_needs_two_or_three_sentences() -> None:
    sentences = ["Zhang et al. present LoGRA, a low-rank gradient approximation for reasoning.",
                 "It lets large models be fine-tuned with less memory than before.",
                 "The authors test it on GSM8K and on 1000 held-out problems.",
                 "They use 2 GPUs for every run in the study.",
                 "Memory falls by up to 45.7% while accuracy matches full fine-tuning."]
    five = " ".join(sentences)
    assert check(TLDR, five, PAPER) == ["blurb: 5 sentences (allowed 2-3)"]
    four = " ".join(sentences[:4])
    assert check(TLDR, four, PAPER) == ["blurb: 4 sentences (allowed 2-3)"]
    three = " ".join(sentences[:3])
    assert check(TLDR, three, PAPER) == []
    one = " ".join(sentences[:3]).replace(". It", ", which").replace(". The authors", "; they")
    assert check(TLDR, one, PAPER) == ["blurb: 1 sentences (allowed 2-3)"]
