"""Records as the store keeps them (``rlpapers.store.records``): a JSON head of the counted
fields and the rest compressed with a preset dictionary; read back as the same paper, smaller
than JSON, upgraded in place from the JSON of schema 5, and healed when damaged."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings
import zlib
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice
from rlpapers.model import Paper
from rlpapers.store import VERSION
from rlpapers.store.db import Garbled
from rlpapers.store.parsing import unpack_counts
from rlpapers.store.records import encode, paper_of, zdict

from .conftest import run
from .test_identity import _keys, _store_db


def _papers(seeds_copy: Path) -> tuple[Paper, ...]:
    from .test_stats import _varied

    return Library([_varied(seeds_copy)]).papers


def test_a_record_reads_back_as_the_same_paper_with_every_field(seeds_copy):
    papers = _papers(seeds_copy)
    full = papers[0].with_changes(
        title_derived=True,
        authors_truncated=True,
        links=("https://x.org",),
        note="n\x00\n",
        year=0,
        doi="10.1/x",
        sources=("a.txt:1", "b.bib:3"),
        line=7,
    )
    for paper in (*papers, full, Paper(id="abcdefghij", abstract="")):
        assert paper_of(encode(paper.to_dict())).to_dict() == paper.to_dict()


def test_records_take_less_than_half_their_json(seeds_copy):
    """The seeds' records (short abstracts, half in Chinese) in well under half the bytes."""
    records = [p.to_dict() for p in _papers(seeds_copy)]
    stored = sum(len(encode(r)) for r in records)
    plain = sum(len(json.dumps(r, ensure_ascii=False).encode()) for r in records)
    assert stored < 0.5 * plain


def test_the_dictionary_is_part_of_the_store_version():
    """Rows compressed with one dictionary cannot be read with another: a new dictionary needs
    a new store VERSION (and an upgrade of the stored rows), and then this pin moves with it."""
    pin = (VERSION, hashlib.sha256(zdict()).hexdigest()[:16])
    assert pin == (7, "64517c12ef5385e2")


# --- schema 5: the records as JSON text ----------------------------------------------------------


def _as_schema_5(lib: Library, garble: str | None = None) -> str:
    """Turn the library's store into one of schema 5 (each record's JSON as text); its
    instance id."""
    con = sqlite3.connect(_store_db(lib))
    rows = con.execute("SELECT id, data FROM records").fetchall()
    for pid, data in rows:
        text = json.dumps(paper_of(data).to_dict(), ensure_ascii=False)
        con.execute("UPDATE records SET data = ? WHERE id = ?", (text, pid))
    if garble is not None:
        con.execute("UPDATE records SET data = ? WHERE id = ?", (garble, rows[-1][0]))
    _as_schema_6(con)
    con.execute("PRAGMA user_version = 5")
    con.commit()
    instance = con.execute("SELECT value FROM meta WHERE name = 'instance'").fetchone()[0]
    con.close()
    return str(instance)


def _as_schema_6(con: sqlite3.Connection) -> None:
    """Word counts as JSON text and a fingerprints table, as schema 6 kept them."""
    for n, vocab in con.execute("SELECT rowid, vocab FROM parses").fetchall():
        text = json.dumps(unpack_counts(vocab), ensure_ascii=False)
        con.execute("UPDATE parses SET vocab = ? WHERE rowid = ?", (text, n))
    con.execute("CREATE TABLE prints (sha1 TEXT, name TEXT, prints BLOB, PRIMARY KEY (sha1, name))")


def _ledger_rows(lib: Library) -> list[tuple]:
    con = sqlite3.connect(lib.settings.data_dir / "ledger.db")
    rows = con.execute("SELECT * FROM papers ORDER BY id").fetchall()
    con.close()
    return rows


def test_a_schema_5_store_is_upgraded_in_place_with_its_ids_and_keys(seeds_copy):
    """The records are encoded again, not rebuilt: no note, the same store (its instance), the
    same papers with the same ids and keys; the ledger is not touched."""
    lib = Library([seeds_copy])
    papers = [p.to_dict() for p in lib.papers]
    ledger = _ledger_rows(lib)
    lib.close()
    instance = _as_schema_5(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)  # a rebuild says so
        again = Library([seeds_copy])
        assert [p.to_dict() for p in again.papers] == papers
        assert again.store.counter[0] == instance
    con = sqlite3.connect(_store_db(again))
    assert con.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert {type(d) for (d,) in con.execute("SELECT data FROM records")} == {bytes}
    assert _ledger_rows(again) == ledger
    assert run("--corpus", seeds_copy, "search", "entropy", "-f", "ids").stdout


def test_a_schema_6_store_is_compacted_in_place(seeds_copy):
    """Schema 7 keeps no fingerprints in the store (the parse workers hand them to the ledger
    from memory) and compresses the word counts: a schema 6 store loses the table and packs its
    counts, nothing else, and is not rebuilt."""
    lib = Library([seeds_copy])
    papers = [p.to_dict() for p in lib.papers]
    vocabulary = lib.store.vocabulary()
    instance = lib.store.counter[0]
    lib.close()
    con = sqlite3.connect(_store_db(lib))
    _as_schema_6(con)
    con.execute("PRAGMA user_version = 6")
    con.commit()
    con.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        again = Library([seeds_copy])
        assert [p.to_dict() for p in again.papers] == papers
        assert again.store.counter[0] == instance
    con = sqlite3.connect(_store_db(again))
    assert con.execute("PRAGMA user_version").fetchone()[0] == VERSION == 7
    assert "prints" not in {n for (n,) in con.execute("SELECT name FROM sqlite_master")}
    assert {type(v) for (v,) in con.execute("SELECT vocab FROM parses")} == {bytes}
    assert again.store.vocabulary() == vocabulary and len(vocabulary) > 1000


@pytest.mark.parametrize("version", [5, 2, 99])
def test_a_store_that_cannot_be_upgraded_is_rebuilt_with_its_ids_and_keys(seeds_copy, version):
    """A schema 5 store holding a garbled record, or a store of a schema with no upgrade: rebuilt
    with the note, every paper keeping its id and key (the ledger holds them)."""
    lib = Library([seeds_copy])
    keys = _keys(lib)
    lib.close()
    _as_schema_5(lib, garble="[1, 2")
    if version != 5:
        con = sqlite3.connect(_store_db(lib))
        con.execute(f"PRAGMA user_version = {version}")
        con.commit()
        con.close()
    with pytest.warns(IndexNotice, match="record store"):
        assert _keys(Library([seeds_copy])) == keys
    assert _keys(Library([seeds_copy])) == keys


# --- damage --------------------------------------------------------------------------------------


def _flip(data: bytes) -> bytes:
    middle = data.index(b"\0") + (len(data) - data.index(b"\0")) // 2
    return data[:middle] + bytes([data[middle] ^ 0x55]) + data[middle + 1 :]


def _another_dictionary(data: bytes) -> bytes:
    """The same text and CRC, compressed with another dictionary."""
    head, _, rest = data.partition(b"\0")
    text = zlib.decompressobj(-15, zdict=zdict()).decompress(rest[4:])
    packer = zlib.compressobj(6, zlib.DEFLATED, -15, zdict=b"another dictionary of words")
    return head + b"\0" + rest[:4] + packer.compress(text) + packer.flush()


def _another_text(data: bytes) -> bytes:
    """Another record's text, compressed as the store does, under this record's CRC."""
    head, _, rest = data.partition(b"\0")
    text = zlib.decompressobj(-15, zdict=zdict()).decompress(rest[4:])
    packer = zlib.compressobj(6, zlib.DEFLATED, -15, zdict=zdict())
    other = text.replace(b'"abstract":"', b'"abstract":"Another ', 1)
    return head + b"\0" + rest[:4] + packer.compress(other) + packer.flush()


DAMAGED_BODIES = {
    "a flipped byte": _flip,
    "cut short": lambda d: d[:-9],
    "more after it": lambda d: d + d[-4:],
    "another dictionary": _another_dictionary,
    "another text under its check": _another_text,
    "no head": lambda d: d[d.index(b"\0") + 1 :],
}
DAMAGED_HEADS = {
    "a head that is not JSON": lambda d: b"[1," + d[d.index(b"\0") :],
    "a head of another length": lambda d: b"[]" + d[d.index(b"\0") :],
    "a head of numbers as authors": lambda d: b'["t",[],[1,2],null,"",[],[]]' + d[d.index(b"\0") :],
}


@pytest.mark.parametrize(
    "damage", {**DAMAGED_BODIES, **DAMAGED_HEADS}.values(), ids=[*DAMAGED_BODIES, *DAMAGED_HEADS]
)
def test_a_damaged_record_cannot_be_read_as_a_paper(seeds_copy, damage):
    data = encode(_papers(seeds_copy)[0].to_dict())
    with pytest.raises(Garbled):
        paper_of(damage(data))


def _damage(lib: Library, pid: str, damage) -> None:
    con = sqlite3.connect(_store_db(lib))
    (data,) = con.execute("SELECT data FROM records WHERE id = ?", (pid,)).fetchone()
    con.execute("UPDATE records SET data = ? WHERE id = ?", (damage(data), pid))
    con.commit()
    con.close()


@pytest.mark.parametrize(
    ("command", "damage"),
    [
        *((c, d) for c in ("list", "show", "export") for d in DAMAGED_BODIES.values()),
        *(("stats", d) for d in DAMAGED_HEADS.values()),
        ("export", DAMAGED_HEADS["a head of numbers as authors"]),
    ],
)
def test_a_damaged_compressed_record_heals_with_a_note(seeds_copy, command, damage):
    """A compressed record damaged in its text or its head: the command that reads it rebuilds
    the store with the note and answers as before; ids and keys stay."""
    lib = Library([seeds_copy])
    keys = _keys(lib)
    target = lib.search("entropy")[0].paper.id
    args = {
        "list": ["list", "-f", "jsonl"],
        "show": ["show", target, "-f", "json"],
        "export": ["export", "-f", "json"],
        "stats": ["stats", "-f", "json", "--top", "50"],
    }[command]
    before = run("--corpus", seeds_copy, *args).stdout
    for kept in lib.settings.index_dir.rglob("stats.json"):
        kept.unlink()  # a kept result reads no record
    _damage(lib, target, damage)
    healed = run("--corpus", seeds_copy, *args)
    assert "record store" in healed.stderr and "rebuilding" in healed.stderr
    assert healed.stdout == before
    assert _keys(Library([seeds_copy])) == keys
    assert run("--corpus", seeds_copy, *args).stderr == ""


def test_a_refresh_pauses_the_collector_and_turns_it_back_on(seeds_copy, monkeypatch):
    """The collector is off while a refresh assigns ids and writes records (none of its many
    objects is in a cycle; at 75,000 papers the collections cost 0.2-0.3 s of a one-file
    refresh), and on again after it, as after a refresh that fails."""
    import gc

    from rlpapers.store import assign

    seen = []
    real = assign.Identities.assign
    monkeypatch.setattr(
        assign.Identities, "assign", lambda self, *a: seen.append(gc.isenabled()) or real(self, *a)
    )
    assert gc.isenabled()
    assert Library([seeds_copy]).papers
    assert seen == [False] and gc.isenabled()

    def failing(self, *a):
        raise RuntimeError("a refresh that fails")

    monkeypatch.setattr(assign.Identities, "assign", failing)
    _write_seed_edit(seeds_copy)
    with pytest.raises(RuntimeError):
        len(Library([seeds_copy]).papers)
    assert gc.isenabled()


def _write_seed_edit(corpus: Path) -> None:
    from .test_identity import _abstract, _write

    _write(corpus / "zz_more.txt", f"Topic\n\n{_abstract('ZebraRL, a method for zebras')}\n")
