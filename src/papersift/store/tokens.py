"""A word's index tokens, remembered per backend: its tokenizer is fixed, and asking the database costs a statement or more (on SQLite under a lock)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

_TOKENS: dict[tuple[str, str], tuple[str, ...]] = {}
_TOKENS_MAX = 100_000  # words (most words of queries recur); past it the memory starts again
_LOCK = threading.Lock()


def remembered_tokens(backend: str, words: Sequence[str],
                      tokenize: Callable[[list[str]], list[list[str]]]) -> list[list[str]]:
    """Each word's tokens, asking `tokenize` only for the words not seen before."""
    with _LOCK:
        found = {w: _TOKENS.get((backend, w)) for w in words}
    missing = [w for w, tokens in found.items() if tokens is None]
    if missing:
        fresh = tokenize(missing)
        with _LOCK:
            if len(_TOKENS) > _TOKENS_MAX:
                _TOKENS.clear()
            for word, tokens in zip(missing, fresh, strict=True):
                found[word] = _TOKENS[(backend, word)] = tuple(tokens)
    return [list(found[w] or ()) for w in words]
