"""The faithfulness gate: invented numbers, foreign names, first person, hype, LaTeX and lengths."""

from __future__ import annotations

import pytest

from papersift.summarize.gate import build_source, check, numbers_in

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


# --- what mutation testing found untested (issue 20, docs/testing.md)

def test_names_split_at_hyphens_slashes_underscores_and_sentence_ends() -> None:
    blurb = BLURB.replace("They report", "The LoGRA-based runs on GSM8K/1000 problems and "
                          "GSM8K_test report").replace("fine-tuning.", "fine-tuning with LoGRA.")
    assert check(TLDR, blurb, PAPER) == []


def test_names_and_numbers_of_the_title_and_the_authors_count_as_known() -> None:
    paper = {"title": "QuaRot-7: rotations for 4-bit inference",
             "abstract": "Rotations remove outliers before quantization. Accuracy holds.",
             "authors": ["Ravi McQueen", "Lin DeVries"]}
    tldr = "QuaRot-7 rotates weights so 4-bit inference keeps its accuracy."
    blurb = ("McQueen and DeVries present QuaRot-7, which rotates weights and activations to "
             "remove outliers before 4-bit quantization. The rotations keep accuracy close to "
             "that of the original model, the authors report, on every model they tried.")
    assert check(tldr, blurb, paper) == []
    assert check(tldr, blurb.replace("DeVries", "DeWitt"), paper) == [
        "blurb: does not open with the authors ('McQueen and DeVries')",
        "blurb: name not in the abstract: DeWitt"][::-1]


def test_every_authors_name_is_known_not_only_the_openings() -> None:
    paper = {**PAPER, "authors": ["Wei Zhang", "Lin DeVries", "Sam McQueen"]}
    blurb = BLURB.replace("They report", "DeVries and McQueen report")
    assert check(TLDR, blurb, paper) == []
    assert check(TLDR, blurb, PAPER) == ["blurb: name not in the abstract: DeVries, McQueen"]


def test_a_naming_given_is_known_and_is_the_opening() -> None:
    blurb = BLURB.replace("Zhang et al.", "The DeepLoGRA team")
    assert check(TLDR, blurb, PAPER, naming="The DeepLoGRA team") == []
    assert check(TLDR, BLURB, PAPER, naming="The DeepLoGRA team") == [
        "blurb: does not open with the authors ('The DeepLoGRA team')"]
    assert check(TLDR, BLURB.replace("Zhang et al.", "The authors"), PAPER) == []
    # Built without a naming, a blurb may open as it likes.
    assert check(TLDR, "In a new paper, " + BLURB, source=build_source(PAPER)) == []
    with pytest.raises(ValueError, match=r"^check\(\) needs a paper or a source$"):
        check(TLDR, BLURB)


def test_plural_and_singular_of_a_known_name() -> None:
    paper = {**PAPER, "abstract": PAPER["abstract"] + " Unlike LoRAs, it keeps one ViT."}
    assert check(TLDR, BLURB.replace("GSM8K", "GSM8Ks and ViTs, unlike a LoRA,"), paper) == []
    assert check(TLDR, BLURB.replace("GSM8K", "GSM8Kss"), PAPER) == [
        "blurb: name not in the abstract: GSM8Kss"]


def test_first_person_i_is_caught() -> None:
    assert check("I am glad to report LoGRA cuts memory by up to 45.7 percent.", BLURB,
                 PAPER) == ["tldr: first person: I"]
    assert check(TLDR, BLURB.replace("They report", "I have seen that they report"),
                 PAPER) == ["blurb: first person: I"]
    assert check(TLDR, BLURB.replace("They report", "Type I errors aside, they report"),
                 PAPER) == []


def test_the_reasons_list_what_was_invented_rarest_first() -> None:
    numbers = BLURB.replace("2 GPUs", "3 GPUs, 52.3%, 11, 7, 9, 700 and 6000")
    assert check(TLDR, numbers, PAPER) == [
        "blurb: number not in the abstract: 3, 7, 9, 11, 700"]
    names = BLURB.replace("GSM8K", "MATHx, ARCx, HumanEval, MBPP, BBHx and CodeX")
    assert check(TLDR, names, PAPER) == [
        "blurb: name not in the abstract: MATHx, ARCx, HumanEval, MBPP, BBHx"]
    hype = BLURB.replace("They report", "They report stunning and remarkable")
    assert check(TLDR, hype.replace("The authors test", "We test it; our"), PAPER) == [
        "blurb: first person: We, our", "blurb: hype word not in the abstract: remarkable, stunning"]


def test_length_bounds_are_inclusive() -> None:
    thirty = "LoGRA " + "cuts memory " * 14 + "well."
    assert len(thirty.split()) == 30 and check(thirty, BLURB, PAPER) == []
    assert check("LoGRA cuts memory well.", BLURB, PAPER) == []
    assert check("LoGRA cuts memory.", BLURB, PAPER) == ["tldr: 3 words (allowed 4-30)"]
    first, second = BLURB.split(". The authors")
    ninety = first + ". The authors" + second.replace("10^5 steps", "10^5 steps" + " again" * 90)
    ninety = " ".join(ninety.split()[:89]) + " end."
    assert len(ninety.split()) == 90 and check(TLDR, ninety, PAPER) == []
    assert check(TLDR, ninety.replace(" end.", " the end."), PAPER) == [
        "blurb: 91 words (allowed 19-90)"]
    short = {"title": "Tiny", "abstract": " ".join(["word"] * 14) + ".", "authors": ["Ann Lee"]}
    ten = "Lee writes about word after word. The paper says word."
    assert len(ten.split()) == 10 and check("Lee writes about words.", ten, short) == []
    assert check("Lee writes about words.", "Lee writes about word. It says word.", short) == [
        "blurb: 7 words (allowed 10-90)"]


def test_blurb_sentence_bounds_follow_the_abstract() -> None:
    two = BLURB.split(" They report")[0]
    two = two.replace("2 GPUs.", "2 GPUs, and they report memory reductions of up to 45.7% "
                      "while matching the accuracy of full fine-tuning.")
    assert check(TLDR, two, PAPER) == []
    three_sentences = {**PAPER, "abstract": PAPER["abstract"] + " It needs no extra hardware."}
    assert check(TLDR, two, three_sentences) == []
    one_sentence_abstract = {**PAPER, "abstract": "LoGRA cuts memory by 45.7% on GSM8K and "
                             "1000 held-out problems at 10^5 steps with two GPUs and no loss."}
    one = two.replace(". The authors test", ", and the authors test")
    assert check(TLDR, one, one_sentence_abstract) == []
    assert check(TLDR, one, source=build_source(PAPER, "Zhang et al.", abstract_sentences=1)) == []
    assert check(TLDR, one, PAPER) == ["blurb: 1 sentences (allowed 2-3)"]
    assert check(TLDR, "", PAPER) == ["blurb: empty"]


def test_numbers_lose_leading_and_trailing_zeros_only() -> None:
    assert numbers_in("05 and 3.50 and 0.0 and 100") == {"5", "3.5", "0", "100"}
