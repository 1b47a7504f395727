"""The installed command and ``python -m rlpapers`` run from another folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


def _run(argv, tmp_path):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("launcher", ["script", "module"])
def test_installed_cli_lists_the_bundled_corpus(launcher, tmp_path):
    if launcher == "script":
        exe = shutil.which("rlpapers")
        if exe is None:
            pytest.fail("the rlpapers command is not installed (pip install -e '.[test]')")
        argv = [exe]
    else:
        argv = [sys.executable, "-m", "rlpapers"]
    result = _run([*argv, "list", "--format", "json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 40


def test_broken_pipe_is_quiet(tmp_path):
    exe = shutil.which("rlpapers") or "rlpapers"
    proc = subprocess.run(
        f"'{exe}' list --format json | head -c 10",
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr
