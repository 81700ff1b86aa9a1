"""Read queries for the web pages: listings, days, authors, feeds."""

from __future__ import annotations

import sqlite3


class PagesStore:
    """Mixin of Store (see papersift.store)."""

    conn: sqlite3.Connection
