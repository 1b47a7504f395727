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
