"""Embeddings per paper and model, keyed by a hash of the embedded text."""

from __future__ import annotations

import sqlite3


class EmbeddingsStore:
    """Mixin of Store (see papersift.store)."""

    conn: sqlite3.Connection
