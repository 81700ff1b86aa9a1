"""Upstream JSON text to Python values: fast and strict for clean text, lenient for the rest, never too deep."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# Paired surrogate escapes decode to one character: what is left of the range is alone.
_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_OPEN = frozenset(b"[{")
DEFAULT_DEPTH = 32


class TooDeep(ValueError):
    """JSON nested deeper than allowed: refused before any parser recurses into it."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested more than {limit} levels deep (limit: max_json_depth)")
        self.limit = limit


def too_deep(raw: bytes, limit: int) -> bool:
    """Whether brackets outside strings nest deeper than `limit`.

    Counting the brackets costs next to nothing, and a text with no more openers than the
    limit cannot nest deeper: only the rare text with many brackets is scanned.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for byte in _NOT_BRACKET.sub(b"", _STRING.sub(b'""', raw)):
        depth += 1 if byte in _OPEN else -1
        if depth > limit:
            return True
    return False


def loads(raw: bytes, max_depth: int = DEFAULT_DEPTH) -> Any:
    """Parse JSON text; TooDeep past `max_depth` levels, else json.JSONDecodeError (a
    ValueError) says in words what is wrong.

    orjson reads clean text. Whatever it refuses goes to the json module, which replaces bad
    UTF-8 and reads NaN. An escaped lone surrogate ("\\ud800") becomes U+FFFD: as it is, no
    store could encode it, and the rest of the record is worth keeping.
    """
    if too_deep(raw, max_depth):
        raise TooDeep(max_depth)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        data = json.loads(raw.decode("utf-8", errors="replace"))
        text = json.dumps(data, ensure_ascii=False)
        if _SURROGATE.search(text):
            return json.loads(_SURROGATE.sub("\ufffd", text))
        return data
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise TooDeep(max_depth) from None
    except ValueError as exc:  # an integer of thousands of digits, and the like
        raise json.JSONDecodeError(str(exc).split(";")[0], "", 0) from None
