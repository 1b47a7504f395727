"""A PostgreSQL server for the team-ledger tests, and a fresh database on it for each test.

``RLPAPERS_TEST_PG`` (set by ``.ci/run``, which starts a throwaway server) names the server; a
developer without it gets one started here with ``.ci/pg-server`` when ``pg_ctl`` is found, and
stopped when the session ends. The PostgreSQL cases are skipped only where no server can be
started; where ``RLPAPERS_TEST_PG`` names one, it must answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from .conftest import ROOT

SCRIPT = ROOT / ".ci" / "pg-server"


def with_database(url: str, name: str) -> str:
    """``url`` naming the database ``name`` instead."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def with_login(url: str, user: str, password: str) -> str:
    """``url`` logging in as ``user`` with ``password``."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{host}"))


def _start(folder: Path) -> str | None:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None
    if not (shutil.which("pg_ctl") or list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))):
        return None
    found = subprocess.run(
        ["bash", str(SCRIPT), "start", str(folder)],
        capture_output=True,
        text=True,
        env={**os.environ, "FSYNC": "off"},
        timeout=120,
    )
    return found.stdout.strip() if found.returncode == 0 else None


# The fixtures are registered under their ``name``s; a test module imports the functions (whose
# own names no test argument shadows) to use them.


@pytest.fixture(scope="session", name="pg_server")
def pg_server_fixture() -> Iterator[str]:
    """The URL of a PostgreSQL server whose role may make databases."""
    named = os.environ.get("RLPAPERS_TEST_PG")
    if named:
        yield named
        return
    folder = Path(tempfile.mkdtemp(prefix="rlpg-"))  # short: a socket path has ~100 bytes
    folder.chmod(0o755)
    url = _start(folder)
    try:
        if url is None:
            pytest.skip("no PostgreSQL server could be started (pg_ctl or psycopg missing)")
        yield url
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(folder)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def admin(url: str, *statements: str) -> list[tuple]:
    """Run ``statements`` on the server as the URL's role; the last one's rows."""
    import psycopg

    rows: list[tuple] = []
    with psycopg.connect(url, autocommit=True) as con:
        for statement in statements:
            cursor = con.execute(statement)
            rows = cursor.fetchall() if cursor.description else []
    return rows


@pytest.fixture(name="pg_url")
def pg_url_fixture(pg_server: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A new, empty database on the server, the test's ``RLPAPERS_LEDGER``; dropped after."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin(pg_server, f"CREATE DATABASE {name}")
    url = with_database(pg_server, name)
    monkeypatch.setenv("RLPAPERS_LEDGER", url)
    try:
        yield url
    finally:
        admin(pg_server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"], name="engine")
def engine_fixture(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Each ledger engine in turn: None for the data folder's SQLite ledger, else the URL of a
    new database (also set as ``RLPAPERS_LEDGER`` for the test)."""
    if request.param == "sqlite":
        monkeypatch.delenv("RLPAPERS_LEDGER", raising=False)
        return None
    return str(request.getfixturevalue("pg_url"))
