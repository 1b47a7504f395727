"""keys --pin: only key values are written; comments, order, other fields and other entries
stay; pins land where they are read; concurrent pins lose nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import ParseWarning
from rlpapers.pins import write_keys

from .conftest import ROOT, SEEDS, run

USERS_FILE = """\
# my pins: this comment stays
zhan_tecrl: {venue: ICML, note: "read twice"}   # so does this one
someone_else:
  title: A paper not in this corpus
  tags: [x, y]
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for seed in SEEDS.glob("003_*.txt"):
        (folder / seed.name).write_bytes(seed.read_bytes())
    return folder


def test_a_pin_keeps_comments_fields_and_other_entries(corpus):
    (corpus / "keys.yaml").write_text(USERS_FILE, encoding="utf-8")
    result = run("--corpus", corpus, "keys", "--pin")
    assert "wrote 20 keys to" in result.stderr
    text = (corpus / "keys.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# my pins: this comment stays"
    assert lines[1].startswith('zhan_tecrl: {venue: ICML, note: "read twice", key: zhan_tecrl}')
    assert lines[1].endswith("# so does this one")
    assert lines[2:5] == USERS_FILE.splitlines()[2:5]
    assert text.count("key: ") == 20  # the other 19 papers, each once, after the user's entries
    with pytest.warns(ParseWarning, match="someone_else"), Library([corpus]) as lib:
        assert lib.get("zhan_tecrl").venue == "ICML"


def test_pinning_twice_changes_nothing(corpus):
    run("--corpus", corpus, "keys", "--pin")
    first = (corpus / "keys.yaml").read_text(encoding="utf-8")
    run("--corpus", corpus, "keys", "--pin")
    assert (corpus / "keys.yaml").read_text(encoding="utf-8") == first


def test_a_keys_file_that_is_not_yaml_is_reported_and_left_alone(corpus):
    (corpus / "keys.yaml").write_text("a: [unclosed\n", encoding="utf-8")
    result = run("--corpus", corpus, "keys", "--pin", code=2)
    assert "keys.yaml" in result.stderr
    assert (corpus / "keys.yaml").read_text(encoding="utf-8") == "a: [unclosed\n"


def test_pins_of_a_symlinked_corpus_file_land_where_they_are_read(corpus, tmp_path, isolated):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (name,) = [p.name for p in corpus.glob("*.txt")]
    (corpus / name).rename(elsewhere / name)
    (corpus / name).symlink_to(elsewhere / name)
    run("--corpus", corpus, "keys", "--pin")
    assert (corpus / "keys.yaml").is_file() and not (elsewhere / "keys.yaml").exists()
    pinned = run("--corpus", corpus, "keys", "-f", "tsv").stdout
    os.environ["RLPAPERS_DATA_DIR"] = str(tmp_path / "another-ledger")  # restored by isolated
    assert run("--corpus", corpus, "keys", "-f", "tsv").stdout == pinned


def test_a_symlinked_keys_file_is_written_through_and_stays_a_link(corpus, tmp_path):
    shared = tmp_path / "shared-keys.yaml"
    shared.write_text("# shared\n", encoding="utf-8")
    (corpus / "keys.yaml").symlink_to(shared)
    run("--corpus", corpus, "keys", "--pin")
    assert (corpus / "keys.yaml").is_symlink()
    assert shared.read_text(encoding="utf-8").startswith("# shared\n")
    assert shared.read_text(encoding="utf-8").count("key: ") == 20


WRITER = """
import sys
from pathlib import Path
from rlpapers.pins import write_keys
n = int(sys.argv[2])
write_keys(Path(sys.argv[1]), [(f"p{n}x{i:03d}", f"k{n}x{i:03d}", (), []) for i in range(150)])
"""


@pytest.mark.slow
def test_concurrent_pins_into_one_file_keep_every_entry(tmp_path):
    target = tmp_path / "keys.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(n)], env=env)
        for n in range(8)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0] * 8
    assert write_keys(target, []) == 8 * 150


BIB_WITHOUT_ABSTRACTS = """@article{muller2020study,
  title = {A Study of Things},
  author = {M{\\"u}ller, Hans},
  year = {2020}
}

@misc{plain2021,
  title = {Plain Entries Have No Abstract},
  author = {Plain, Paula},
  year = {2021}
}
"""


def test_entries_without_an_abstract_are_pinned_under_their_own_ids(
    tmp_path, monkeypatch, isolated
):
    """Observed: every entry without an abstract was pinned under one id, the content id of
    an empty abstract (a paper nobody has), the last entry's key winning; a fresh data
    folder then warned that keys.yaml names no paper."""
    folder = tmp_path / "bib"
    folder.mkdir()
    (folder / "refs.bib").write_text(BIB_WITHOUT_ABSTRACTS, encoding="utf-8")
    ids = {p.key: p.id for p in Library([folder]).papers}
    run("--corpus", folder, "keys", "--pin")
    pinned = (folder / "keys.yaml").read_text(encoding="utf-8")
    for key, pid in ids.items():
        assert f"{pid}: {{key: {key}}}" in pinned
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(tmp_path / "elsewhere-cache"))
    result = run("--corpus", folder, "list", "-f", "ids")
    assert "no paper with id or key" not in result.stderr
    assert {p.key: p.id for p in Library([folder]).papers} == ids
