"""Bounded resources, signals and no exit 70: each test here is one row of docs/reliability.md."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest

from .conftest import SEEDS, run

SEED = "000_eda7530d3ab384ed.txt"  # the seed whose paper "preference" the metadata tests edit
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and devices")


@pytest.fixture
def corpus(tmp_path):
    """A corpus of one seed file, for the metadata cases."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    shutil.copy(SEEDS / SEED, folder)
    return folder


def _cli(*args, timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
    """The CLI in a child process, for what only a real process shows."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "rlpapers", *map(str, args)], timeout=timeout, **kwargs
    )


# --- metadata -------------------------------------------------------------------------------------

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
preference:
  title: *g
"""


def test_a_yaml_alias_bomb_is_refused_naming_the_file(corpus):
    (corpus / "metadata.yaml").write_text(BOMB)
    started = time.monotonic()
    result = run("--corpus", corpus, "list", "-f", "ids", code=2)
    assert time.monotonic() - started < 5  # 9**7 "lol"s: 312 MB of title, then exit 70
    assert "metadata.yaml:6: its anchors and aliases expand to more than" in result.stderr
    assert result.stderr.count("\n") == 1


def test_anchors_and_aliases_that_share_a_list_are_still_read(corpus):
    (corpus / "metadata.yaml").write_text(
        "preference: {tags: &shared [offline, contrastive]}\n"
        "objectivepolicy: {tags: *shared, note: &loop [*loop]}\n"  # a list holding itself
    )
    papers = json.loads(run("--corpus", corpus, "list", "-f", "json").stdout)
    tagged = {p["key"]: p["tags"] for p in papers if p["tags"]}
    assert tagged == {p: ["offline", "contrastive"] for p in ("preference", "objectivepolicy")}


@pytest.mark.parametrize("year", [65536, -1, 0, 10000])
def test_a_year_out_of_range_is_exit_2_naming_file_and_line(corpus, year):
    (corpus / "metadata.yaml").write_text(f"# years\npreference:\n  year: {year}\n")
    for command in (["search", "reward"], ["stats"], ["similar", "preference"], ["list"]):
        result = run("--corpus", corpus, *command, code=2)
        assert f"metadata.yaml:2: year {year} is out of range: give one from 1 to 9999" in (
            result.stderr
        )
    (corpus / "metadata.yaml").write_text("preference:\n  year: 9999\n")
    assert "9999" in run("--corpus", corpus, "show", "preference", "-f", "tsv").stdout


@pytest.mark.parametrize("codec", ["base64", "rot13", "zlib", "hex"])
def test_a_non_text_codec_is_exit_2(corpus, codec):
    seed = corpus / SEED
    result = run("--encoding", codec, "parse", seed, code=2)
    assert f"'{codec}' is not a text encoding" in result.stderr
    (corpus / "metadata.yaml").write_text(f"encoding: {codec}\n")
    result = run("--corpus", corpus, "list", code=2)
    assert f"metadata.yaml:1: '{codec}' is not a text encoding" in result.stderr
    from rlpapers.errors import ParseError
    from rlpapers.parse import parse_bytes

    with pytest.raises(ParseError, match="not a text encoding"):
        parse_bytes(seed.read_bytes(), encoding=codec)


def test_a_text_codec_that_fails_without_a_position_is_exit_2(tmp_path):
    (tmp_path / "ascii.txt").write_text("Topic\n\nWe study reward shaping.\n")
    result = run("--encoding", "punycode", "parse", tmp_path / "ascii.txt", code=2)
    assert "ascii.txt: the text is not valid punycode" in result.stderr  # was exit 70


def test_utf32_with_a_bom_is_read_as_utf32(corpus):
    text = (corpus / SEED).read_text("utf-8")
    for codec in ("utf-32", "utf-32-be"):
        data = text.encode(codec) if codec == "utf-32" else b"\x00\x00\xfe\xff" + text.encode(codec)
        (corpus / "u32.txt").write_bytes(data)
        (corpus / SEED).unlink(missing_ok=True)
        papers = json.loads(run("parse", corpus / "u32.txt", "-f", "json").stdout)
        assert papers[0]["topic"] == "强化学习" and len(papers) == 20


def test_a_trailing_backslash_shows_as_one(corpus):
    (corpus / "metadata.yaml").write_text(
        'preference: {title: "ends with \\\\", note: "a\\\\", tags: ["x\\\\"]}\n'
    )
    card = run("--corpus", corpus, "show", "preference", "-f", "table").stdout
    assert "ends with \\ " in card and "a\\ " in card and "x\\ " in card
    assert "\\\\" not in card
    chart = run("--corpus", corpus, "stats", "-f", "table").stdout
    assert "x\\ " in chart and "\\\\" not in chart
