"""The CLI's modules: each command lives in the module ``group.COMMANDS`` names, and a run
imports the module of the command it runs and no other command's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: The modules of ``rlpapers.cli`` every run of a command imports besides its own.
FRAME = {
    "rlpapers.cli",
    "rlpapers.cli._lightimport",  # Typer imported without what a run never uses
    "rlpapers.cli.common",
    "rlpapers.cli.dispatch",
    "rlpapers.cli.errors",
    "rlpapers.cli.group",
    "rlpapers.cli.options",
    "rlpapers.cli.render",
    "rlpapers.cli.root",
}

PROBE = """
import json, sys
from rlpapers.cli import main
sys.argv = ["rlpapers", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("rlpapers.cli"))), file=sys.stderr)
"""


def test_each_command_lives_in_the_module_the_table_names():
    from rlpapers.cli.app import COMMANDS  # imports every command module
    from rlpapers.cli.dispatch import registered

    made = registered()
    assert set(made) == set(COMMANDS)
    for name, info in made.items():
        assert info.callback is not None
        assert info.callback.__module__ == f"rlpapers.cli.{COMMANDS[name]}", name


@pytest.mark.parametrize(
    ("args", "module"),
    [
        (["search", "entropy", "-f", "ids"], "search"),
        (["list", "-f", "ids"], "papers"),
        (["export", "--ids", "-"], "export"),
        (["keys", "-f", "tsv"], "collection"),
    ],
)
def test_a_run_imports_only_its_own_command_module(isolated, args, module):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input="qerl\n",
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert loaded == FRAME | {f"rlpapers.cli.{module}"}


def test_help_and_an_unknown_command_get_the_whole_app(isolated):
    done = subprocess.run([sys.executable, "-c", PROBE, "--help"], capture_output=True, text=True)
    loaded = set(json.loads(done.stderr.splitlines()[-1]))
    assert {"rlpapers.cli.app", "rlpapers.cli.search", "rlpapers.cli.export"} <= loaded
    assert "rlpapers.cli.complete" not in loaded  # only the shell's completion loads it
