"""Author lines for listings: the first three names, then "et al." beyond three."""

from __future__ import annotations

from collections.abc import Sequence


def author_line(names: Sequence[str], total: int | None = None, shown: int = 3) -> str:
    """'Yuda Song, Lili Chen, Fahim Tajwar et al.' — all names when there are three or fewer."""
    names = [n for n in names if n]
    total = max(total or 0, len(names))
    if total <= shown:
        return ", ".join(names[:shown])
    return ", ".join(names[:shown]) + " et al."
