"""Full-text (FTS5) queries for keyword search."""

from __future__ import annotations

import sqlite3


class SearchStore:
    """Mixin of Store (see papersift.store)."""

    conn: sqlite3.Connection
