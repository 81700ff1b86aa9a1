"""Shared fixtures: a temporary data dir per test, settings pointing at it, and the shared data path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from papersift.settings import Settings, load_settings
from papersift.store import Store, open_store

SHARED_DATA = Path(
    os.environ.get("PAPERSIFT_SHARED_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
).resolve()
SHARED_FORMATS = SHARED_DATA.parent / "formats"


# Set by .ci/run: there, a test that needs the shared data fails when it is absent instead
# of skipping quietly (a CI run that skipped them would prove nothing about them).
REQUIRE_SHARED = os.environ.get("PAPERSIFT_REQUIRE_SHARED_DATA") == "1"


def _absent(what: str) -> None:
    if REQUIRE_SHARED:
        pytest.fail(f"{what} is absent, and this run requires the shared data "
                    "(PAPERSIFT_REQUIRE_SHARED_DATA=1)")
    pytest.skip(f"{what} is absent (set PAPERSIFT_SHARED_DATA)")


def shared_file(name: str) -> Path:
    """A file of ../shared/data, or skip the test with the reason (fail in CI)."""
    path = SHARED_DATA / name
    if not path.exists():
        _absent(f"shared data {path}")
    return path


def shared_format(name: str) -> Path:
    path = SHARED_FORMATS / name
    if not path.exists():
        _absent(f"shared format sample {path}")
    return path


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's settings or data dir."""
    for name in list(os.environ):
        if name.startswith("PAPERSIFT_") and name not in ("PAPERSIFT_SHARED_DATA",
                                                          "PAPERSIFT_REQUIRE_SHARED_DATA"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("PAPERSIFT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PAPERSIFT_CONFIG", str(tmp_path / "papersift.toml"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=str(tmp_path / "data"), request_delay=0.0)


@pytest.fixture
def store(settings: Settings) -> Store:
    db = open_store(settings)
    yield db
    db.close()
