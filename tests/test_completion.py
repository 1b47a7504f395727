"""Shell completion for bash, zsh and fish, asked the way each shell's script asks (environment
variables, a subprocess), and never loaded by an ordinary run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import ROOT


def _complete(shell: str, line: str, action: str = "get-args") -> subprocess.CompletedProcess:
    env = {**os.environ, "_RLPAPERS_COMPLETE": f"complete_{shell}"}
    if shell == "bash":
        words = line.split()
        env["COMP_WORDS"] = line
        env["COMP_CWORD"] = str(len(words) if line.endswith(" ") else len(words) - 1)
    else:
        env["_TYPER_COMPLETE_ARGS"] = line
        env["_TYPER_COMPLETE_FISH_ACTION"] = action
    return subprocess.run(
        [sys.executable, "-m", "rlpapers"], env=env, capture_output=True, text=True, timeout=120
    )


def offered(shell: str, line: str) -> list[str]:
    """The values the shell is offered, whatever its output format."""
    out = _complete(shell, line).stdout
    if shell == "zsh":
        if out.strip() == "_files":
            return []
        body = out.split("((", 1)[1].rsplit("))", 1)[0]
        return [item.split('":"')[0].strip('"').replace("\\\\:", ":") for item in body.splitlines()]
    return [item.split("\t")[0] for item in out.splitlines() if item]


SHELLS = ["bash", "zsh", "fish"]


@pytest.mark.parametrize("shell", SHELLS)
def test_commands_options_and_formats(shell):
    assert offered(shell, "rlpapers sea") == ["search"]
    assert "--year" in offered(shell, "rlpapers list --ye")
    assert offered(shell, "rlpapers search --format j") == ["json", "jsonl"]
    assert offered(shell, "rlpapers stats --format ") == ["table", "tsv", "json", "yaml"]


@pytest.mark.parametrize("shell", SHELLS)
def test_query_field_names(shell):
    assert offered(shell, "rlpapers search ti") == ["title:"]
    assert {"tag:", "tags:"} <= set(offered(shell, "rlpapers export ta"))
    assert offered(shell, "rlpapers search title:x") == []


@pytest.mark.parametrize("shell", SHELLS)
def test_keys_for_show_and_similar(shell):
    assert offered(shell, "rlpapers show qe") == ["qerl"]
    assert offered(shell, "rlpapers similar pc") == ["pcl"]


def test_keys_come_from_the_corpus_named_after_the_command(tmp_path):
    (tmp_path / "one.txt").write_text("Topic\n\nWe propose FooRL, a method for foo. It works.\n")
    assert offered("bash", f"rlpapers show --corpus {tmp_path} foo") == ["foorl"]
    assert offered("bash", f"rlpapers --corpus {tmp_path} show foo") == ["foorl"]
    assert offered("bash", "rlpapers --corpus /no/such/place show foo") == []  # quietly nothing


def test_file_arguments_are_left_to_the_shell():
    # bash's script falls back to file names when offered nothing (complete -o default),
    # zsh's runs _files, fish's is-args check says "files allowed" by exiting 1
    for line in ("rlpapers export --ids ", "rlpapers export -o ", "rlpapers parse "):
        assert _complete("bash", line).stdout.strip() == ""
        assert _complete("zsh", line).stdout.strip() == "_files"
        assert _complete("fish", line, action="is-args").returncode == 1
    assert _complete("fish", "rlpapers show ", action="is-args").returncode == 0


@pytest.mark.parametrize(
    "shell, marker",
    [("bash", "complete -o default -F"), ("zsh", "compdef"), ("fish", "complete --command")],
)
def test_show_completion_prints_each_shells_script(shell, marker):
    # the shell is normally detected from the parent process; this variable lets us name it
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    script = subprocess.run(
        [sys.executable, "-m", "rlpapers", "--show-completion", shell],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert script.returncode == 0 and "_RLPAPERS_COMPLETE" in script.stdout
    assert marker in script.stdout


def test_an_ordinary_run_never_loads_the_completion_code():
    probe = (
        "import sys\n"
        "from rlpapers.cli.app import app\n"
        "try:\n"
        "    app(['list', '-f', 'ids'], prog_name='rlpapers')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('rlpapers.cli.complete' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.stderr.strip().splitlines()[-1] == "False"
