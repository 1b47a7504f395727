"""The identity ledger behind one interface, on both engines (the data folder's SQLite file and a
team's PostgreSQL server), and the team ledger's own promises: a member's ledger joins it with
the server's keys winning, a ledger only grows, and every fault is one line without a password."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.store.ledger import IdentityLedger, open_ledger

from .conftest import SEEDS, run
from .team_server import admin, engine_fixture, pg_server_fixture, pg_url_fixture, with_login  # noqa: F401

ORIGINAL = (
    "We study foo reinforcement learning with sparse rewards and propose a method that learns "
    "quickly from demonstrations across many benchmark tasks with strong empirical results."
)
EDITED = ORIGINAL.replace("with strong", "with very strong")


def block(i: int) -> str:
    """A paper of its own words (no two are taken for edits of each other); every third one
    introduces the same name, so their keys compete for one base."""
    words = " ".join(f"w{i}q{j}" for j in range(30))
    name = "Zeta" if i % 3 == 0 else f"Method{i}"
    return f"cs.LG\n\nAda Lovelace, Alan Turing\n\nWe propose {name}, a method for {words} agents."


def write_corpus(folder: Path, papers: range, name: str = "a.txt") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = "arXiv cs test\n\n" + "\n\n".join(block(i) for i in papers) + "\n"
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def keys_of(corpus: Path) -> dict[str, str]:
    with Library([corpus]) as lib:
        return {p.id: p.key for p in lib.papers}


def _data() -> Path:
    return Path(os.environ["RLPAPERS_DATA_DIR"])


# --- one interface, both engines ----------------------------------------------------------------


def test_both_engines_keep_the_ledger_contract(tmp_path, engine):
    ledger: IdentityLedger = open_ledger(tmp_path, engine)
    try:
        with ledger.exclusive():
            ledger.add_paper("p1", ["c1"])
            ledger.add_paper("p2", ["c2"])
            ledger.give_key("p1", ledger.free_key("smith_foo"))
            ledger.give_key("p2", ledger.free_key("smith_foo"))  # the next free form
            ledger.note_text("p1", "c1", b"\x01\x00\x00\x00", "/a.txt", 0, "1:2")
        assert ledger.keys_of(["p1", "p2", "p3"]) == {"p1": "smith_foo", "p2": "smith_foob"}
        assert ledger.ids_of(["c1", "c2", "c9"]) == {"c1": "p1", "c2": "p2"}
        assert ledger.holder("SMITH_FOO") == "p1"  # keys compare without case
        assert ledger.resolve("smith_foob") == ledger.resolve("c2") == "p2"
        state = ledger.states_of(["p1"])["p1"]
        assert (state.cid, state.file, state.ordinal, state.printed) == ("c1", "/a.txt", 0, True)
        with ledger.transaction():
            ledger.give_key("p1", "smith2025foo")  # a rename: the old key stays the paper's
        assert ledger.old_keys() == {"smith_foo": "p1"}
        assert ledger.resolve("smith_foo") == "p1"
        with ledger.transaction():
            assert ledger.free_key("smith_foo") == "smith_fooc"  # a key once held is never given
        (gone,) = ledger.absent({"p2"}, lambda file, stamp: True)
        assert gone.ref == "p1"
        with pytest.raises(RuntimeError), ledger.transaction():
            ledger.add_paper("p3", ["c3"])
            raise RuntimeError("midway")
        assert ledger.resolve("c3") is None  # rolled back: nothing half-written
    finally:
        ledger.close()


def test_both_engines_keep_keys_when_the_index_folder_is_cleared(tmp_path, engine):
    corpus = write_corpus(tmp_path / "corpus", range(9))
    before = keys_of(corpus)
    assert len(set(before.values())) == 9
    shutil.rmtree(os.environ["RLPAPERS_INDEX_DIR"])
    (corpus / "a.txt").write_text(
        (corpus / "a.txt").read_text(encoding="utf-8").replace("w4q7", "w4q7 edited"),
        encoding="utf-8",
    )
    assert keys_of(corpus) == before  # an edit keeps its paper's id and key, from the ledger


def test_both_engines_let_a_metadata_key_win_and_keep_the_old_one(tmp_path, engine):
    corpus = write_corpus(tmp_path / "corpus", range(3))
    before = keys_of(corpus)
    pid = next(p for p, k in before.items() if k == "lovelace_method1")
    (corpus / "metadata.yaml").write_text("lovelace_method1:\n  key: Renamed2025\n")
    assert keys_of(corpus) == {**before, pid: "Renamed2025"}
    assert run("--corpus", corpus, "show", "lovelace_method1", "-f", "ids").stdout.split() == [pid]
    ledger = open_ledger(_data(), engine)
    try:
        assert ledger.old_keys() == {"lovelace_method1": pid}
    finally:
        ledger.close()


def test_both_engines_refuse_a_metadata_key_another_paper_holds(tmp_path, engine):
    corpus = write_corpus(tmp_path / "corpus", range(3))
    before = keys_of(corpus)
    (corpus / "metadata.yaml").write_text("lovelace_method1:\n  key: lovelace_method2\n")
    result = run("--corpus", corpus, "list", code=2)
    assert "metadata.yaml:1" in result.stderr and "already belongs to paper" in result.stderr
    assert result.stderr.count("\n") == 1
    (corpus / "metadata.yaml").unlink()
    assert keys_of(corpus) == before  # nothing was written half-way


BIB_ABSTRACT = (
    "We propose Engine, a method for analytical policy gradients with exact unrolled "
    "computation of returns across many benchmark tasks and strong empirical results."
)
BIB = f"""@article{{lovelace2025analytical,
  title = {{An Analytical Engine for Policy Gradients}},
  author = {{Lovelace, Ada and Turing, Alan}},
  year = {{2025}},
  abstract = {{{BIB_ABSTRACT}}}
}}
"""


def test_both_engines_give_a_bib_entry_its_own_key(tmp_path, engine):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "refs.bib").write_text(BIB, encoding="utf-8")
    assert list(keys_of(corpus).values()) == ["lovelace2025analytical"]


def test_both_engines_keep_a_join_when_the_index_folder_is_cleared(tmp_path, engine):
    """A text paper and its .bib entry (same DOI) are one record; the ledger keeps the join, so
    a cleared index folder, an edited entry title and metadata that no longer matches change
    nothing."""
    corpus = write_corpus(tmp_path / "corpus", range(2))
    before = keys_of(corpus)
    pid = next(p for p, k in before.items() if k == "lovelace_method1")
    (corpus / "metadata.yaml").write_text("lovelace_method1:\n  doi: 10.1/m1\n")
    entry = "@article{{ada2025m1, title = {{{}}}, author = {{Lovelace, Ada}}, doi = {{10.1/M1}}}}\n"
    (corpus / "refs.bib").write_text(entry.format("Method One"), encoding="utf-8")
    joined = {**before, pid: "ada2025m1"}
    assert keys_of(corpus) == joined
    shutil.rmtree(os.environ["RLPAPERS_INDEX_DIR"])
    (corpus / "metadata.yaml").write_text("")
    (corpus / "refs.bib").write_text(entry.format("Method One, Revised"), encoding="utf-8")
    assert keys_of(corpus) == joined
    with Library([corpus]) as lib:
        assert lib.get("lovelace_method1").sources == ("a.txt:13", "refs.bib:1")


def test_a_bib_key_reaches_a_colleague_with_the_same_abstract_as_text(tmp_path, pg_url):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "refs.bib").write_text(BIB, encoding="utf-8")
    os.environ["RLPAPERS_DATA_DIR"] = str(tmp_path / "mine-data")
    (pid,) = keys_of(mine)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "a.txt").write_text(f"Papers\n\nAda Lovelace\n\n{BIB_ABSTRACT}\n", encoding="utf-8")
    os.environ["RLPAPERS_DATA_DIR"] = str(tmp_path / "their-data")
    os.environ["RLPAPERS_INDEX_DIR"] = str(tmp_path / "their-index")
    assert keys_of(theirs) == {pid: "lovelace2025analytical"}


def test_the_default_ledger_is_the_data_folders_file(tmp_path, monkeypatch):
    monkeypatch.delenv("RLPAPERS_LEDGER", raising=False)
    keys_of(write_corpus(tmp_path / "corpus", range(3)))
    assert (_data() / "ledger.db").is_file()


# --- choosing the engine ------------------------------------------------------------------------


def test_a_ledger_that_is_not_a_postgresql_url_is_one_line_exit_2(monkeypatch):
    monkeypatch.setenv("RLPAPERS_LEDGER", "mysql://me:hunter2@host/db")
    result = run("list", code=2)
    assert "postgresql://" in result.stderr and "hunter2" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_the_config_file_names_the_team_ledger(tmp_path, monkeypatch, pg_url):
    config = Path(os.environ["RLPAPERS_CONFIG"])
    config.write_text(f"ledger: '{pg_url}'\n", encoding="utf-8")
    keys = keys_of(write_corpus(tmp_path / "corpus", range(3)))
    assert not (_data() / "ledger.db").exists()
    rows = admin(pg_url, "SELECT id, key FROM rlpapers.papers")
    assert dict(rows) == keys


def test_the_ledger_option_names_the_team_ledger_and_config_shows_it(tmp_path, pg_url):
    os.environ.pop("RLPAPERS_LEDGER")
    corpus = write_corpus(tmp_path / "corpus", range(3))
    listed = run("keys", "--corpus", corpus, "--ledger", pg_url).stdout  # after the command too
    served = dict(admin(pg_url, "SELECT id, key FROM rlpapers.papers"))
    assert {line.split("\t")[0]: line.split("\t")[1] for line in listed.splitlines()} == served
    assert not (_data() / "ledger.db").exists()
    shown = run("--ledger", pg_url, "config", "--format", "tsv").stdout
    (row,) = [line for line in shown.splitlines() if line.startswith("ledger\t")]
    where, origin = row.split("\t")[1:]
    database = pg_url.split("?")[0].rsplit("/", 1)[1]
    assert where.startswith("postgresql://postgres@") and where.endswith(f"/{database}")
    assert origin == "--ledger"
    assert _password(pg_url) not in shown


def test_without_psycopg_a_team_ledger_is_one_line_with_the_install_hint(monkeypatch):
    monkeypatch.setenv("RLPAPERS_LEDGER", "postgresql://me:hunter2@localhost/lab")
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg raises ImportError
    result = run("list", code=2)
    assert "pip install 'rlpapers[team]'" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "hunter2" not in result.stderr


# --- shared identity ----------------------------------------------------------------------------


def test_two_members_with_papers_in_another_order_get_the_same_keys(tmp_path, pg_url):
    first = write_corpus(tmp_path / "one", range(12))
    second = write_corpus(tmp_path / "two", range(11, -1, -1))  # the same papers, reversed
    keys_one = keys_of(first)
    os.environ["RLPAPERS_DATA_DIR"] = str(tmp_path / "data-two")
    os.environ["RLPAPERS_INDEX_DIR"] = str(tmp_path / "index-two")
    assert keys_of(second) == keys_one
    # without the team ledger, the reversed order gives the Zeta papers other suffixes
    os.environ.pop("RLPAPERS_LEDGER")
    os.environ["RLPAPERS_DATA_DIR"] = str(tmp_path / "data-three")
    os.environ["RLPAPERS_INDEX_DIR"] = str(tmp_path / "index-three")
    assert keys_of(second) != keys_one


def _as_member(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(folder / "data"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(folder / "index"))


def test_a_members_ledger_joins_with_the_servers_keys_winning(tmp_path, pg_url, monkeypatch):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    write_corpus(corpus, range(2), name="mine.txt")
    monkeypatch.delenv("RLPAPERS_LEDGER")
    _as_member(monkeypatch, tmp_path / "member")
    local = keys_of(corpus)  # the member's own SQLite ledger first
    pid = sorted(local)[0]
    mine = {p: k for p, k in local.items() if "lovelace" in k}
    assert len(mine) == 2
    # a colleague keyed that paper otherwise on the server
    monkeypatch.setenv("RLPAPERS_LEDGER", pg_url)
    colleague = tmp_path / "colleague-corpus"
    shutil.copytree(SEEDS, colleague)
    (colleague / "keys.yaml").write_text(f"{pid}:\n  key: teamkey\n", encoding="utf-8")
    _as_member(monkeypatch, tmp_path / "colleague")
    assert keys_of(colleague)[pid] == "teamkey"
    # the member connects: the server's key wins, listed once; their own papers keep theirs
    _as_member(monkeypatch, tmp_path / "member")
    listed = run("--corpus", corpus, "keys")
    assert listed.stderr.splitlines() == [
        f"note: paper {pid}: the team ledger keys it teamkey (it was {local[pid]} here)"
    ]
    now = {line.split("\t")[0]: line.split("\t")[1] for line in listed.stdout.splitlines()}
    assert now == {**local, pid: "teamkey"}
    assert run("--corpus", corpus, "keys").stderr == ""  # once
    assert run("--corpus", corpus, "show", local[pid], "-f", "ids").stdout.split() == [pid]
    served = dict(admin(pg_url, "SELECT id, key FROM rlpapers.papers"))
    assert all(served[p] == k for p, k in mine.items())
    con = sqlite3.connect(tmp_path / "member" / "data" / "ledger.db")
    assert con.execute("SELECT key FROM papers WHERE id = ?", (pid,)).fetchone() == (local[pid],)
    con.close()  # the member's own ledger is left as it was


def test_a_members_pin_wins_over_the_servers_key(tmp_path, pg_url, monkeypatch):
    colleague = write_corpus(tmp_path / "colleague-corpus", range(3))
    _as_member(monkeypatch, tmp_path / "colleague")
    team = keys_of(colleague)
    pid = sorted(team)[0]
    corpus = write_corpus(tmp_path / "corpus", range(3))
    (corpus / "keys.yaml").write_text(f"{pid}:\n  key: mykey\n", encoding="utf-8")
    _as_member(monkeypatch, tmp_path / "member")
    listed = run("--corpus", corpus, "keys")
    assert listed.stderr == ""  # nothing changed for the member: their pin holds
    assert f"{pid}\tmykey\t" in listed.stdout
    assert run("--corpus", corpus, "show", team[pid], "-f", "ids").stdout.split() == [pid]


def test_a_smaller_corpus_never_removes_anyones_entries(tmp_path, pg_url, monkeypatch):
    _as_member(monkeypatch, tmp_path / "big")
    big = keys_of(write_corpus(tmp_path / "big-corpus", range(12)))
    _as_member(monkeypatch, tmp_path / "small")
    small = keys_of(write_corpus(tmp_path / "small-corpus", range(3)))
    assert small.items() <= big.items()
    assert dict(admin(pg_url, "SELECT id, key FROM rlpapers.papers")) == big
    _as_member(monkeypatch, tmp_path / "big")
    assert keys_of(tmp_path / "big-corpus") == big


# --- faults: one line, exit 2 or 3, nothing half-written, no password ----------------------------


def _one_line(stderr: str, *secrets: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert not any(secret in stderr for secret in secrets), stderr
    return lines[0]


def test_a_wrong_password_is_one_line_exit_2(pg_url, monkeypatch):
    wrong = with_login(pg_url, "postgres", "Zq9notthepassword")
    monkeypatch.setenv("RLPAPERS_LEDGER", wrong)
    line = _one_line(run("list", code=2).stderr, "Zq9notthepassword", pg_url)
    assert "password authentication failed" in line


@pytest.mark.parametrize(
    "query", ["port=notaport", "port=5432&connect_timeout=soon", "sslmode=sometimes"]
)
def test_a_malformed_connection_setting_is_exit_2_not_offline(monkeypatch, tmp_path, query):
    """A value libpq cannot take is the setting's fault, not the server's absence: exit 2, not
    exit 3 saying to run the command again when the server is back (it was, for the port)."""
    pytest.importorskip("psycopg")
    url = f"postgresql://me:Zq9secret@/lab?host={tmp_path}&{query}"
    monkeypatch.setenv("RLPAPERS_LEDGER", url)
    line = _one_line(run("list", code=2).stderr, "Zq9secret")
    assert line.startswith("error: cannot connect to the team ledger ")
    assert "server is back" not in line


def test_a_server_that_is_down_at_start_is_one_line_exit_3(pg_url, monkeypatch):
    down = pg_url.replace("port=5432", "port=5999")
    monkeypatch.setenv("RLPAPERS_LEDGER", down)
    line = _one_line(run("list", code=3).stderr, _password(pg_url))
    assert "cannot reach the team ledger" in line
    assert not list(Path(os.environ["RLPAPERS_INDEX_DIR"]).rglob("store.db")) or _no_records()


def test_offline_what_is_keyed_is_read_and_searched_and_nothing_new_keyed(tmp_path, pg_url):
    from urllib.parse import parse_qs, urlsplit

    real = Path(parse_qs(urlsplit(pg_url).query)["host"][0])
    folder = Path(tempfile.mkdtemp(prefix="rlsock-"))  # short: a socket path has ~100 bytes
    socket = folder / ".s.PGSQL.5432"
    socket.symlink_to(real / ".s.PGSQL.5432")
    url = pg_url.replace(f"host={real}", f"host={folder}")
    os.environ["RLPAPERS_LEDGER"] = url
    corpus = write_corpus(tmp_path / "corpus", range(6))
    listed = run("--corpus", corpus, "list").stdout
    key = listed.splitlines()[0].split("\t")[1]
    socket.unlink()  # the server is out of reach now
    try:
        assert run("--corpus", corpus, "list").stdout == listed
        assert key in run("--corpus", corpus, "search", "w0q3").stdout
        assert run("--corpus", corpus, "show", key).stdout
        assert key in run("--corpus", corpus, "keys").stdout
        write_corpus(corpus, range(6, 7), name="new.txt")
        line = _one_line(run("--corpus", corpus, "list", code=3).stderr, _password(pg_url))
        assert "cannot reach the team ledger" in line
    finally:
        shutil.rmtree(folder)


def _password(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).password or "no password"


def _no_records() -> bool:
    (store,) = Path(os.environ["RLPAPERS_INDEX_DIR"]).rglob("store.db")
    con = sqlite3.connect(store)
    try:
        return con.execute("SELECT count(*) FROM records").fetchone() == (0,)
    finally:
        con.close()


def _role(pg_url: str, name: str, writer: bool) -> str:
    rights = "SELECT, INSERT, UPDATE" if writer else "SELECT"
    admin(
        pg_url,
        f"DROP ROLE IF EXISTS {name}",
        f"CREATE ROLE {name} LOGIN PASSWORD 'pw{name}'",
        f"GRANT USAGE ON SCHEMA rlpapers TO {name}",
        f"GRANT {rights} ON ALL TABLES IN SCHEMA rlpapers TO {name}",
    )
    return with_login(pg_url, name, f"pw{name}")


def test_a_read_only_role_reads_what_is_keyed_and_cannot_add(tmp_path, pg_url, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus", range(6))
    _as_member(monkeypatch, tmp_path / "writer")
    keys = keys_of(corpus)
    reader = _role(pg_url, f"reader_{uuid.uuid4().hex[:8]}", writer=False)
    monkeypatch.setenv("RLPAPERS_LEDGER", reader)
    _as_member(monkeypatch, tmp_path / "reader")
    assert keys_of(corpus) == keys  # reading and searching what is keyed works
    run("--corpus", corpus, "search", "w2q5")
    write_corpus(corpus, range(6, 8), name="new.txt")
    line = _one_line(run("--corpus", corpus, "list", code=2).stderr, "pwreader_")
    assert "cannot be written by this role" in line
    assert len(admin(pg_url, "SELECT id FROM rlpapers.papers")) == 6  # nothing written


def test_a_ledger_schema_from_an_older_rlpapers(tmp_path, pg_url, monkeypatch):
    corpus = write_corpus(tmp_path / "corpus", range(3))
    keys = keys_of(corpus)
    admin(
        pg_url,
        "DROP TABLE rlpapers.old_keys",
        "UPDATE rlpapers.meta SET value = '3' WHERE name = 'version'",
    )
    writer = _role(pg_url, f"writer_{uuid.uuid4().hex[:8]}", writer=True)
    monkeypatch.setenv("RLPAPERS_LEDGER", writer)
    _as_member(monkeypatch, tmp_path / "member")
    line = _one_line(run("--corpus", corpus, "list", code=2).stderr, "pwwriter_")
    assert "schema 3, from an older rlpapers" in line
    assert admin(pg_url, "SELECT value FROM rlpapers.meta WHERE name = 'version'") == [("3",)]
    monkeypatch.setenv("RLPAPERS_LEDGER", pg_url)  # its owner upgrades it, keeping every key
    assert keys_of(corpus) == keys
    assert admin(pg_url, "SELECT value FROM rlpapers.meta WHERE name = 'version'") == [("4",)]


def test_a_ledger_schema_from_a_newer_rlpapers(tmp_path, pg_url):
    corpus = write_corpus(tmp_path / "corpus", range(3))
    keys_of(corpus)
    admin(pg_url, "UPDATE rlpapers.meta SET value = '99' WHERE name = 'version'")
    shutil.rmtree(os.environ["RLPAPERS_INDEX_DIR"])
    line = _one_line(run("--corpus", corpus, "list", code=2).stderr, _password(pg_url))
    assert "from a newer rlpapers" in line


def test_both_engines_keep_pinned_old_keys(tmp_path, engine):
    """A keys.yaml's ``old_keys`` become old keys of the paper on a fresh ledger of either
    engine: they find it, and it keeps its pinned key."""
    corpus = write_corpus(tmp_path / "corpus", range(3))
    pid = next(p for p, k in keys_of(corpus).items() if k == "lovelace_method1")
    (corpus / "keys.yaml").write_text(f"{pid}: {{old_keys: [lovelace2024method], key: ada1}}\n")
    assert keys_of(corpus)[pid] == "ada1"
    assert run("--corpus", corpus, "show", "lovelace2024method", "-f", "ids").stdout.split() == [
        pid
    ]
    ledger = open_ledger(_data(), engine)
    try:
        assert ledger.old_keys() == {"lovelace_method1": pid, "lovelace2024method": pid}
        assert ledger.keys_of([pid]) == {pid: "ada1"}
    finally:
        ledger.close()


# --- which ledger keyed the records -------------------------------------------------------------


def _named_in_the_query(url: str, database: str) -> str:
    """``url`` naming its database as libpq also reads it: ``dbname=`` in the query."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/", query=f"{parts.query}&dbname={database}"))


def test_two_team_databases_named_in_the_query_are_two_ledgers(
    tmp_path, pg_server, pg_url, monkeypatch
):
    """The records follow the team ledger in use: a second team database named by ``dbname=``
    in the URL's query keys them again, as one named in the URL's path does."""
    from .test_identity import TECRL, _write

    first, second = f"t_{uuid.uuid4().hex[:12]}", f"t_{uuid.uuid4().hex[:12]}"
    admin(pg_server, f"CREATE DATABASE {first}", f"CREATE DATABASE {second}")
    try:
        other = tmp_path / "other"
        other.mkdir()
        _write(other / "tecrl.txt", f"Other\n\n{TECRL}")
        seeds = tmp_path / "seeds"
        shutil.copytree(SEEDS, seeds)
        monkeypatch.setenv("RLPAPERS_LEDGER", _named_in_the_query(pg_server, first))
        assert "zhan_tecrl" in keys_of(other).values()  # the first ledger's zhan_tecrl
        index = tmp_path / "index"
        with Library([seeds], index_dir=index) as lib:
            (seed,) = [p for p in lib.papers if p.key.startswith("zhan_tec")]
        assert seed.key == "zhan_tecrlb"
        monkeypatch.setenv("RLPAPERS_LEDGER", _named_in_the_query(pg_server, second))
        with Library([seeds], index_dir=index) as lib:
            assert lib.get(seed.id).key == "zhan_tecrl"  # is zhan_tecrlb: the first's key
    finally:
        admin(
            pg_server,
            f"DROP DATABASE IF EXISTS {first} WITH (FORCE)",
            f"DROP DATABASE IF EXISTS {second} WITH (FORCE)",
        )


def test_an_edit_keeps_its_key_when_a_colleague_on_the_same_machine_saw_the_paper_last(
    tmp_path, pg_url, monkeypatch
):
    """Members on one machine (a lab server): the paper's last place is the colleague's file,
    which this member's machine sees too, unchanged. That is no corpus of this member's: their
    edit continues the paper (it got a new id and key, as an edited copy in another corpus of
    one data folder does)."""
    import time

    own = write_corpus(tmp_path / "mine", range(3))
    theirs = write_corpus(tmp_path / "theirs", range(3))
    _as_member(monkeypatch, tmp_path / "member")
    before = keys_of(own)
    _as_member(monkeypatch, tmp_path / "colleague")
    assert keys_of(theirs) == before
    text = (theirs / "a.txt").read_text(encoding="utf-8")
    (theirs / "a.txt").write_text(text + "\n", encoding="utf-8")  # the colleague saw them last
    assert keys_of(theirs) == before
    text = (own / "a.txt").read_text(encoding="utf-8")
    (own / "a.txt").write_text(text.replace("w1q5 ", "w1q5 and "), encoding="utf-8")
    stamp = time.time() + 5
    os.utime(own / "a.txt", (stamp, stamp))
    _as_member(monkeypatch, tmp_path / "member")
    assert keys_of(own) == before
    _as_member(monkeypatch, tmp_path / "colleague")
    assert keys_of(theirs) == before
