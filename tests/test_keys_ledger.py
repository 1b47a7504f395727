"""Old keys in the identity ledger: a ledger written before them upgrades in place, gives every
paper the key it had, and keeps each key a paper held before its current one as an old key."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import LedgerError
from rlpapers.store.ledger import VERSION, Ledger

from .conftest import DATA, SEEDS, run

V3 = DATA / "ledger-v3"  # the seeds' ledger at schema 3, zhan_tecrl renamed zhan2025tecrl
V1 = DATA / "ledger-v1"


def _expected(fixture: Path) -> dict[str, str]:
    lines = (fixture / "keys.tsv").read_text(encoding="utf-8").splitlines()
    return dict(line.split("\t") for line in lines)


def _with_ledger(tmp_path: Path, fixture: Path) -> Path:
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    data = Path(os.environ["RLPAPERS_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(fixture / "ledger.db", data / "ledger.db")
    return corpus


def test_a_schema_3_ledger_upgrades_and_every_paper_keeps_its_key(tmp_path):
    corpus = _with_ledger(tmp_path, V3)
    with Library([corpus]) as lib:
        assert {p.id: p.key for p in lib.papers} == _expected(V3)
    ledger = Ledger(Path(os.environ["RLPAPERS_DATA_DIR"]))
    assert ledger.con.execute("PRAGMA user_version").fetchone()[0] == VERSION == 4
    assert ledger.old_keys() == {"zhan_tecrl": "7ighzsecq7"}  # the key before the rename
    ledger.close()
    assert run("--corpus", corpus, "show", "zhan_tecrl", "-f", "ids").stdout.split() == [
        "7ighzsecq7"
    ]


def test_a_schema_1_ledger_upgrades_with_no_old_keys(tmp_path):
    corpus = _with_ledger(tmp_path, V1)
    shutil.copy(V1 / "corpus" / "extra.txt", corpus / "extra.txt")
    with Library([corpus]) as lib:
        assert {p.id: p.key for p in lib.papers} == _expected(V1)
    ledger = Ledger(Path(os.environ["RLPAPERS_DATA_DIR"]))
    assert ledger.old_keys() == {}
    ledger.close()


def test_a_renamed_key_becomes_an_old_key_and_a_key_given_back_is_current_again(tmp_path):
    ledger = Ledger(tmp_path)
    with ledger.transaction():
        ledger.add_paper("p1", ["c1"])
        ledger.give_key("p1", "smith_foo")
        ledger.give_key("p1", "Smith_Foo")  # the same key in another case: not an old key
    assert ledger.old_keys() == {}
    with ledger.transaction():
        ledger.give_key("p1", "smith2025foo")
    assert ledger.old_keys() == {"Smith_Foo": "p1"}
    assert ledger.resolve("smith_foo") == "p1"
    with ledger.transaction():
        ledger.give_key("p1", "smith_foo")
    assert ledger.old_keys() == {"smith2025foo": "p1"}
    assert ledger.keys_of(["p1"]) == {"p1": "smith_foo"}
    ledger.close()


def test_a_hand_edited_old_key_is_reported_as_damage(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.close()
    con = sqlite3.connect(tmp_path / "ledger.db")
    con.execute("INSERT INTO old_keys VALUES ('bad key{', 'p1', '')")
    con.commit()
    con.close()
    ledger = Ledger(tmp_path)
    try:
        with pytest.raises(LedgerError, match="old_keys"):
            ledger.old_keys()
    finally:
        ledger.close()
