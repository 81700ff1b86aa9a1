"""Run the exported all-MiniLM-L6-v2 with ONNX Runtime: tokenize, mean-pool, L2-normalize."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# sentence-transformers' max_seq_length for this model: longer texts are cut.
MAX_SEQ_LENGTH = 256
# Characters kept before tokenizing. A word piece spans at most 100 characters (longer words
# are one [UNK]), so 256 tokens never reach past 256 x 101 characters of ordinary text:
# cutting there changes no vector, and a 5 MB abstract no longer costs gigabytes to tokenize.
MAX_TEXT_CHARS = MAX_SEQ_LENGTH * 101


# Inputs up to this many tokens (rows x width) run on one thread: short search queries. Up to
# 80 tokens a second thread saves no time (ONNX Runtime splits little of so small a run; 2-11%
# slower here); from ~85 it cuts the run by a third (88 tokens: 11.2 -> 8.1 ms, 128: 17.9 ->
# 11.4; docs/benchmarks.md, 2026-12-06, towards midnight).
SINGLE_THREAD_TOKENS = 80


def _session(onnx_path: str, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Spinning workers burn a shared core while waiting; on 2 busy cores that costs more
    # than the wake-up latency it saves.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])


def normalize(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class OnnxEncoder:
    """Tokenize, run the ONNX transformer, mean-pool over real tokens and L2-normalize,
    exactly as sentence-transformers does for all-MiniLM-L6-v2."""

    def __init__(self, onnx_path: str, tokenizer_path: str, threads: int = 1,
                 batch_size: int = 64) -> None:
        from tokenizers import Tokenizer

        self.onnx_path, self.threads = onnx_path, max(1, threads)
        self.session = _session(onnx_path, self.threads)
        self._single: Any = None  # the one-thread session for short inputs, made when first needed
        self.tokenizer = Tokenizer.from_file(tokenizer_path)
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self.tokenizer.no_padding()
        self.batch_size = batch_size
        self._lock = threading.Lock()  # held while the sized session runs
        self._making = threading.Lock()  # not the same: a query beside a run may make _single

    def _single_session(self) -> Any:
        if self._single is None:
            with self._making:
                if self._single is None:
                    self._single = (self.session if self.threads == 1
                                    else _session(self.onnx_path, 1))
        return self._single

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([_cut(t) for t in texts])
        # Batches of similar length waste little on padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            out[chunk] = _pooled(self._run(ids, mask), mask)
        return normalize(out)

    def prepared(self, text: str) -> Callable[[], np.ndarray]:
        """`text` tokenized now; the call runs the model and gives what encode([text])[0]
        gives. A search tokenizes before it hands its store work to a helper thread, so that
        the call is the model's run alone, which lets go of the interpreter for the helper."""
        ids = np.asarray([self.tokenizer.encode_batch([_cut(text)])[0].ids], dtype=np.int64)
        mask = np.ones_like(ids)
        return lambda: normalize(_pooled(self._run(ids, mask), mask))[0]

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The model's last hidden state for these token rows."""
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        if ids.size <= SINGLE_THREAD_TOKENS:
            # A short search query: one thread, and runs side by side (a session's run is
            # thread-safe); splitting ~20 tokens over two threads costs ~30% more CPU
            # for no gain in time, and CPU is what concurrent searches share.
            return self._single_session().run(["last_hidden_state"], feed)[0]
        # One run at a time on the sized session: its threads are sized for one. A longer
        # query that finds it busy runs on one thread beside it instead of waiting its turn:
        # two one-thread runs use two cores better than two-thread runs in turn (4 clients at
        # once: mean 22.9 against 37.1 ms).
        if not self._lock.acquire(blocking=len(ids) > 1):
            return self._single_session().run(["last_hidden_state"], feed)[0]
        try:
            return self.session.run(["last_hidden_state"], feed)[0]
        finally:
            self._lock.release()


def _cut(text: str) -> str:
    return text[:MAX_TEXT_CHARS] if text.strip() else " "


def _pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The mean of each row's real tokens (mask 1)."""
    weights = mask[:, :, None].astype(np.float32)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
