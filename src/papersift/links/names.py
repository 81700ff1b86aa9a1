"""Names of artefacts in a paper's title and abstract: the ones it coins, and the ones it mentions.

A name is one token shaped like a name: all capitals ("SEAL"), capitals inside ("LoGRA",
"SkillsBench"), or letters with digits ("MOSEv2", "Qwen3"), hyphens allowed inside
("CAD-Coder", "T2I-ReasonBench"). Mentions are matched case-sensitively as whole tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A token: letters/digits joined by inner hyphens, dots or plus signs ("Qwen2.5-VL", "LIFT+").
_RE_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|[-.](?=[A-Za-z0-9]))*\+*")
_RE_TITLE_HEAD = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9+.\-]*[A-Za-z0-9+])\s*(?::|：| [-–—] )")
# "we introduce SkillsBench", "a framework called LoGRA", "dubbed X": the name follows within a
# few words of the verb.
_RE_INTRO = re.compile(
    r"\b(?:[Ww]e (?:\w+ )?(?:propose|introduce|present|release|develop|build|construct|curate|"
    r"design|create|contribute|open-source|term)|[Cc]alled|[Nn]amed|[Dd]ubbed|[Tt]ermed|"
    r"[Cc]oined|[Kk]nown as|[Rr]eferred to as|[Tt]his (?:paper|work) (?:proposes|introduces|"
    r"presents)|[Ww]e call (?:it|this|our \w+))\b((?:\s+\S+){1,10})")
_RE_PAREN = re.compile(r"\(([A-Za-z0-9][A-Za-z0-9+.\-]*)\)")
_RE_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*")
_RE_SPACE = re.compile(r"\s+")
# "\textbf{GUIDE}" -> "GUIDE": a command's braced argument kept, the command dropped.
_RE_LATEX_ARG = re.compile(r"\\[a-zA-Z]+\{([^{}]*)\}")
# A capital after the first character, or a capital and a digit: the only tokens that can be
# name-shaped (a fast first pass over the ~200 tokens of an abstract).
_RE_HAS_NAME = re.compile(r".[A-Z]|[A-Z].*\d|\d.*[A-Z]")
# All-capital tokens that are units, roles or generic abbreviations, never a paper's artefact.
GENERIC = frozenset(["AI", "ML", "NLP", "LLM", "LLMS", "LLMs", "VLM", "VLMs", "MLLM", "MLLMs", "LVLM", "LVLMs", "GPU", "GPUs", "CPU", "API", "APIs", "RL", "RAG", "SOTA", "SFT", "CNN", "CNNs", "RNN", "GNN", "GNNs", "ViT", "ViTs", "MLP", "MLPs", "VAE", "GAN", "GANs", "NN", "DNN", "DNNs", "IoT", "AUC", "ROC", "FPS", "USA", "US", "UK", "EU", "PDE", "PDEs", "ODE", "ODEs", "SDE", "KL", "MSE", "RMSE", "MAE", "LoRA", "QA", "VQA", "OCR", "ASR", "TTS", "NER", "POS", "CoT", "ICL", "KV", "GPT", "BERT", "IID", "OOD", "HPC", "FLOPs", "TPU", "SQL", "JSON", "HTML", "PDF", "URL", "ID", "IDs", "II", "III", "IV", "VI", "VII", "VIII", "IX", "XI", "XII", "GitHub", "HuggingFace", "AUROC", "AUPRC", "MRI", "fMRI", "CT", "PET", "EEG", "ECG", "EHR", "EHRs", "GUI", "GUIs", "T2I", "T2V", "I2V", "TTA", "IoU", "mIoU", "mAP", "PSNR", "SSIM", "FID", "LPIPS", "BLEU", "ROUGE", "WER", "CER", "F1", "GPT-4", "GPT-4o", "ChatGPT", "LLaMA", "arXiv", "PyTorch", "XAI", "UAV", "UAVs", "IoT", "DoF", "6DoF", "MCMC", "SGD", "SVM", "SVMs", "RGB", "RGB-D", "LiDAR", "SoTA", "VR", "AR", "XR", "NeurIPS", "ICML", "ICLR", "CVPR"])


def clean(text: str) -> str:
    """Lines joined, "\\textbf{X}" -> "X"; the rest of LaTeX is left in (its commands are
    lowercase words, and full cleaning costs ~1 ms a paper)."""
    text = _RE_LATEX_ARG.sub(r"\1", text or "")
    return _RE_SPACE.sub(" ", text).strip()


def name_shaped(token: str) -> bool:
    """True for tokens that look like a coined name rather than a word or a number."""
    if len(token) < 3 or len(token) > 40 or token in GENERIC or token.rstrip("s") in GENERIC:
        return False
    if token[-1] == "s" and token[:-1].isupper():
        return False  # "LRMs", "UAVs": plurals of a kind of thing, not one artefact
    if "-" in token:
        if token.rpartition("-")[2].islower():
            return False  # "LoGRA-based": a use of LoGRA (mentioned_names keeps the head)
        # "CAD-Coder", "T2I-ReasonBench": one part is a name; "Large-Scale" is two words.
        return any(_part_shaped(part) for part in token.split("-") if len(part) >= 2)
    return _part_shaped(token)


def _part_shaped(token: str) -> bool:
    uppers = sum(c.isupper() for c in token)
    letters = sum(c.isalpha() for c in token)
    if letters < 2 or token in GENERIC:
        return False
    if uppers >= 2:
        return True   # SEAL, LoGRA, SkillsBench
    # One capital: a word ("Mirage") unless digits make it a name ("Qwen3", "Llama4").
    return uppers == 1 and token[0].isupper() and any(c.isdigit() for c in token)


def _initials_match(name: str, before: str) -> bool:
    """True when the words before "(NAME)" spell it: "Diffusion Adaptive Text Embedding (DATE)"."""
    capitals = [c.lower() for c in name if c.isupper()]
    words = _RE_WORD.findall(before)[-(len(capitals) + 4):]
    pieces = [p for w in words for p in w.split("-") if p]
    heads = "".join(p[0].lower() for p in pieces)
    letters = "".join(pieces).lower()
    if len(capitals) < 2:
        return False
    # The capitals appear in order among the heads of the last words, or among their letters
    # starting at a word head ("Multi-path featUre fuSion and rouTing (MUST)").
    it = iter(heads)
    if all(c in it for c in capitals):
        return True
    it2 = iter(letters)
    return bool(heads) and capitals[0] in heads and all(c in it2 for c in capitals)


def _introduced(words: list[str]) -> str | None:
    """The name right after "we introduce" (lowercase words skipped), when it stands as a name:
    "SkillsBench, a benchmark" or "LoGRA (Low-..." but not "a PEFT method" (a modifier)."""
    for i, word in enumerate(words[:7]):
        core = word.strip(",.;:()[]{}\"'“”")
        if core.lower() in _NOT_BEFORE_NAME:
            return None  # "we present results on ScanRefer": the name is not what is presented
        if core.islower() or not core:
            continue
        if not name_shaped(core) or word.startswith(("(", "[")):
            return None
        tail = word[word.find(core) + len(core):]
        following = words[i + 1] if i + 1 < len(words) else ""
        if tail[:1] in {",", ".", ";", ":", ")"} or not following or following[:1] in "([-–—" \
                or following.strip(",.") in _FOLLOW:
            return core
        # "we propose the BRIDGE framework" coins BRIDGE; "a PEFT method" uses PEFT.
        if i and words[i - 1].lower() in {"the", "our"} and following.strip(",.") in _KINDS:
            return core
        return None
    return None


_NOT_BEFORE_NAME = frozenset(["on", "in", "with", "for", "using", "from", "via", "by", "across", "to", "of", "over", "against", "than", "results", "experiments", "evaluations", "improvements", "gains", "extensive", "comprehensive", "analyses", "analysis", "study", "studies", "findings", "baselines"])
_KINDS = frozenset(["framework", "model", "method", "benchmark", "dataset", "system", "approach", "algorithm", "architecture", "pipeline", "agent", "suite", "toolkit", "library", "metric", "score", "loss", "module", "network", "corpus", "platform", "strategy", "paradigm"])
_PARTS = _KINDS | frozenset(["challenge", "track", "leaderboard", "workshop", "test", "set", "split", "task", "tasks", "subset", "benchmarks", "datasets", "models", "results", "evaluation"])
_FOLLOW = frozenset(["which", "that", "to", "for", "as", "and", "with", "on", "in", "is", "are", "by", "via", "from", "where", "whose"])


@dataclass(frozen=True)
class Coined:
    """A name the paper itself defines, and how: title, intro (we introduce X), acronym."""

    name: str
    how: str


def coined_names(title: str, abstract: str) -> list[Coined]:
    """The names a paper defines: its title's head ("LoGRA: ..."), a name right after "we
    introduce/propose ..." or "called/dubbed", and acronyms spelled out before "(NAME)"."""
    found: dict[str, Coined] = {}
    head = _RE_TITLE_HEAD.match(title)
    if head and name_shaped(head.group(1)):
        found[head.group(1)] = Coined(head.group(1), "title")
    text = f"{title}. {abstract}"
    for match in _RE_INTRO.finditer(text):
        name = _introduced(match.group(1).split())
        if name:
            found.setdefault(name, Coined(name, "intro"))
    for match in _RE_PAREN.finditer(text):
        token = match.group(1)
        if name_shaped(token) and _initials_match(token, text[max(0, match.start() - 160):
                                                              match.start()]):
            found.setdefault(token, Coined(token, "acronym"))
    return list(found.values())


def _maybe_name(token: str) -> bool:
    """The cheap test before name_shaped: a capital after the first character, or a capital
    with a digit ("Qwen3")."""
    rest = token[1:]
    if not (rest.islower() or rest.isdigit() or not any(c.isalpha() for c in rest)):
        return True
    return token[0].isupper() and any(c.isdigit() for c in token)


def _before(text: str, start: int) -> str:
    """The token right before position `start` when one space separates them, else ''."""
    if start < 2 or text[start - 1] != " ":
        return ""
    end = start - 1
    begin = end
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in ".+-"):
        begin -= 1
    return text[begin:end].strip(".-")


def _longer_name_follows(text: str, end: int, field: str) -> bool:
    """"EPIC KITCHENS", "ARES OS", "SCOUT Mini": the next token, one space on, continues the
    name (in titles only a name-shaped one: every title word is capitalised)."""
    if text[end:end + 1] != " ":
        return False
    match = _RE_QUICK.match(text, end + 1)
    if not match:
        return text[end + 1:end + 2].isdigit()  # "SAM 2", "WeatherBench 2": another version
    after = match.group(0)
    if after[:1].isdigit():
        # A version ("WeatherBench 2", "ALOHA 2.0") is another artefact; a year is not.
        return not (len(after) == 4 and after.isdigit())
    if any(c.isdigit() for c in after) or after.lower() in _PARTS:
        return False  # "MMBench-GUI L2", "MOSEv2 Challenge": a part of the same artefact
    return name_shaped(after) or after.isupper() and len(after) > 1 or (
        field == "abstract" and after[:1].isupper() and after.lower() not in _LEAD)


def _mostly_capitals(text: str) -> bool:
    words = text.split()
    return len(words) >= 3 and sum(w.isupper() for w in words) * 2 > len(words)


def mentioned_names(title: str, abstract: str) -> set[str]:
    """Name-shaped tokens of title and abstract, case as written; a name glued to a lowercase
    suffix counts ("LoGRA-based" mentions LoGRA); a token right after another name-shaped
    token is part of a longer name ("MS MARCO" is not MARCO), and so is one after a capitalised
    word inside an abstract's sentence ("Synthetic Aperture RADAR")."""
    names: set[str] = set()
    for field, text in (("title", title), ("abstract", abstract)):
        if field == "title" and _mostly_capitals(text):
            continue  # a title in capitals names nothing by its capitals
        for match in _RE_QUICK.finditer(text):
            token = match.group(0)
            if token.islower() or token.isdigit() or not _maybe_name(token):
                continue
            before = _before(text, match.start())
            if before and (name_shaped(before) or (
                    field == "abstract" and before[:1].isupper() and before.lower() not in _LEAD)):
                continue
            if _longer_name_follows(text, match.end(), field):
                continue
            if name_shaped(token):
                names.add(token)
            if "-" in token:
                head, _, tail = token.partition("-")
                if tail.islower() and name_shaped(head):
                    names.add(head)
            if token.endswith("+") and name_shaped(token.rstrip("+")):
                names.add(token.rstrip("+"))  # "BlendedNet++" builds on BlendedNet
    return names


def quick_names(text: str) -> set[str]:
    """Name-shaped tokens of a text without the context rules of mentioned_names (3x faster):
    for counting names over an older corpus."""
    return {t for t in set(_RE_QUICK.findall(text)) if _RE_HAS_NAME.search(t) and name_shaped(t)}


_RE_QUICK = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+\-]*[A-Za-z0-9+]")


# Capitalised words that start a phrase without being part of a name ("On BrowseComp", "Using X").
_LEAD = frozenset(["a", "an", "the", "on", "in", "of", "for", "with", "and", "or", "to", "from", "by", "via", "using", "use", "uses", "at", "as", "is", "are", "we", "our", "this", "that", "these", "those", "both", "its", "their", "than", "into", "over", "under", "like", "unlike", "including", "include", "includes", "such", "versus", "vs", "compared", "compare", "between", "among", "across", "beyond", "within", "without", "through", "toward", "towards"])
