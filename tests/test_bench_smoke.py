"""The benchmark script runs end to end on 200 synthetic records (the real run is not a test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from .conftest import ROOT


def test_benchmark_runs_on_200_records(tmp_path):
    pytest.importorskip("bm25s", reason="the bench extra is not installed")
    pytest.importorskip("psutil", reason="the bench extra is not installed")
    env = dict(os.environ, RLPAPERS_INDEX_DIR=str(tmp_path / "seeds-index"))
    argv = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench.py"),
        "--sizes",
        "200",
        "--smoke",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    row = results["sizes"]["200"]
    assert row["rlpapers"]["build"]["wall_s"] > 0 and row["bm25s"]["build_s"] > 0
    assert row["whoosh"]["wall_s"] > 0 and row["whoosh"]["index_mb"] > 0  # the engine baseline
    assert row["rlpapers"]["search_warm"]["p50_ms"] > 0
    assert results["startup"]["search_ratio"] > 1
    assert "records | build s" in proc.stdout
