"""Identity lives in the ledger alone: what tells an edit from a new paper, which of two claims
keeps a paper, and how the ledger is made, upgraded and reported when it cannot be used."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
import zlib
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import LedgerError, LedgerUnwritable
from rlpapers.store import identity
from rlpapers.store.ledger import VERSION, Ledger

from .conftest import DATA, SEEDS, run

FIXTURE = DATA / "ledger-v1"  # a ledger and record store written before fingerprints
ORIGINAL = (
    "We study foo reinforcement learning with sparse rewards and propose a method that learns "
    "quickly from demonstrations across many benchmark tasks with strong empirical results."
)
EDITED = ORIGINAL.replace("with strong", "with very strong")


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stamp = time.time() + 5  # a different mtime even on coarse file systems
    os.utime(path, (stamp, stamp))


def _paper(abstract: str, author: str = "John Smith") -> str:
    return f"Papers\n\n{author}\n\n{abstract}\n"


def _keys(corpus: Path, **options: object) -> dict[str, str]:
    """Abstract -> key, for every paper of ``corpus``."""
    with Library([corpus], **options) as lib:  # type: ignore[arg-type]
        return {p.abstract: p.key for p in lib.papers}


# --- fingerprints ------------------------------------------------------------------------------


def test_a_fingerprint_is_the_smallest_word_hashes_and_fixed_by_the_crc32_standard():
    print_ = identity.fingerprint("The Yak yak herds; of a yak")
    words = sorted(zlib.crc32(w.encode()) for w in {"the", "yak", "herds"})
    assert identity.hashes(print_) == frozenset(words)
    assert print_ == b"".join(w.to_bytes(4, "little") for w in words)


def test_a_fingerprint_is_bounded_and_its_overlap_estimated():
    many = " ".join(f"word{i}" for i in range(5000))
    print_ = identity.fingerprint(many)
    assert len(print_) == 4 * identity.PRINT_WORDS
    half = " ".join(f"word{i}" for i in range(2500))
    estimate = identity.similarity(
        identity.hashes(print_), identity.hashes(identity.fingerprint(half))
    )
    assert 0.35 < estimate < 0.65  # the true overlap is 0.5


def test_short_texts_compare_exactly():
    a = identity.hashes(identity.fingerprint("alpha beta gamma delta"))
    b = identity.hashes(identity.fingerprint("alpha beta gamma epsilon"))
    assert identity.similarity(a, b) == pytest.approx(3 / 5)


# --- edits are matched from the ledger, never from rebuildable state ---------------------------


def test_an_edit_keeps_its_key_after_the_index_folder_was_cleared(tmp_path, isolated):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    (before,) = _keys(corpus).values()
    _write(corpus / "a.txt", _paper(EDITED))
    shutil.rmtree(isolated / "index")  # documented as rebuildable
    assert _keys(corpus) == {EDITED: before}


def test_an_edit_keeps_its_key_across_runs_over_other_corpora(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    _write(corpus / "b.txt", _paper(SEEDS.joinpath("000_eda7530d3ab384ed.txt").read_text()[4:]))
    keys = _keys(corpus)
    _write(corpus / "a.txt", _paper(EDITED))
    assert _keys(corpus / "b.txt") == {k: v for k, v in keys.items() if k != ORIGINAL}
    assert _keys(corpus / "a.txt") == {EDITED: keys[ORIGINAL]}
    assert _keys(corpus) == {
        **{k: v for k, v in keys.items() if k != ORIGINAL},
        EDITED: keys[ORIGINAL],
    }


@pytest.mark.parametrize("pinned", [False, True], ids=["unpinned", "pinned"])
def test_renaming_a_file_moves_no_key(tmp_path, pinned):
    """An abstract and its edited version, kept as two papers: renaming the file that holds the
    original (so that it comes first) swapped their keys."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "b.txt", _paper(ORIGINAL))
    _keys(corpus)
    _write(corpus / "b.txt", _paper(EDITED))
    _keys(corpus)
    _write(corpus / "c.txt", _paper(ORIGINAL))
    before = _keys(corpus)
    assert len(set(before.values())) == 2
    if pinned:
        run("--corpus", corpus, "keys", "--pin")
    (corpus / "c.txt").rename(corpus / "a.txt")
    assert _keys(corpus) == before
    shutil.rmtree(tmp_path / "corpus" / "keys.yaml", ignore_errors=True)
    assert _keys(corpus, index_dir=tmp_path / "elsewhere") == before


def test_a_split_version_keeps_its_own_key_when_the_other_goes(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    _keys(corpus)
    _write(corpus / "a.txt", _paper(EDITED))
    _keys(corpus)
    _write(corpus / "a.txt", _paper(EDITED) + "\n" + _paper(ORIGINAL)[7:])
    both = _keys(corpus)
    _write(corpus / "a.txt", _paper(ORIGINAL))  # the edited version deleted
    assert _keys(corpus) == {ORIGINAL: both[ORIGINAL]}


# --- a ledger written before fingerprints -----------------------------------------------------


def _fixture(tmp_path: Path, with_store: bool) -> tuple[Path, dict[str, str], dict[str, str]]:
    """The fixture's corpus (the seeds and extra.txt) with its ledger, and its record store if
    asked; returns the corpus, the index folder to use, and id -> key as the old code gave."""
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    shutil.copy(FIXTURE / "corpus" / "extra.txt", corpus / "extra.txt")
    data = Path(os.environ["RLPAPERS_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE / "ledger.db", data / "ledger.db")
    index = tmp_path / "index"
    if with_store:
        with Library([corpus], index_dir=index) as lib:
            root = lib.store.root
        root.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / "store.db", root / "store.db")
        # the store was written on another machine: its records name this corpus's files
        con = sqlite3.connect(root / "store.db")
        for (file,) in con.execute("SELECT DISTINCT file FROM records").fetchall():
            here = str((corpus / Path(file).name).resolve())
            con.execute("UPDATE records SET file = ? WHERE file = ?", (here, file))
        con.commit()
        con.close()
    expected = dict(line.split("\t") for line in (FIXTURE / "keys.tsv").read_text().splitlines())
    return corpus, {"index_dir": index}, expected


def _ids(corpus: Path, options: dict[str, object]) -> dict[str, str]:
    with Library([corpus], **options) as lib:  # type: ignore[arg-type]
        return {p.id: p.key for p in lib.papers}


@pytest.mark.parametrize("with_store", [False, True], ids=["ledger-only", "with-store"])
def test_every_paper_of_an_old_ledger_keeps_its_key(tmp_path, with_store):
    corpus, options, expected = _fixture(tmp_path, with_store)
    assert _ids(corpus, options) == expected
    extra = corpus / "extra.txt"
    blocks = extra.read_text(encoding="utf-8").split("\n\n")
    # the edited version first, then the original: the order no longer decides
    _write(extra, "\n\n".join([blocks[0], *blocks[3:5], *blocks[1:3], *blocks[5:]]))
    assert _ids(corpus, options) == expected


def test_an_old_ledger_learns_from_its_store_and_keeps_an_edit_after_a_cleared_cache(tmp_path):
    corpus, options, expected = _fixture(tmp_path, with_store=True)
    extra = corpus / "extra.txt"
    text = extra.read_text(encoding="utf-8")
    _write(extra, text.replace("across ten farms", "across twelve farms"))
    assert _ids(corpus, options) == expected  # the store still held the old text
    shutil.rmtree(options["index_dir"])  # type: ignore[arg-type]
    _write(extra, text.replace("across ten farms", "across a dozen farms"))
    assert _ids(corpus, options) == expected  # now only the ledger knows it


def test_an_old_ledger_is_upgraded_in_place_and_keeps_its_rows(tmp_path):
    shutil.copy(FIXTURE / "ledger.db", tmp_path / "ledger.db")
    before = (
        sqlite3.connect(tmp_path / "ledger.db").execute("SELECT id, key FROM papers").fetchall()
    )
    ledger = Ledger(tmp_path)
    assert ledger.con.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert ledger.con.execute("SELECT id, key FROM papers").fetchall() == before
    ledger.close()


# --- how a ledger is made, and what its errors say ----------------------------------------------


def test_an_empty_ledger_file_is_damage_not_a_new_ledger(seeds_copy, isolated):
    data = isolated / "data"
    data.mkdir(parents=True)
    (data / "ledger.db").write_bytes(b"")
    result = run("--corpus", seeds_copy, "list", "-f", "ids", code=2)
    assert "identity ledger" in result.stderr and "empty" in result.stderr
    assert result.stderr.count("\n") == 1 and result.stdout == ""
    assert sorted(p.name for p in data.iterdir()) == ["ledger.db"]
    assert (data / "ledger.db").stat().st_size == 0


def test_a_journal_without_its_ledger_is_damage(seeds_copy, isolated):
    data = isolated / "data"
    data.mkdir(parents=True)
    (data / "ledger.db-wal").write_bytes(b"x" * 100)
    result = run("--corpus", seeds_copy, "list", "-f", "ids", code=2)
    assert "ledger.db is missing" in result.stderr
    assert not (data / "ledger.db").exists()


def test_a_kill_while_the_ledger_is_made_leaves_no_ledger_at_all(tmp_path, monkeypatch):
    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "link", killed)
    with pytest.raises(KeyboardInterrupt):
        Ledger(tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()
    Ledger(tmp_path).close()
    assert (tmp_path / "ledger.db").stat().st_size > 0


def test_a_ledger_made_meanwhile_by_another_process_is_kept(tmp_path, monkeypatch):
    first = Ledger(tmp_path)
    with first.transaction():
        first.add_paper("abcdefghij", [])
        first.give_key("abcdefghij", "mine")
    first.close()
    real_exists = Path.exists
    monkeypatch.setattr(
        Path, "exists", lambda p: False if p.name == "ledger.db" else real_exists(p)
    )
    second = Ledger(tmp_path)  # it saw no ledger, made one, and found one in place
    monkeypatch.undo()
    assert second.keys_of(["abcdefghij"]) == {"abcdefghij": "mine"}
    second.close()


def _written(ledger: Ledger) -> None:
    with ledger.transaction():
        ledger.add_paper("abcdefghij", [])


def test_a_full_disk_is_named_as_such_not_as_damage(tmp_path):
    ledger = Ledger(tmp_path)
    pages = ledger.con.execute("PRAGMA page_count").fetchone()[0]
    ledger.con.execute(f"PRAGMA max_page_count = {pages}")
    with ledger.transaction():
        ledger.con.execute("INSERT INTO papers (id, key, created) VALUES ('x', '', '')")
    with pytest.raises(LedgerError, match="is full; nothing was written") as raised:
        with ledger.transaction():
            ledger.con.executemany(
                "INSERT INTO ids VALUES (?, 'x')", [(f"{i:0200d}",) for i in range(2000)]
            )
    assert "damaged" not in str(raised.value)


def test_a_read_only_ledger_is_named_as_such_not_as_damage(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.con.execute("PRAGMA query_only = ON")
    with pytest.raises(LedgerUnwritable, match="cannot be written") as raised:
        _written(ledger)
    assert "damaged" not in str(raised.value)


@pytest.mark.parametrize("where", ["/proc/self", "a-file"])
def test_a_data_folder_that_cannot_hold_a_ledger_is_not_called_damaged(tmp_path, where):
    folder = Path(where) if where.startswith("/") else tmp_path / where
    if not folder.is_absolute() or where == "a-file":
        folder.write_text("not a folder")
    with pytest.raises(LedgerUnwritable) as raised:
        Ledger(folder)
    assert "damaged" not in str(raised.value) and "move it away" not in str(raised.value)


def test_the_cli_names_a_data_folder_that_cannot_hold_a_ledger(seeds_copy, monkeypatch):
    monkeypatch.setenv("RLPAPERS_DATA_DIR", "/proc/self")
    result = run("--corpus", seeds_copy, "list", "-f", "ids", code=2)
    assert "cannot open the identity ledger" in result.stderr
    assert "RLPAPERS_DATA_DIR" in result.stderr and "damaged" not in result.stderr


# --- giving many papers one base key is linear --------------------------------------------------


def test_free_keys_for_one_base_cost_a_few_statements_each(tmp_path):
    """Papers sharing one base key (author-less, one title word) took a lookup per earlier
    holder each: quadratic. Counted in SQL statements, so a loaded machine cannot flake it."""
    ledger = Ledger(tmp_path)
    statements: list[str] = []
    ledger.con.set_trace_callback(statements.append)
    with ledger.transaction():
        for i in range(2000):
            pid = f"p{i:09d}"
            ledger.add_paper(pid, [])
            ledger.give_key(pid, ledger.free_key("paper"))
    assert len(statements) < 2000 * 8
    keys = ledger.keys_of([f"p{i:09d}" for i in range(2000)])
    assert len(set(keys.values())) == 2000 and keys["p000000000"] == "paper"
    ledger.close()


def test_a_key_given_outside_free_key_is_never_given_twice(tmp_path):
    ledger = Ledger(tmp_path)
    with ledger.transaction():
        ledger.add_paper("aaaaaaaaaa", [])
        ledger.give_key("aaaaaaaaaa", ledger.free_key("yak"))
        ledger.add_paper("bbbbbbbbbb", [])
        ledger.give_key("bbbbbbbbbb", "yakb")  # a pinned key, given directly
        ledger.add_paper("cccccccccc", [])
        ledger.give_key("cccccccccc", ledger.free_key("yak"))
    assert ledger.keys_of(["cccccccccc"]) == {"cccccccccc": "yakc"}
    ledger.close()


def test_a_garbled_fingerprint_is_reported_as_damage(tmp_path, isolated):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    _keys(corpus)
    con = sqlite3.connect(isolated / "data" / "ledger.db")
    con.execute("UPDATE papers SET print = 'not bytes'")
    con.commit()
    con.close()
    _write(corpus / "a.txt", _paper(EDITED))  # a newcomer: compared with the absent paper
    result = run("--corpus", corpus, "list", "-f", "ids", code=2)
    assert "identity ledger" in result.stderr and "fingerprint" in result.stderr


def test_a_schema_2_ledger_gains_the_file_stamps(tmp_path):
    """A ledger of schema 2 (fingerprints, no file stamps) is upgraded in place too."""
    shutil.copy(FIXTURE / "ledger.db", tmp_path / "ledger.db")
    con = sqlite3.connect(tmp_path / "ledger.db")
    for column in ("cid TEXT", "print BLOB", "file TEXT", "ordinal INTEGER"):
        con.execute(f"ALTER TABLE papers ADD COLUMN {column}")
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.close()
    ledger = Ledger(tmp_path)
    assert ledger.con.execute("PRAGMA user_version").fetchone()[0] == VERSION
    assert ledger.states_of(["wtcoe6gw7e"])["wtcoe6gw7e"].stamp is None
    ledger.close()
