"""Upstream JSON text to Python values: fast and strict for clean text, lenient for the rest."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

# Paired surrogate escapes decode to one character: what is left of the range is alone.
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(raw: bytes) -> Any:
    """Parse JSON text; json.JSONDecodeError (a ValueError) says in words what is wrong.

    orjson reads clean text. Whatever it refuses goes to the json module, which replaces bad
    UTF-8 and reads NaN. An escaped lone surrogate ("\\ud800") becomes U+FFFD: as it is, no
    store could encode it, and the rest of the record is worth keeping.
    """
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    data = json.loads(raw.decode("utf-8", errors="replace"))
    text = json.dumps(data, ensure_ascii=False)
    if _SURROGATE.search(text):
        return json.loads(_SURROGATE.sub("\ufffd", text))
    return data
