"""The data folder's layout, in one place: the database, vector indexes, exported models, logs."""

from __future__ import annotations

import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class DataDir:
    """Where each kind of file lives under the data folder.

    Only the database holds what cannot be recomputed (readers' own data among it); the
    rest can be deleted and is rebuilt when needed.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def database(self) -> Path:
        return self.root / "papersift.db"

    def vector_index(self, model: str) -> Path:
        """The folder of the nearest-neighbour index of one embedding model."""
        return self.root / "index" / _UNSAFE.sub("_", model)

    @property
    def models(self) -> Path:
        """Where exported models live (each in a folder of its own)."""
        return self.root / "models"

    def exported_model(self, name: str) -> Path:
        return self.models / f"{name}-onnx"

    @property
    def secret_key(self) -> Path:
        """The key that signs cookies and links when none is configured (losing it only logs
        readers out)."""
        return self.root / "secret.key"

    @property
    def logs(self) -> Path:
        return self.root / "logs"
