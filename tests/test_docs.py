"""Docs cannot drift: the CLI reference is generated from the app; README and CI agree."""

from __future__ import annotations

from rlpapers.cli.reference import reference

from .conftest import ROOT


def test_cli_reference_is_up_to_date():
    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == reference(), (
        "docs/cli.md is stale: python -m rlpapers.cli.reference > docs/cli.md"
    )


def test_ci_runs_the_readme_setup_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in (
        "pip install .",
        "rlpapers search entropy",
        "pip install -e '.[test]'",
        "pytest",
    ):
        assert command in readme, f"README lacks {command!r}"
        assert command in ci, f".ci/run lacks {command!r}"
