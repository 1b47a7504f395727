"""The benchmark scripts ship with the source (README, docs/performance.md) and are run by hand:
each must at least compile, and each script run as a program has a ``main``."""

from __future__ import annotations

import ast

import pytest

from .conftest import ROOT

SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))


def test_the_benchmarks_folder_holds_the_scripts_the_docs_name():
    names = {path.name for path in SCRIPTS}
    assert {"bench.py", "startup.py", "search_latency.py", "relevance.py"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_each_benchmark_script_compiles_and_a_program_has_a_main(script):
    tree = ast.parse(script.read_text(encoding="utf-8"), filename=str(script))
    compile(tree, str(script), "exec")
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    if '__name__ == "__main__"' in script.read_text(encoding="utf-8"):
        assert "main" in functions, f"{script.name} runs as a program but has no main()"
