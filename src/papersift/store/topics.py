"""Topics, sections, paper assignments, rebuild history and slug redirects."""

from __future__ import annotations

import sqlite3


class TopicsStore:
    """Mixin of Store (see papersift.store)."""

    conn: sqlite3.Connection
