"""Shared fixtures: an isolated environment for every test and one CLI helper."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SEEDS = ROOT / "seeds"

#: The record fields scripts rely on (issue 2's promise); search hits add "score".
RECORD_FIELDS = (
    "id",
    "key",
    "title",
    "name",
    "authors",
    "categories",
    "topic",
    "abstract",
    "source",
)

os.environ.update(
    {
        "NO_COLOR": "1",
        "TERMINAL_WIDTH": "100",
        "COLUMNS": "100",
        "_TYPER_FORCE_DISABLE_TERMINAL": "1",
    }
)
# Module-scoped fixtures (test_export's `papers`) are made before `isolated` below applies: they
# too must not read or write the user's cache, data folder and ledger.
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="rlpapers-tests-"))
os.environ.update(
    {
        "XDG_CACHE_HOME": str(_SESSION_HOME / "cache"),
        "XDG_DATA_HOME": str(_SESSION_HOME / "data"),
        "XDG_CONFIG_HOME": str(_SESSION_HOME / "config"),
    }
)
for _name in (
    "RLPAPERS_CONFIG",
    "RLPAPERS_INDEX_DIR",
    "RLPAPERS_DATA_DIR",
    "RLPAPERS_CORPUS",
    "RLPAPERS_LEDGER",
):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the user's config or cache, or the environment's corpus."""
    home = tmp_path_factory.mktemp("home")
    (home / "config.yaml").write_text("", encoding="utf-8")  # named, so it must exist
    monkeypatch.setenv("RLPAPERS_CONFIG", str(home / "config.yaml"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(home / "index"))
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("RLPAPERS_CORPUS", raising=False)
    return home


@pytest.fixture
def seeds_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled seeds."""
    target = tmp_path / "corpus"
    shutil.copytree(SEEDS, target)
    return target


class Result:
    def __init__(self, raw) -> None:
        self.exit_code = raw.exit_code
        self.stdout = raw.stdout
        self.stderr = raw.stderr


def run(*args: str, code: int = 0, input: str | bytes | None = None) -> Result:
    """Invoke the CLI in-process; assert the exit code; never swallow an exception."""
    from rlpapers.cli.app import app

    runner = CliRunner()
    raw = runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)
    result = Result(raw)
    assert raw.exit_code == code, (
        f"rlpapers {' '.join(map(str, args))} exited {raw.exit_code}, expected {code}\n"
        f"stdout:\n{raw.stdout}\nstderr:\n{raw.stderr}"
    )
    return result


def smash_page(db: Path, table: str) -> None:
    """Overwrite the start of one page of ``table`` (its last leaf, or its root)."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = con.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))
    page = pages.fetchall()[-1][0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(db, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xff" * 64)
