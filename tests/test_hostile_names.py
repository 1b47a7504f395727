"""A corpus file name may hold escape sequences: none reaches the terminal raw."""

from __future__ import annotations

import pytest

from .conftest import SEEDS, run

NAME = "evil\x1b]0;owned\x07\x1b[31mred.txt"


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    text = SEEDS.joinpath("003_9c520f58a50b3392.txt").read_text(encoding="utf-8")
    (folder / NAME).write_text(text, encoding="utf-8")
    sidecar = folder / NAME.replace(".txt", ".yaml")
    sidecar.write_text("nobody_here: {venue: X}\n", encoding="utf-8")  # a warning naming it
    return folder


@pytest.mark.parametrize(
    "args",
    [
        ("show", "zhan_tecrl"),
        ("show", "zhan_tecrl", "-f", "table"),
        ("list", "-f", "tsv"),
        ("keys",),
        ("config",),
        ("config", "-f", "table"),
        ("search", "entropy", "-f", "table"),
    ],
    ids=" ".join,
)
def test_a_file_name_with_escape_sequences_is_shown_escaped(corpus, args):
    result = run("--corpus", corpus, *args)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_messages_name_such_a_file_visibly(corpus):
    warned = run("--corpus", corpus, "list", "-f", "ids")
    assert "evil\\x1b]0;owned\\x07\\x1b[31mred.yaml:1: no paper" in warned.stderr
    (corpus / NAME).write_bytes(b"Topic\n\nA\x00binary file\n")
    refused = run("--corpus", corpus, "list", "-f", "ids", code=2)
    assert "evil\\x1b]0;owned\\x07\\x1b[31mred.txt" in refused.stderr
