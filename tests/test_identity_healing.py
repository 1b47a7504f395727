"""The record store, the ledger and the search view met damaged: each heals with a note, or is
reported and never replaced."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice, LedgerError

from .conftest import run, smash_page
from .test_identity import TECRL, _abstract, _keys, _store_db, _write

# --- damage and planted files --------------------------------------------------------------------


def test_a_damaged_record_store_heals_with_a_note(seeds_copy):
    lib = Library([seeds_copy])
    keys = _keys(lib)
    _store_db(lib).write_bytes(b"garbage " * 4096)
    for suffix in ("-wal", "-shm"):
        Path(f"{_store_db(lib)}{suffix}").unlink(missing_ok=True)
    with pytest.warns(IndexNotice, match="record store"):
        assert _keys(Library([seeds_copy])) == keys
    assert Library([seeds_copy]).search("entropy")


def test_garbled_parse_rows_heal_when_a_file_is_finished_again(seeds_copy):
    """The parse rows (compressed JSON) are read only when a file's records are finished again:
    a garbled value then counts as damage, and the store rebuilds itself."""
    lib = Library([seeds_copy])
    keys = _keys(lib)
    con = sqlite3.connect(_store_db(lib))
    con.execute("UPDATE parses SET rows = ?", (b"not zlib",))
    con.commit()
    con.close()
    meta = seeds_copy / "metadata.yaml"  # a new override: every file is finished again
    first = next(iter(keys))
    meta.write_text(f"{first}:\n  year: 2024\n", encoding="utf-8")
    with pytest.warns(IndexNotice, match="record store"):
        again = Library([seeds_copy])
        assert _keys(again) == keys
    assert again.get(first).year == 2024


def _garble(lib: Library, sql: str, *params: object) -> None:
    con = sqlite3.connect(_store_db(lib))
    con.execute(sql, params)
    con.commit()
    con.close()


GARBLED_RECORDS = {
    "not JSON": "[1, 2",
    "not an object": "[1, 2]",
    "no abstract": '{"id": "abcdefghij"}',
    "a wrong type": '{"id": "abcdefghij", "abstract": "x", "authors": [1, 2]}',
    "a number": 17,
}


@pytest.mark.parametrize("data", GARBLED_RECORDS.values(), ids=GARBLED_RECORDS.keys())
@pytest.mark.parametrize("command", ["list", "show", "export", "search", "search update"])
def test_a_garbled_record_heals_with_a_note(seeds_copy, command, data):
    """A readable store.db whose record is not a paper's (a hostile edit, a bad sector inside a
    value): every command that reads it rebuilds the store once, with a note, and answers as
    before; ids and keys stay."""
    lib = Library([seeds_copy])
    keys = _keys(lib)
    target = lib.search("entropy")[0].paper.id  # a search view exists, and this is a hit
    args = {
        "list": ["list", "-f", "tsv"],  # `list -f ids` reads no record (test_cli_contract)
        "show": ["show", target, keys[sorted(keys)[0]], "-f", "ids"],
        "export": ["export", "-f", "bibtex"],
        "search": ["search", "entropy", "-f", "jsonl"],
        "search update": ["search", "entropy", "-f", "jsonl"],
    }[command]
    before = run("--corpus", seeds_copy, *args).stdout
    _garble(lib, "UPDATE records SET data = ? WHERE id = ?", data, target)
    if command == "search update":  # the search view catches up: it reads the changed record
        _garble(lib, "UPDATE records SET changed = changed + 1 WHERE id = ?", target)
        _garble(lib, "UPDATE meta SET value = value + 1 WHERE name = 'counter'")
    healed = run("--corpus", seeds_copy, *args)
    assert "record store" in healed.stderr and "rebuilding" in healed.stderr
    assert healed.stdout == before
    assert _keys(Library([seeds_copy])) == keys
    assert run("--corpus", seeds_copy, *args).stderr == ""  # healed for good


def test_a_broken_page_of_the_removed_table_heals(seeds_copy):
    """Damage the search view's catching up meets first (the ids removed since it was built)."""
    lib = Library([seeds_copy])
    lib.search("entropy")
    smash_page(_store_db(lib), "removed")
    first = sorted(seeds_copy.glob("*.txt"))[0]
    _write(first, first.read_text(encoding="utf-8") + "\n" + _abstract("ZebrafishRL") + "\n")
    healed = run("--corpus", seeds_copy, "search", "zebrafishrl", "-f", "ids")
    assert "record store" in healed.stderr and len(healed.stdout.split()) == 1
    assert run("--corpus", seeds_copy, "search", "zebrafishrl", "-f", "ids").stderr == ""


def _real_error(code: str) -> sqlite3.DatabaseError:
    """An error as SQLite itself raises it (with its error code): a full disk, or a file that
    cannot be written."""
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE t (x)")
    if code == "full":
        con.execute(f"PRAGMA max_page_count = {con.execute('PRAGMA page_count').fetchone()[0]}")
        statement = "INSERT INTO t VALUES (zeroblob(100000))"
    else:
        con.execute("PRAGMA query_only = ON")
        statement = "INSERT INTO t VALUES (1)"
    try:
        con.execute(statement)
    except sqlite3.DatabaseError as error:
        return error
    raise AssertionError("SQLite wrote")


@pytest.mark.parametrize("code", ["full", "read-only"])
def test_an_error_that_is_not_damage_keeps_the_store(seeds_copy, recwarn, monkeypatch, code):
    """A full disk or a read-only file, met while healing or while opening the store, is no
    reason to throw the store (and its vectors) away: the open path itself is exercised."""
    import rlpapers.store as store_module

    lib = Library([seeds_copy])
    assert lib.papers
    instance = lib.store.counter[0]
    lib.store.heal(_real_error(code))
    assert lib.store.counter[0] == instance
    lib.close()
    real_open = store_module._open_store
    failing = iter([_real_error(code)])

    def open_once(path):
        error = next(failing, None)
        if error is not None:
            raise error
        return real_open(path)

    monkeypatch.setattr(store_module, "_open_store", open_once)
    result = run("--corpus", seeds_copy, "list", "-f", "ids", code=2)
    assert "cannot open the record store" in result.stderr
    assert "rebuilding" not in result.stderr
    monkeypatch.setattr(store_module, "_open_store", real_open)
    with Library([seeds_copy]) as again:
        assert again.store.counter[0] == instance
    assert not [w for w in recwarn if issubclass(w.category, IndexNotice)]


def test_a_damaged_ledger_met_in_a_refresh_is_reported_and_the_store_kept(seeds_copy, isolated):
    lib = Library([seeds_copy])
    instance = (lib.papers, lib.store.counter[0])[1]
    ledger = isolated / "data" / "ledger.db"
    smash_page(ledger, "sqlite_autoindex_ids_1")
    first = sorted(seeds_copy.glob("*.txt"))[0]
    _write(first, first.read_text(encoding="utf-8") + "\n" + _abstract("ZebrafishRL") + "\n")
    result = run("--corpus", seeds_copy, "list", "-f", "ids", code=2)
    assert "identity ledger" in result.stderr and "record store" not in result.stderr
    assert Library([seeds_copy]).store._meta("instance") == instance


def test_a_stream_open_while_another_read_heals_goes_on(seeds_copy):
    """A reader that heals the store closes the connection a stream of the same Library is
    reading: the stream reads the rebuilt store, without healing it a second time."""
    lib = Library([seeds_copy])
    ids = [p.id for p in lib.store.papers()]
    _garble(lib, "UPDATE records SET data = '[1' WHERE id = ?", ids[-1])  # the stream's last
    stream = lib.store.papers()
    head = [next(stream).id for _ in range(3)]
    with pytest.warns(IndexNotice, match="record store") as notes:
        assert set(lib.store.fetch(ids)) == set(ids)
        rest = [p.id for p in stream]
    assert head + rest == ids
    assert len([n for n in notes if "record store" in str(n.message)]) == 1


def test_a_broken_page_of_records_heals(seeds_copy):
    """A page of the records table overwritten (a bad sector): opening works, reading fails;
    the store is rebuilt once, with a note, and the next run reads it quietly."""
    lib = Library([seeds_copy])
    keys = _keys(lib)
    before = run("--corpus", seeds_copy, "export", "-f", "bibtex").stdout
    smash_page(_store_db(lib), "records")
    healed = run("--corpus", seeds_copy, "export", "-f", "bibtex")
    assert "record store" in healed.stderr and "rebuilding" in healed.stderr
    assert healed.stdout == before
    assert run("--corpus", seeds_copy, "list", "-f", "ids").stderr == ""
    assert _keys(Library([seeds_copy])) == keys


def test_a_stream_healed_midway_gives_each_record_once(seeds_copy):
    """A long-lived Library reads a store found garbled after a corpus file changed: the
    rebuilt store's stream goes on without repeating or losing a record."""
    lib = Library([seeds_copy])
    ids = [p.id for p in lib.store.papers()]  # fresh for this Library from now on
    _garble(lib, "UPDATE records SET data = '[1' WHERE id = ?", ids[len(ids) // 2])
    first = sorted(seeds_copy.glob("*.txt"))[0]
    head, _, rest = first.read_text(encoding="utf-8").partition("\n\n")
    _write(first, f"{head}\n\n{_abstract('ZebrafishRL for curious swimmers')}\n\n{rest}")
    with pytest.warns(IndexNotice, match="record store"):
        streamed = [p.id for p in lib.store.papers()]
    assert len(streamed) == len(set(streamed)) == len(ids) + 1
    assert set(ids) < set(streamed)


def test_many_processes_heal_a_garbled_store_once(seeds_copy, isolated):
    lib = Library([seeds_copy])
    lib.search("entropy")
    _garble(lib, "UPDATE records SET data = '[1' WHERE rowid = 3")
    env = {**os.environ, "RLPAPERS_INDEX_DIR": str(isolated / "index")}
    env["RLPAPERS_DATA_DIR"] = str(isolated / "data")
    # tsv: the record is read (``list -f ids`` reads the ids alone)
    command = [sys.executable, "-m", "rlpapers", "--corpus", str(seeds_copy), "list", "-f", "tsv"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)]
    runs += [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(5)
    ]
    outputs = [(p.wait(timeout=120), *p.communicate()) for p in runs]
    assert all(code == 0 and len(out.splitlines()) == 40 for code, out, _ in outputs), [
        (code, len(out.splitlines()), err.decode()[-400:]) for code, out, err in outputs
    ]
    notes = sum(err.decode().count("rebuilding") for _, _, err in outputs)
    assert notes == 1


@pytest.mark.parametrize(
    "garbled",
    ['{"entropy": 3}', zlib.compress(b'{"entropy": "many"}'), zlib.compress(b"[1]"), b"\x78\x9c"],
    ids=["json-text", "a-count-no-number", "no-object", "cut-short"],
)
def test_a_garbled_vocabulary_heals(seeds_copy, garbled):
    lib = Library([seeds_copy])
    suggestion = lib.suggest("entropyy")
    _garble(lib, "UPDATE parses SET vocab = ?", garbled)
    with pytest.warns(IndexNotice, match="record store"):
        assert Library([seeds_copy]).suggest("entropyy") == suggestion


def test_garbled_parse_ids_heal_on_the_next_refresh(seeds_copy):
    lib = Library([seeds_copy])
    keys = _keys(lib)
    _garble(lib, "UPDATE parses SET ids = ?, bases = ?", '{"x": 1}', "[3]")
    meta = seeds_copy / "metadata.yaml"  # a change: the refresh reads every file's parse ids
    meta.write_text(f"{next(iter(keys))}:\n  year: 2024\n", encoding="utf-8")
    with pytest.warns(IndexNotice, match="record store"):
        assert _keys(Library([seeds_copy])) == keys


def test_a_database_that_is_not_ours_is_rebuilt(seeds_copy):
    lib = Library([seeds_copy])
    keys = _keys(lib)
    path = _store_db(lib)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE records (x)")
    con.commit()
    con.close()
    with pytest.warns(IndexNotice, match="rebuilding"):
        assert _keys(Library([seeds_copy])) == keys


def test_a_damaged_ledger_is_reported_never_replaced(seeds_copy, isolated):
    with Library([seeds_copy]) as lib:
        assert lib.papers
    ledger = isolated / "data" / "ledger.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    ledger.write_bytes(b"not a database at all " * 100)
    shutil.rmtree(isolated / "index")
    with pytest.raises(LedgerError, match="identity ledger .* is damaged"):
        assert Library([seeds_copy]).papers
    result = run("--corpus", seeds_copy, "list", code=2)
    assert "ledger" in result.stderr and result.stderr.count("\n") == 1
    assert ledger.read_bytes().startswith(b"not a database")


GARBLED_LEDGER = {
    "a key that is bytes": "UPDATE papers SET key = X'41' WHERE rowid = 1",
    "a key that is no citation key": "UPDATE papers SET key = 'a b}' WHERE rowid = 1",
    "an id that is bytes": "UPDATE ids SET id = X'00ff' WHERE rowid = 2",
    "an empty id": "UPDATE ids SET id = '' WHERE rowid = 2",
    "a paper's id garbled (its content ids name an id no paper has)": (
        "UPDATE papers SET id = 'zzzzzzzzzz' WHERE rowid = 1"
    ),
    "a paper's row gone (its content ids left)": "DELETE FROM papers WHERE rowid = 1",
}


@pytest.mark.parametrize("sql", GARBLED_LEDGER.values(), ids=GARBLED_LEDGER.keys())
def test_a_garbled_value_in_the_ledger_is_reported_never_used(seeds_copy, isolated, sql):
    """A readable ledger holding a value it never wrote: exit 2 naming the ledger, the ledger
    left as it is, and nothing written from it (it was exit 70, or a broken BibTeX key)."""
    assert Library([seeds_copy]).papers
    ledger = isolated / "data" / "ledger.db"
    con = sqlite3.connect(ledger)
    con.execute(sql)
    con.commit()
    before = list(con.iterdump())
    shutil.rmtree(isolated / "index")  # the records are made again from the ledger
    result = run("--corpus", seeds_copy, "export", "-f", "bibtex", code=2)
    assert result.stdout == ""
    assert "identity ledger" in result.stderr and "damaged" in result.stderr
    assert result.stderr.count("\n") == 1
    assert list(con.iterdump()) == before  # every row as it was
    con.close()


# --- the search view heals -----------------------------------------------------------------------


def _view(lib: Library) -> Path:
    view = lib.settings.index_dir / "view"
    return view / (view / "CURRENT").read_text().strip()


@pytest.mark.parametrize("damage", ["truncate", "garble", "delete"])
def test_any_damage_to_a_segment_heals_on_the_next_search(damage):
    lib = Library()
    expected = [h.paper.id for h in lib.search("entropy", limit=None)]
    segments = [p for p in _view(lib).iterdir() if p.suffix == ".seg"]
    assert segments
    for seg in segments:
        if damage == "truncate":
            seg.write_bytes(seg.read_bytes()[: seg.stat().st_size // 3])
        elif damage == "garble":
            seg.write_bytes(b"\x00garbage" * 1000)
        else:
            seg.unlink()
    with pytest.warns(IndexNotice):
        assert [h.paper.id for h in Library().search("entropy", limit=None)] == expected
    for command in (["list", "-f", "ids"], ["export", "-f", "ris"], ["index", "--status"]):
        run(*command)


def test_index_status_reports_and_writes_nothing(seeds_copy, isolated):
    result = run("--corpus", seeds_copy, "index", "--status", "-f", "json")
    assert json.loads(result.stdout)["state"] == "missing"
    assert not (isolated / "index").exists() or not any((isolated / "index").rglob("*.db"))
    lib = Library([seeds_copy])
    lib.search("entropy")
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    before = sorted((p, p.stat().st_mtime_ns) for p in (isolated / "index").rglob("*"))
    status = json.loads(run("--corpus", seeds_copy, "index", "--status", "-f", "json").stdout)
    assert status["state"] == "stale" and status["changed_files"]
    assert sorted((p, p.stat().st_mtime_ns) for p in (isolated / "index").rglob("*")) == before
    for seg in _view(lib).glob("*.seg"):
        seg.write_bytes(b"garbage")
    status = json.loads(run("--corpus", seeds_copy, "index", "--status", "-f", "json").stdout)
    assert status["index"]["state"].startswith("damaged")


def test_two_corpora_sharing_an_index_folder_keep_one_index_each(seeds_copy, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    _write(other / "a.txt", f"Topic\n\n{TECRL}")
    first, second = Library([seeds_copy]), Library([other])
    first.search("entropy")
    second.search("entropy")
    built = _view(first)
    assert Library([other]).search("entropy") and _view(Library([seeds_copy])) == built
    assert first.settings.index_dir != second.settings.index_dir


def test_a_full_disk_leaves_no_leftovers_and_serves_the_last_good_index(monkeypatch):
    import errno

    import rlpapers.index.view as view

    lib = Library()
    lib.search("entropy")
    good = _view(lib)
    (good.parent / ".CURRENT.123.tmp").write_bytes(b"left over")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    manifest = good / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(data | {"schema": -1}))  # force a rebuild
    with monkeypatch.context() as patch, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        patch.setattr(view, "_write_all", full)
        assert Library().search("entropy")
    notes = [str(w.message) for w in seen if issubclass(w.category, IndexNotice)]
    assert any("last good index" in note for note in notes), notes  # after "rebuilding it"
    assert sorted(p.name for p in good.parent.glob("gen-*")) == [good.name]
    with pytest.warns(IndexNotice):
        assert Library().search("entropy")
    assert not list(_view(Library()).parent.glob("*.tmp"))
