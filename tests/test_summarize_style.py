"""The house style: its checks (hype, self-reference, dangling openers, the title's name), the
sub-editor's edits, the built-in writer held to both, and `papersift eval style`."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from papersift.summarize import write_builtin
from papersift.summarize.editor import (
    article_for,
    neutralize_hype,
    repair_loose_ends,
    rewrite_self_reference,
)
from papersift.summarize.gate import check
from papersift.summarize.style import (
    DANGLING,
    HYPE,
    SELF_REFERENCE,
    TITLE_NAME,
    check_style,
    dangling_references,
    hype_words,
    names_title,
    self_references,
    title_name,
)
from papersift.summarize.style_eval import evaluate_style
from tests.conftest import shared_file


# ------------------------------------------------------------------- checks
@pytest.mark.parametrize("text, found", [
    ("They propose a novel method.", ["novel"]),
    ("It achieves state-of-the-art performance on ImageNet.", ["achieves state-of-the-art"]),
    ("It outperforms the state of the art by 3%.", ["outperforms the state of the art"]),
    ("Their model sets a new state of the art.", ["sets a new state of the art"]),
    ("The results show remarkable gains and superior accuracy.", ["remarkable", "superior"]),
    ("It outperforms state-of-the-art baselines by 3%.", []),
    ("They study novel view synthesis from sparse views.", []),
    ("Activity in the superior temporal gyrus rises.", []),
    ("Three outstanding questions remain.", []),
])
def test_hype_words_are_praise_not_terms_of_art(text: str, found: list[str]) -> None:
    assert [w.lower() for w in hype_words(text)] == [w.lower() for w in found]


@pytest.mark.parametrize("text, found", [
    ("The aim of this paper is to study X.", ["this paper"]),
    ("Results of the present study show gains.", ["the present study"]),
    ("Herein, they describe a sampler.", ["Herein"]),
    ("They extend this line of work to graphs.", []),
    ("They report what the paper found.", []),
])
def test_self_references(text: str, found: list[str]) -> None:
    assert self_references(text) == found


@pytest.mark.parametrize("blurb, dangling", [
    ("Wang et al. report that the other is to optimize the visual feature structure.", True),
    ("Li et al. report that these fields, combined with the polarizer angle, are retrieved.", True),
    ("Zhuang presents PASS-FC, a framework that addresses these issues through search.", True),
    ("Li et al. measure electric fields near the surface. These fields are retrieved by a "
     "neural network.", False),
    ("Li et al. propose a sampler. It is faster than Gibbs sampling on three models.", False),
    ("Li et al. report that it is hard to sample from such models in high dimension.", True),
    ("Li et al. report that it is hard to sample from energy models in high dimension.", False),
    ("Li et al. propose a sampler. The latter is then tuned on two datasets.", True),
])
def test_dangling_references(blurb: str, dangling: bool) -> None:
    assert bool(dangling_references(blurb)) is dangling, dangling_references(blurb)


@pytest.mark.parametrize("title, abstract, name", [
    ("SILK: Smooth Interpolation for Motion In-Betweening", "", "SILK"),
    ("LoGRA: Low-Rank Gradient Approximation", "", "LoGRA"),
    ("DeepSeek-R1: Incentivizing Reasoning", "", "DeepSeek-R1"),
    ("Beyond Accuracy: What Matters in Evaluation", "", None),
    ("Beyond Self-Reports: Multi-Observer Agents", "", None),
    ("LLM Agents: A Survey", "", None),
    ("Position: Benchmarks Should Be Harder", "", None),
    ("Mamba: Linear-Time Sequence Modeling", "We introduce Mamba, a model.", "Mamba"),
    ("Mamba: Linear-Time Sequence Modeling", "We introduce a new model.", None),
    ("No colon in this title", "", None),
])
def test_title_name(title: str, abstract: str, name: str | None) -> None:
    assert title_name(title, abstract) == name


def test_a_name_counts_in_any_letter_case_but_not_inside_another_word() -> None:
    assert names_title("Xie and Hansen replace layers with the Deformer.", "DEFORMER")
    assert not names_title("They use SILKWORM data.", "SILK")


# ------------------------------------------------------------------- edits
@pytest.mark.parametrize("text, edited", [
    ("Zhang et al. propose a novel and efficient framework that achieves state-of-the-art "
     "performance on three benchmarks.",
     "Zhang et al. propose an efficient framework that achieves the best reported performance "
     "on three benchmarks."),
    ("Experiments demonstrate the superiority of their method, which is superior to baselines.",
     "Experiments demonstrate the advantage of their method, which is better than baselines."),
    ("They achieve a remarkable accuracy of 90% and generalize to novel tasks.",
     "They achieve an accuracy of 90% and generalize to new tasks."),
    ("LLMs have revolutionized NLP with cutting-edge models.",
     "LLMs have changed NLP with recent models."),
    ("They study novel view synthesis in the superior temporal gyrus.",
     "They study novel view synthesis in the superior temporal gyrus."),
])
def test_hype_is_made_plain_and_the_facts_stay(text: str, edited: str) -> None:
    assert neutralize_hype(text) == edited
    assert not hype_words(neutralize_hype(text))


@pytest.mark.parametrize("sentence, subject, singular, edited", [
    ("Alsudais reports that the primary objective of this paper is to investigate X.",
     "Alsudais", True, "Alsudais investigates X."),
    ("Chodura et al. report that this study systematically evaluates flight parameters.",
     "Chodura et al.", False, "Chodura et al. systematically evaluate flight parameters."),
    ("The results of this study show that the method proposed in this paper works.",
     "They", False, "The results show that the method proposed works."),
    ("This study is the first to measure it.", "They", False,
     "The study is the first to measure it."),
])
def test_self_reference_becomes_what_the_authors_do(sentence: str, subject: str, singular: bool,
                                                    edited: str) -> None:
    assert rewrite_self_reference(sentence, subject, singular) == edited


@pytest.mark.parametrize("sentence, edited", [
    ("Hou et al. address this gap by introducing TDBench, a benchmark.",
     "Hou et al. introduce TDBench, a benchmark."),
    ("Xu et al. propose CA-HQP, addressing these limitations by incorporating a prompt.",
     "Xu et al. propose CA-HQP, incorporating a prompt."),
    ("Mandal et al. propose a fusion framework to tackle these issues.",
     "Mandal et al. propose a fusion framework."),
    ("Shashidhar et al. introduce YourBench, a framework that addresses these limitations by "
     "enabling cheap benchmarks.",
     "Shashidhar et al. introduce YourBench, a framework that enables cheap benchmarks."),
])
def test_loose_ends_are_repaired(sentence: str, edited: str) -> None:
    subject = sentence.split(" et al.")[0] + " et al."
    assert repair_loose_ends(sentence, subject, False) == edited


@pytest.mark.parametrize("word, article", [
    ("LLM", "an"), ("GAN", "a"), ("efficient", "an"), ("unified", "a"), ("hour", "an"),
    ("one-shot", "a"), ("F1", "an"), ("user", "a"), ("8-bit", "an"), ("scale", "a"),
])
def test_article_for(word: str, article: str) -> None:
    assert article_for(word) == article


# ------------------------------------------------------------------ writer
def _paper(title: str, abstract: str, authors: list[str] | None = None) -> dict[str, object]:
    return {"id": "2601.00002", "title": title, "abstract": abstract,
            "authors": authors or ["Wei Zhang", "Ana Lopez", "Sam Osei"]}


def test_the_writer_names_the_titles_method_when_the_abstract_does_not() -> None:
    paper = _paper(
        "SEAL: Semantic Aware Image Watermarking",
        "Generative models produce realistic images, which makes their provenance hard to "
        "establish. In this paper, we propose a novel watermarking method that embeds semantic "
        "information about the generated image directly into the watermark. The key pattern is "
        "inferred from the semantic embedding of the image with locality-sensitive hashing. "
        "Experiments show that the watermark survives 12 common attacks with an accuracy of "
        "98.1%, while prior watermarks survive only 7 of them.")
    summary = write_builtin(paper)
    assert summary.blurb.startswith("Zhang et al. propose SEAL, a watermarking method")
    assert check_style(summary.blurb, paper["title"], paper["abstract"]) == []
    assert check(summary.tldr, summary.blurb, paper) == []


def test_the_writer_leaves_out_what_the_blurb_cannot_point_at() -> None:
    paper = _paper(
        "PASS-FC: Progressive and Adaptive Search for Fact Checking",
        "Automated fact-checking struggles with complex real-world claims that need several "
        "pieces of evidence. We present PASS-FC, a novel framework that addresses these issues "
        "through claim augmentation, adaptive question generation, and iterative verification. "
        "PASS-FC enhances atomic claims with temporal and entity context and searches the web "
        "with generated questions. We evaluate PASS-FC on six datasets, where it shows superior "
        "performance, improving accuracy by 4.2 points on average over the strongest baseline.")
    summary = write_builtin(paper)
    findings = check_style(summary.blurb, paper["title"], paper["abstract"])
    assert findings == [], (summary.blurb, findings)
    assert "PASS-FC" in summary.blurb and "4.2" in summary.blurb
    assert check(summary.tldr, summary.blurb, paper) == []


def test_the_writer_says_what_the_authors_do_not_what_the_paper_is() -> None:
    paper = _paper(
        "Arabic Dialect Identification on Social Media",
        "Arabic dialects differ widely across regions. The primary objective of this paper is to "
        "investigate how well pretrained language models tell 18 Arabic dialects apart. This "
        "study builds a corpus of 40,000 labelled posts from 18 countries. The best model reaches "
        "a macro F1 of 0.61, and errors concentrate among neighbouring countries.",
        authors=["Abdulkareem Alsudais"])
    summary = write_builtin(paper)
    assert not self_references(summary.blurb) and not self_references(summary.tldr)
    assert summary.blurb.startswith("Alsudais investigates")
    assert check(summary.tldr, summary.blurb, paper) == []


# --------------------------------------------------------------- eval style
def test_evaluate_style_counts_each_rule_once_per_blurb() -> None:
    records = [
        {"id": "a", "title": "SILK: Smooth Interpolation", "abstract": "",
         "blurb": "Li et al. propose a novel, remarkable method for this paper."},
        {"id": "b", "title": "SILK: Smooth Interpolation", "abstract": "",
         "blurb": "Li et al. propose SILK. It interpolates motion."},
        {"id": "c", "title": "Plain title", "abstract": "",
         "blurb": "Li et al. report that these fields are retrieved."},
    ]
    report = evaluate_style(records, examples=5)
    rules = report["rules"]
    assert report["blurbs"] == 3 and report["titles_with_a_name"] == 2
    assert (rules[HYPE]["blurbs"], rules[SELF_REFERENCE]["blurbs"]) == (1, 1)
    assert (rules[DANGLING]["blurbs"], rules[TITLE_NAME]["blurbs"]) == (1, 1)
    assert rules[TITLE_NAME]["of"] == 2 and rules[TITLE_NAME]["rate"] == 0.5
    assert rules[HYPE]["examples"][0]["evidence"] == "novel; remarkable"


def test_eval_style_command_reads_a_file_and_reports_bad_lines(tmp_path: Path) -> None:
    data = tmp_path / "blurbs.jsonl"
    data.write_text("\n".join([
        json.dumps({"id": "x1", "title": "T", "blurb": "Li et al. propose a novel sampler."}),
        "{not json",
        json.dumps({"id": "x2", "title": "T"}),
        json.dumps({"id": "x3", "title": "T", "blurb": "Li et al. propose a sampler."}),
    ]) + "\n")
    run = subprocess.run(
        [sys.executable, "-m", "papersift.cli.main", "eval", "style", "--data", str(data),
         "--json"], capture_output=True, text=True, env={**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path)},
        timeout=120)
    assert run.returncode == 3, run.stderr  # done, with skipped records
    report = json.loads(run.stdout)
    assert report["blurbs"] == 2 and report["rules"]["hype"]["blurbs"] == 1
    assert [s["where"].rsplit(":", 1)[1] for s in report["skipped"]] == ["2", "3"]
    missing = subprocess.run(
        [sys.executable, "-m", "papersift.cli.main", "eval", "style", "--data",
         str(tmp_path / "nope.jsonl")], capture_output=True, text=True, timeout=120,
        env={**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path)})
    assert missing.returncode == 2 and "no such file" in missing.stderr


@pytest.mark.slow
def test_built_in_blurbs_keep_the_house_style_on_real_abstracts() -> None:
    """The issue's targets, with room for a sample this small: hype and dangling openers in
    at most 1.5% of 1,500 blurbs, no self-reference, the title's name in 98.5% of those whose
    title has one; every blurb still passes the gate."""
    records, failures = [], []
    with gzip.open(shared_file("arxiv-2025-2026.jsonl.gz"), "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if number >= 1500:
                break
            paper = json.loads(line)
            summary = write_builtin(paper)
            if check(summary.tldr, summary.blurb, paper):
                failures.append(paper["id"])
            records.append({"id": paper["id"], "title": paper["title"],
                            "abstract": paper["abstract"], "blurb": summary.blurb})
    rules = evaluate_style(records)["rules"]
    assert failures == []
    assert rules[SELF_REFERENCE]["blurbs"] == 0
    assert rules[HYPE]["rate"] <= 0.015 and rules[DANGLING]["rate"] <= 0.015, rules
    assert rules[TITLE_NAME]["rate"] <= 0.015, rules[TITLE_NAME]
