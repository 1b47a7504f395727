"""Identity: ids and citation keys are given once and never move; the record store heals."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from rlpapers import Library
from rlpapers.errors import IndexNotice, LedgerError, NotFoundError, ParseError, ParseWarning
from rlpapers.keys import GENERIC_WORDS, SAFE_KEY, base_key
from rlpapers.model import Paper

from .conftest import ROOT, SEEDS, run, smash_page

TECRL = (
    "Deep Learning · Reinforcement Learning\n\nYi Zhan, Bo Wang\n\n"
    "We propose TECRL, a trajectory entropy-constrained method for offline agents. "
    "It bounds the entropy of whole trajectories and improves stability on control suites.\n"
)


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = time.time() + 5  # a different mtime even on coarse file systems
    os.utime(path, (stamp, stamp))


def _keys(lib: Library) -> dict[str, str]:
    return {p.id: p.key for p in lib.papers}


def _abstract(words: str, n: int = 40) -> str:
    """A realistic-length abstract: a distinctive opening and shared filler."""
    filler = " ".join(f"word{i}" for i in range(n))
    return f"We propose {words}. {filler}."


# --- the collision story -------------------------------------------------------------------------


def test_an_unrelated_file_never_moves_an_existing_key(seeds_copy, tmp_path):
    reading = tmp_path / "reading.txt"
    reading.write_text("zhan_tecrl\nqerl\n")
    out = tmp_path / "refs.bib"
    run("--corpus", seeds_copy, "export", "--ids", reading, "-o", out)
    before = out.read_text()
    _write(seeds_copy / "zz_new.txt", f"Other topic\n\n{TECRL}")
    run("--corpus", seeds_copy, "show", "zhan_tecrl", "-f", "ids")
    listed = run("--corpus", seeds_copy, "list", "-f", "tsv").stdout
    assert "\tzhan_tecrlb\t" in listed and "\tzhan_tecrl\t" in listed
    run("--corpus", seeds_copy, "export", "--ids", reading, "-o", out, "--force")
    assert out.read_text() == before


def test_export_ids_with_unknown_entries_writes_the_rest_and_exits_1(seeds_copy, tmp_path):
    reading = tmp_path / "reading.txt"
    reading.write_text("zhan_tecrl\nqerll\nqerl\nzhan_tecrl\nnothing_like_it_at_all\n")
    result = run("--corpus", seeds_copy, "export", "--ids", reading, "-f", "ids", code=1)
    assert result.stdout.split() == [
        run("--corpus", seeds_copy, "show", "zhan_tecrl", "-f", "ids").stdout.strip(),
        run("--corpus", seeds_copy, "show", "qerl", "-f", "ids").stdout.strip(),
    ]
    assert "no paper with id or key 'qerll'; did you mean \"qerl\"?" in result.stderr
    assert "'nothing_like_it_at_all'" in result.stderr


def test_many_unknown_entries_are_named_up_to_twenty_then_counted(tmp_path):
    refs = "\n".join(f"nokey{i}" for i in range(25)) + "\nqerl\n"
    result = run("export", "--ids", "-", "-f", "ids", code=1, input=refs)
    assert len(result.stdout.split()) == 1
    assert result.stderr.count("no paper with id or key") == 20
    assert "and 5 more unknown references" in result.stderr


def test_show_names_unknown_references_and_still_shows_the_rest():
    result = run("show", "qerl", "QERL", "nope_nope", "-f", "ids", code=1)
    assert len(result.stdout.split()) == 1  # one paper, asked for twice
    assert "nope_nope" in result.stderr


# --- files come and go ---------------------------------------------------------------------------


def test_reordering_renaming_and_removing_files_keeps_ids_and_keys(seeds_copy, tmp_path):
    lib = Library([seeds_copy])
    keys = _keys(lib)
    first, second = sorted(seeds_copy.glob("*.txt"))
    first.rename(seeds_copy / "zzz_moved.txt")  # renamed, and now read last
    moved = Library([seeds_copy])
    assert _keys(moved) == keys
    (seeds_copy / "zzz_moved.txt").unlink()
    fewer = _keys(Library([seeds_copy]))
    assert fewer and all(keys[pid] == key for pid, key in fewer.items())
    # another corpus arrangement over the same data folder: a single file
    single = _keys(Library([second]))
    assert all(keys[pid] == key for pid, key in single.items())


def test_deleting_the_cache_keeps_keys(seeds_copy, isolated):
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    keys = _keys(Library([seeds_copy]))
    shutil.rmtree(isolated / "index")
    assert _keys(Library([seeds_copy])) == keys


def test_an_edited_abstract_keeps_its_id_and_key_and_both_ids_resolve(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = _abstract("ZebraRL, a method for zebra crossings")
    _write(corpus / "a.txt", f"Topic\n\n{text}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    (zebra,) = [p for p in Library([corpus]).papers if p.name == "ZebraRL"]
    edited = text.replace("zebra crossings", "zebra crosings").replace("word3 ", "")
    _write(corpus / "a.txt", f"Topic\n\n{edited}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    lib = Library([corpus])
    now = lib.get("zebrarl")
    assert (now.id, now.key) == (zebra.id, zebra.key) and "crosings" in now.abstract
    from rlpapers.parse import paper_id

    assert lib.get(paper_id(edited)).id == zebra.id  # the new content id resolves too
    assert lib.get(zebra.id[:5]).id == zebra.id


def test_a_different_paper_in_the_same_place_is_new(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", "Topic\n\nWe propose BarRL, a method for bar. It works.\n")
    bar = Library([corpus]).get("barrl")
    _write(corpus / "a.txt", "Topic\n\nWe propose BazRL, a method for baz. It works.\n")
    lib = Library([corpus])
    assert lib.get("bazrl").id != bar.id
    with pytest.raises(NotFoundError):  # BarRL's key stays BarRL's: it never names BazRL
        lib.get("barrl")


# --- metadata ------------------------------------------------------------------------------------


def test_a_stale_id_in_metadata_still_applies_and_disagreements_warn(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = _abstract("ZebraRL, a method for zebra crossings")
    _write(corpus / "a.txt", f"Topic\n\n{text}\n")
    from rlpapers.parse import paper_id

    old_id = paper_id(text)
    assert Library([corpus]).papers
    _write(corpus / "a.txt", f"Topic\n\n{text.replace('word5', 'word55')}\n")
    _write(corpus / "a.yaml", f"{old_id}:\n  venue: NeurIPS\n")
    assert Library([corpus]).get("zebrarl").venue == "NeurIPS"
    _write(corpus / "metadata.yaml", "zebrarl:\n  venue: ICML\n")
    with pytest.warns(ParseWarning, match=r"sets venue of paper .* but .*a\.yaml:1"):
        assert Library([corpus]).papers


def test_a_metadata_key_held_by_another_paper_is_an_error(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text(
        "zhan_tecrl:\n  year: 2024\nqerl:\n  key: zhan_tecrl\n"
    )
    result = run("--corpus", seeds_copy, "list", code=2)
    assert "metadata.yaml:3" in result.stderr and "zhan_tecrl" in result.stderr
    assert "already belongs to paper" in result.stderr and result.stderr.count("\n") == 1


def test_a_metadata_key_wins_for_its_paper_and_the_old_key_still_resolves(seeds_copy):
    lib = Library([seeds_copy])
    qerl = lib.get("qerl")
    (seeds_copy / "metadata.yaml").write_text("qerl:\n  key: Qerl2025\n")
    lib = Library([seeds_copy])
    assert lib.get("qerl2025").key == "Qerl2025" and lib.get("qerl").id == qerl.id


@pytest.mark.parametrize("key", ["a b", "x}\n@misc{evil,", "k{ey", "per%cent", "", "-lead"])
def test_unsafe_metadata_keys_are_an_error_naming_the_line(seeds_copy, key):
    (seeds_copy / "metadata.yaml").write_text(
        f"pcl:\n  year: 2024\nqerl:\n  key: {json.dumps(key)}\n"
    )
    with pytest.raises(ParseError, match=r"metadata\.yaml:3: key .* is not a safe citation key"):
        assert Library([seeds_copy]).papers


def test_pinned_keys_travel_to_a_fresh_data_folder(seeds_copy, monkeypatch, tmp_path):
    _write(seeds_copy / "zz_new.txt", f"Other\n\n{TECRL}")
    keys = {p.abstract: p.key for p in Library([seeds_copy]).papers}
    run("--corpus", seeds_copy, "keys", "--pin")
    pinned = (seeds_copy / "keys.yaml").read_text()
    assert "zhan_tecrlb" in pinned
    # the other machine: a fresh data folder, the files read in another order
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(tmp_path / "elsewhere-cache"))
    (seeds_copy / "zz_new.txt").rename(seeds_copy / "aa_new.txt")
    assert {p.abstract: p.key for p in Library([seeds_copy]).papers} == keys
    # pinning again keeps the file as it was, and the bundled seeds are never written
    run("--corpus", seeds_copy, "keys", "--pin")
    assert (seeds_copy / "keys.yaml").read_text() == pinned
    run("keys", "--pin")
    assert not (SEEDS / "keys.yaml").exists()


# --- damage and planted files --------------------------------------------------------------------


def _store_db(lib: Library) -> Path:
    return lib.settings.index_dir / "store.db"


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
        "list": ["list", "-f", "ids"],
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
    command = [sys.executable, "-m", "rlpapers", "--corpus", str(seeds_copy), "list", "-f", "ids"]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)]
    runs += [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(5)
    ]
    outputs = [(p.wait(timeout=120), *p.communicate()) for p in runs]
    assert all(code == 0 and len(out.split()) == 40 for code, out, _ in outputs)
    notes = sum(err.decode().count("rebuilding") for _, _, err in outputs)
    assert notes == 1


def test_a_garbled_vocabulary_heals(seeds_copy):
    lib = Library([seeds_copy])
    suggestion = lib.suggest("entropyy")
    _garble(lib, "UPDATE parses SET vocab = ?", '{"entropy": "many"}')
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


# --- keys ----------------------------------------------------------------------------------------


def test_no_bundled_key_is_a_generic_word():
    papers = Library([SEEDS]).papers
    for paper in papers:
        assert SAFE_KEY.fullmatch(paper.key)
        assert not {paper.key, *paper.key.split("_")} & GENERIC_WORDS, paper.key


def test_particles_stay_in_surnames():
    van = Paper(id="x", abstract="a", name="SegNet", authors=("Luc van Gool",))
    dela = Paper(id="y", abstract="a", name="Foo", authors=("Juan de la Cruz",))
    assert base_key(van) == "vangool_segnet" and base_key(dela) == "delacruz_foo"
    from rlpapers.exporters.csljson import item

    assert item(van)["author"] == [{"family": "van Gool", "given": "Luc"}]


def test_titles_never_give_generic_keys():
    from rlpapers.keys import title_word

    assert (
        title_word("Objective for policy gradient methods that enforces refinement") == "refinement"
    )
    assert title_word("Efficient dataset distillation algorithm") == "distillation"
    assert title_word("Contrastive policy learning") == "contrastivepolicy"


# --- processes -----------------------------------------------------------------------------------

WHOOSH_FREE = [
    ["list", "-f", "ids"],
    ["show", "qerl", "-f", "json"],
    ["export", "-f", "bibtex"],
    ["export", "--ids", "-", "-f", "bibtex"],
    ["keys"],
]


def test_list_show_and_export_never_import_whoosh():
    code = (
        "import sys, io\n"
        "from rlpapers.cli import main\n"
        "sys.stdin = io.StringIO('qerl\\n')\n"
        "sys.argv = ['rlpapers', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "assert not [m for m in sys.modules if m.startswith('whoosh')], 'whoosh imported'\n"
    )
    for argv in WHOOSH_FREE:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (argv, done.stderr)


def test_eight_processes_refreshing_one_store_agree(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    for i in range(3):
        _write(corpus / f"extra{i}.txt", f"Topic\n\n{_abstract(f'Extra{i}RL, a method', 20 + i)}\n")
    env = dict(os.environ, NO_COLOR="1")
    argv = [sys.executable, "-m", "rlpapers", "--corpus", str(corpus), "list", "-f", "tsv"]
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    outputs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1
    assert len(outputs[0][0].splitlines()) == 43
    assert not any("Traceback" in err for _, err in outputs)


def test_the_benchmarks_folder_is_importable():
    assert (ROOT / "benchmarks" / "bench.py").exists()


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


def test_one_lookup_rule_for_the_library_and_load_corpus():
    from rlpapers import load_corpus

    lib, corpus = Library(), load_corpus()
    for ref in ("QERL", "qerl", lib.get("qerl").id.upper(), lib.get("qerl").id[:5]):
        assert lib.get(ref) == corpus.get(ref)
    with pytest.raises(NotFoundError, match='did you mean "qerl"'):
        corpus.get("qerll")


#: The end of a ``python -c`` script that runs the CLI on the script's own arguments.
RUN_MAIN = (
    "import sys\nfrom rlpapers.cli import main\nsys.argv = ['rlpapers', *sys.argv[1:]]\nmain()\n"
)


#: Ctrl-C as the parallel writer starts to commit (most of a build: its workers finish, their
#: parts merge), sent by the process to its own group at that moment.
CTRL_C_AT_COMMIT = """
import os, signal, whoosh.multiproc as mp
commit = mp.MpWriter.commit
def interrupted(self, *args, **kwargs):
    os.killpg(os.getpgrp(), signal.SIGINT)
    return commit(self, *args, **kwargs)
mp.MpWriter.commit = interrupted
"""


@pytest.mark.parametrize("moment", ["adding", "committing"])
def test_ctrl_c_during_a_multiprocess_build_is_one_line_and_exit_130(tmp_path, moment):
    import signal

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    blocks = [
        f"We propose M{i}RL, a way to learn policy {i} with entropy. It works on task {i}."
        for i in range(3000)
    ]
    (corpus / "a.txt").write_text("Topic\n\n" + "\n\n".join(blocks) + "\n")
    script = "import rlpapers.index.view as view\nview.PARALLEL_FROM = 1\n" + RUN_MAIN
    argv = [sys.executable, "-c", script, "--corpus", str(corpus), "search", "policy", "-f", "ids"]
    subprocess.run(argv[:-4] + ["list", "-f", "ids"], check=True, capture_output=True, timeout=120)
    import psutil

    run = [*argv[:2], (CTRL_C_AT_COMMIT if moment == "committing" else "") + script, *argv[3:]]
    proc = subprocess.Popen(
        run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    if moment == "adding":
        deadline = time.time() + 180
        while time.time() < deadline and not psutil.Process(proc.pid).children():
            time.sleep(0.05)
        assert psutil.Process(proc.pid).children(), "the writer never started its workers"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130 and err == "note: interrupted\n", err
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.split()) == 3000  # a pipe gets every hit


def test_a_copied_abstract_follows_an_edit_to_any_file_holding_a_copy(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shared = _abstract("YakRL, a method for yaks")
    _write(corpus / "a.txt", f"Topic\n\n{shared}\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    _write(corpus / "b.txt", f"Topic\n\nDeep Learning · RL\n\nAda Lovelace\n\n{shared}\n")
    _write(corpus / "c.txt", f"Topic\n\n{_abstract('EmuRL for emus', 20)}\n")
    lib = Library([corpus])
    yak = lib.get("yakrl")
    assert yak.authors == ("Ada Lovelace",) and len(yak.sources) == 2

    def changed() -> int:
        with sqlite3.connect(_store_db(lib)) as con:
            return con.execute("SELECT changed FROM records WHERE id = ?", (yak.id,)).fetchone()[0]

    before = changed()
    _write(corpus / "c.txt", f"Topic\n\n{_abstract('EmuRL for emus and rheas', 20)}\n")
    assert Library([corpus]).get("yakrl") == yak and changed() == before  # not rewritten
    _write(corpus / "b.txt", f"Topic\n\nDeep Learning · RL\n\nAlan Turing\n\n{shared}\n")
    assert Library([corpus]).get("yakrl").authors == ("Alan Turing",)  # a.txt is unchanged
    _write(corpus / "a.txt", f"Topic\n\n{_abstract('OkapiRL for okapis', 30)}\n")
    assert [s.split(":")[0] for s in Library([corpus]).get("yakrl").sources] == ["b.txt"]


def test_records_after_each_refresh_equal_a_store_built_from_scratch(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shared = _abstract("YakRL, a method for yaks")
    okapi, emu, gnu = (_abstract(f"{n}RL for {n.lower()}s", 25) for n in ("Okapi", "Emu", "Gnu"))
    a_text = f"Topic A\n\n{shared}\n\n{okapi}\n"
    b_text = f"Topic B\n\nDeep Learning · RL\n\nAda Lovelace\n\n{shared}\n\n{emu}\n"
    _write(corpus / "a.txt", a_text)
    _write(corpus / "b.txt", b_text)
    edits = [
        ("a.txt", a_text + f"\n{gnu}\n"),  # a paper appended
        ("a.txt", f"Topic A\n\n{gnu}\n\n{shared}\n\n{okapi}\n"),  # moved to the top
        ("b.txt", b_text.replace("Ada Lovelace", "Alan Turing")),  # a copy's authors
        ("a.yaml", "okapirl:\n  title: Okapis, a study\n"),  # metadata
        ("b.txt", f"Topic B\n\n{emu}\n"),  # a copy removed
    ]
    live = tmp_path / "live"
    assert Library([corpus], index_dir=live).papers
    for n, (name, text) in enumerate(edits):
        _write(corpus / name, text)
        refreshed = Library([corpus], index_dir=live).papers
        scratch = Library([corpus], index_dir=tmp_path / f"scratch{n}").papers
        assert [p.to_dict() for p in refreshed] == [p.to_dict() for p in scratch], name


def test_reordered_files_list_a_copied_abstract_in_their_new_order(tmp_path):
    shared = _abstract("YakRL, a method for yaks")
    files = []
    for name in ("a", "b", "c"):
        own = _abstract(f"{name.upper()}onlyRL for {name}s", 20)
        _write(tmp_path / f"{name}.txt", f"Topic\n\n{shared}\n\n{own}\n")
        files.append(tmp_path / f"{name}.txt")
    live = tmp_path / "live"
    assert Library(files, index_dir=live).get("yakrl").sources[1].startswith("b.txt")
    reordered = [files[0], files[2], files[1]]
    refreshed = Library(reordered, index_dir=live).get("yakrl")
    scratch = Library(reordered, index_dir=tmp_path / "scratch").get("yakrl")
    assert refreshed.sources == scratch.sources and refreshed.sources[1].startswith("c.txt")


def test_ledger_lookups_agree_whether_they_probe_or_scan(tmp_path):
    from rlpapers.store.db import transaction
    from rlpapers.store.ledger import Ledger

    ledger = Ledger(tmp_path)
    with transaction(ledger.con):
        for n in range(60):
            ledger.add_paper(f"p{n:03d}", [f"c{n:03d}"])
            ledger.give_key(f"p{n:03d}", f"key{n}")
    few = ["c001", "c007", "nope"]  # probed one by one
    many = [f"c{n:03d}" for n in range(60)] + ["nope"]  # found in one pass
    assert ledger.ids_of(few) == {"c001": "p001", "c007": "p007"}
    assert ledger.ids_of(many) == {f"c{n:03d}": f"p{n:03d}" for n in range(60)}
    assert ledger.keys_of(["p003", "zz"]) == {"p003": "key3"}
    assert ledger.keys_of([f"p{n:03d}" for n in range(60)]) == {
        f"p{n:03d}": f"key{n}" for n in range(60)
    }


def test_an_abstract_and_its_edited_version_kept_side_by_side_are_two_stable_papers(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    first = _abstract("YakRL, a method for yaks")
    edited = first.replace("word3 ", "")  # a small edit: the same paper
    _write(corpus / "a.txt", f"Topic\n\n{first}\n")
    (yak,) = Library([corpus]).papers
    _write(corpus / "a.txt", f"Topic\n\n{edited}\n")
    assert [(p.id, p.key) for p in Library([corpus]).papers] == [(yak.id, yak.key)]
    _write(corpus / "a.txt", f"Topic\n\n{first}\n\n{edited}\n")  # both versions, kept
    both = [(p.id, p.key) for p in Library([corpus]).papers]
    # the paper keeps the text it last had (the edited one), wherever the other one stands
    assert both[1] == (yak.id, yak.key) and len(set(both)) == 2
    _write(corpus / "a.txt", f"Topic\n\n{first}\n\n{edited}\n\n")  # touched: a refresh
    assert [(p.id, p.key) for p in Library([corpus]).papers] == both
    scratch = Library([corpus], index_dir=tmp_path / "scratch").papers  # the same ledger
    assert [(p.id, p.key) for p in scratch] == both


def test_a_parse_on_two_processes_stores_what_one_process_stores(tmp_path, monkeypatch):
    """A big refresh parses on a process pool, and its workers send back encoded parses, not
    rows; forced here on a small corpus, it stores the records the one-process path stores,
    after a first build and after an edit."""
    from concurrent.futures import ProcessPoolExecutor

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    extra = f"Extra\n\n{_abstract('PoolRL, a method for pools')}\n"
    _write(corpus / "extra.txt", extra)
    alone = Library([corpus], index_dir=tmp_path / "alone").papers

    submitted = []
    submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(
        ProcessPoolExecutor, "submit", lambda pool, *a: submitted.append(a) or submit(pool, *a)
    )
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("rlpapers.store.parsing.PARALLEL_BYTES", 0)
    monkeypatch.setattr("rlpapers.store.refresh.KEEP_PARSED_BYTES", 0)
    pooled = Library([corpus], index_dir=tmp_path / "pooled").papers
    assert len(submitted) == 3  # the two seed files and extra.txt, each parsed by a worker
    assert [p.to_dict() for p in pooled] == [p.to_dict() for p in alone]

    _write(corpus / "extra.txt", extra + f"\n{_abstract('GnuRL, a method for gnus')}\n")
    refreshed = Library([corpus], index_dir=tmp_path / "pooled").papers
    scratch = Library([corpus], index_dir=tmp_path / "scratch").papers
    assert [p.to_dict() for p in refreshed] == [p.to_dict() for p in scratch]
    assert len(refreshed) == len(alone) + 1


#: A parse worker busy with a file for half a minute (a large file on a slow disk).
SLOW_PARSE = (
    """
import sys, time
import rlpapers.store.parsing as parsing
parsing.PARALLEL_BYTES = 0
real = parsing.parse_one
def slow(job):
    time.sleep(30)
    return real(job)
parsing.parse_one = slow
"""
    + RUN_MAIN
)


def _slow_parse(tmp_path: Path) -> tuple[subprocess.Popen[str], list[Any]]:
    """A first build parsing on two processes, and its two workers, half a minute into their
    files."""
    import psutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    for name in ("c", "d", "e"):  # more files than workers: some wait their turn
        _write(corpus / f"{name}.txt", f"Topic\n\n{_abstract(f'{name.upper()}RL, a method')}\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_PARSE, "--corpus", str(corpus), "list", "-f", "ids"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(psutil.Process(proc.pid).children()) < 2:
        time.sleep(0.05)
    workers = psutil.Process(proc.pid).children()
    assert len(workers) == 2, "the parse never started its workers"
    return proc, workers


@pytest.mark.parametrize(
    ("stop", "code", "message"),
    [
        ("ctrl-c", 130, "note: interrupted\n"),
        ("a worker killed", 2, "error: a process parsing the corpus ended abruptly"),
    ],
)
def test_a_parse_on_two_processes_stops_at_once(tmp_path, stop, code, message):
    """Ctrl-C (the whole process group, as a terminal sends it) or a worker killed (for
    memory) ends the run at once with one line, not after the files the workers are on."""
    import signal

    import psutil

    proc, workers = _slow_parse(tmp_path)
    started = time.monotonic()
    if stop == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        workers[0].kill()
    err = proc.communicate(timeout=60)[1]
    assert time.monotonic() - started < 10  # not the half minute the workers had left
    assert proc.returncode == code and err.startswith(message) and err.count("\n") == 1, err
    assert not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
