"""The house rules that a linter can check: import boundaries, formatting, lint."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import ROOT


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(args):
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed (it is in the test extra)")
    proc = subprocess.run(
        [ruff, *args, "rlpapers", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_on_the_package():
    """Types are checked as pyproject.toml's [tool.mypy] says: strict for rlpapers/, with the
    untyped third-party packages named there."""
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True, text=True
    )
    if "No module named mypy" in proc.stderr:
        pytest.fail("mypy is not installed (it is in the test extra)")
    assert proc.returncode == 0, proc.stdout + proc.stderr
