"""Warnings come once and in bounded number: the first 20 of a kind, then a count."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .conftest import run


def _touch(path: Path) -> None:
    stamp = time.time() + 5
    os.utime(path, (stamp, stamp))


def test_a_flood_of_one_warning_shows_twenty_and_a_count(tmp_path, monkeypatch):
    corpus = tmp_path / "flood.txt"
    real = "We propose YakRL, a method for herding yaks with reinforcement learning over seasons."
    flood = "".join(f"x{i}\n\n" for i in range(500))
    corpus.write_text(f"Topic\n\n{flood}{real}\n", encoding="utf-8")
    result = run("--corpus", corpus, "list", "-f", "ids")
    lines = result.stderr.splitlines()
    assert len(lines) <= 22
    assert sum(line.startswith("warning: ") for line in lines) == 20
    assert (
        "more warnings like the 20 above not shown (RLPAPERS_WARNINGS=all" in lines[-2] + lines[-1]
    )
    monkeypatch.setenv("RLPAPERS_WARNINGS", "all")
    corpus.write_text(corpus.read_text(encoding="utf-8") + "y\n", encoding="utf-8")  # parsed again
    _touch(corpus)
    assert run("--corpus", corpus, "list", "-f", "ids").stderr.count("warning: ") >= 490


def test_a_stale_metadata_entry_is_named_once_per_version_of_its_file(seeds_copy):
    metadata = seeds_copy / "metadata.yaml"
    metadata.write_text("nobody_at_all: {venue: X}\nqerl: {venue: ICML}\n", encoding="utf-8")
    first = run("--corpus", seeds_copy, "list", "-f", "ids")
    assert first.stderr.count("no paper with id or key 'nobody_at_all'") == 1
    for text_file in seeds_copy.glob("*.txt"):
        _touch(text_file)  # a refresh, the metadata unchanged
    assert "nobody_at_all" not in run("--corpus", seeds_copy, "list", "-f", "ids").stderr
    metadata.write_text("nobody_at_all: {venue: Y}\n", encoding="utf-8")
    _touch(metadata)
    assert "nobody_at_all" in run("--corpus", seeds_copy, "list", "-f", "ids").stderr


def test_one_file_of_a_folder_whose_metadata_names_the_others_warns_boundedly(seeds_copy):
    lines = [f"{p.split()[0]}: {{venue: X}}" for p in run("keys", "-f", "tsv").stdout.splitlines()]
    lines += [f"gone{i}: {{venue: X}}" for i in range(30)]  # papers deleted since
    (seeds_copy / "metadata.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    one = next(iter(sorted(seeds_copy.glob("003_*.txt"))))
    result = run("--corpus", one, "list", "-f", "ids")
    assert result.stderr.count("\n") <= 21 and "more warnings like" in result.stderr
