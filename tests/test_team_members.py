"""Members of a team refreshing against one PostgreSQL ledger at once, as separate processes with
their own data and index folders: the same id and key for the same paper everywhere, no key
given twice, no entry lost, and a member killed (or cut off from the server) mid-write leaves
nothing half-written and the others unaffected."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlpapers.store.ledger.postgres import LOCK

from .team_server import admin, pg_server_fixture, pg_url_fixture  # noqa: F401
from .test_team_ledger import write_corpus

pytestmark = pytest.mark.slow

PER_FILE = 12
FILES = 8
OWN = 10_000  # the first paper of a member's own, bigger corpus
MANY = 1000  # its size: long enough a transaction to be caught inside


def _member(root: Path, n: int, files: list[int], own: int = 0) -> dict[str, Path]:
    """Member ``n``: a corpus of the shared files ``files`` (each the same text for everyone)
    and ``own`` papers nobody else has, with a data and an index folder of its own."""
    folder = root / f"member{n}"
    corpus = folder / "corpus"
    for f in files:
        write_corpus(corpus, range(f * PER_FILE, (f + 1) * PER_FILE), name=f"shared{f}.txt")
    if own:
        write_corpus(corpus, range(OWN + n * own, OWN + (n + 1) * own), name="own.txt")
    return {"corpus": corpus, "data": folder / "data", "index": folder / "index"}


def _start(member: dict[str, Path], url: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "RLPAPERS_LEDGER": url,
        "RLPAPERS_DATA_DIR": str(member["data"]),
        "RLPAPERS_INDEX_DIR": str(member["index"]),
    }
    argv = [sys.executable, "-m", "rlpapers", "--corpus", str(member["corpus"]), "keys"]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _keys(process: subprocess.Popen[str]) -> dict[str, str]:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    return {line.split("\t")[0]: line.split("\t")[1] for line in out.splitlines()}


def _served(url: str) -> dict[str, str]:
    return dict(admin(url, "SELECT id, key FROM rlpapers.papers"))


def _check_one_map(url: str, maps: list[dict[str, str]], papers: int) -> None:
    """Every member's id -> key map is the server's, restricted to its papers; the server holds
    every paper once, each with a key of its own."""
    served = _served(url)
    assert len(served) == papers
    assert all(served.values())  # no paper without its key: nothing half-written
    assert len({key.lower() for key in served.values()}) == papers  # no key given twice
    for found in maps:
        assert found.items() <= served.items()
    (aliases,) = admin(
        url, "SELECT count(*) FROM rlpapers.ids WHERE id NOT IN (SELECT id FROM rlpapers.papers)"
    )
    assert aliases == (0,)


def _shared(n: int) -> list[int]:
    return [n % FILES, (n + 1) % FILES, (n + 3) % FILES]


def test_eight_members_at_once_get_one_map_with_no_key_twice(tmp_path, pg_url):
    # a server whose transactions read one snapshot from their first statement: the lock must
    # be taken before anything is read
    name = pg_url.split("?")[0].rsplit("/", 1)[1]
    admin(pg_url, f"ALTER DATABASE {name} SET default_transaction_isolation = 'repeatable read'")
    members = [_member(tmp_path, n, _shared(n)) for n in range(8)]
    processes = [_start(member, pg_url) for member in members]
    maps = [_keys(process) for process in processes]
    _check_one_map(pg_url, maps, FILES * PER_FILE)
    assert all(len(found) == 3 * PER_FILE for found in maps)
    again = [_keys(_start(member, pg_url)) for member in members[:2]]
    assert again == maps[:2]


def _made(url: str) -> str:
    """The server ledger made (by a first connection), so that the next lock a member takes is
    its refresh's."""
    from rlpapers.store.ledger import open_ledger

    open_ledger(Path("/nonexistent-data-folder"), url).close()
    return url


def _holding_lock(url: str, process: subprocess.Popen[str], timeout: float = 120) -> int:
    """The server process of ``process``'s connection, once it holds the ledger's lock (it is
    then inside its refresh's one transaction)."""
    query = (
        "SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
        f"WHERE l.locktype = 'advisory' AND l.granted AND l.objid = {LOCK} "
        f"AND a.application_name = 'rlpapers/{process.pid}'"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        rows = admin(url, query)  # (pg_locks shows the whole cluster)
        if rows:
            return int(rows[0][0])
        time.sleep(0.01)
    raise AssertionError("the member never held the ledger's lock")


def _no_records(member: dict[str, Path]) -> bool:
    stores = list(member["index"].rglob("store.db"))
    if not stores:
        return True
    con = sqlite3.connect(stores[0])
    try:
        return con.execute("SELECT count(*) FROM records").fetchone() == (0,)
    finally:
        con.close()


def test_a_member_killed_mid_write_leaves_nothing_and_the_others_go_on(tmp_path, pg_url):
    killed = _member(tmp_path, 0, _shared(0), own=MANY)
    others = [_member(tmp_path, n, _shared(n)) for n in range(1, 8)]
    victim = _start(killed, _made(pg_url))
    processes = [_start(member, pg_url) for member in others]
    _holding_lock(pg_url, victim)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate()
    maps = [_keys(process) for process in processes]
    assert len(_served(pg_url)) == FILES * PER_FILE  # none of the killed member's own papers
    _check_one_map(pg_url, maps, FILES * PER_FILE)
    assert _no_records(killed)
    # run again, it finishes the work, and every key the others saw stands
    after = _keys(_start(killed, pg_url))
    _check_one_map(pg_url, [*maps, after], FILES * PER_FILE + MANY)


def test_a_server_gone_mid_refresh_is_one_line_exit_3_and_nothing_written(tmp_path, pg_url):
    member = _member(tmp_path, 0, _shared(0), own=MANY)
    process = _start(member, _made(pg_url))
    backend = _holding_lock(pg_url, process)
    admin(pg_url, f"SELECT pg_terminate_backend({backend})")
    out, err = process.communicate(timeout=300)
    assert process.returncode == 3, err
    assert len(err.splitlines()) == 1 and err.startswith("error: lost the team ledger"), err
    password = pg_url.split("@")[0].rsplit(":", 1)[1]
    assert password not in err
    assert admin(pg_url, "SELECT count(*) FROM rlpapers.papers") == [(0,)]
    assert _no_records(member)
    _check_one_map(pg_url, [_keys(_start(member, pg_url))], 3 * PER_FILE + MANY)
