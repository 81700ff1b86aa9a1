"""TL;DRs and blurbs with provenance, staleness and flags."""

from __future__ import annotations

import sqlite3


class SummariesStore:
    """Mixin of Store (see papersift.store)."""

    conn: sqlite3.Connection
