"""SQLite plumbing shared by the record store and the identity ledger.

Both databases carry an ``application_id`` (so a file that is not ours is told apart from ours)
and a ``user_version`` (the schema version). Connections run in autocommit mode; writers open
their own ``BEGIN IMMEDIATE`` transactions, so one transaction is one refresh.
"""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BUSY_TIMEOUT = 30.0  # seconds a writer waits for another process's transaction
#: Schema version -> what brings a database of that version to the next: an SQL script, or a
#: function of the connection (run inside the upgrade's transaction).
Upgrades = Mapping[int, str | Callable[[sqlite3.Connection], None]]


class Garbled(sqlite3.DatabaseError):
    """A value in a readable database that is not what was written (found while reading it)."""


class NotOurs(Exception):
    """The file is not a database of this kind, or of another schema version."""


def connect(
    path: Path,
    app_id: int,
    version: int,
    schema: str,
    upgrades: Upgrades | None = None,
    create: bool = True,
    wal: bool = True,
) -> sqlite3.Connection:
    """Open a database of this kind; ``NotOurs`` if it is something else.

    With ``create``, a missing or empty file becomes a new database; without it, the file must
    exist and hold one (the ledger is made elsewhere, atomically). ``upgrades`` maps an older
    schema version to what brings it to the next (an SQL script, or a function of the
    connection), all run in one transaction.
    ``sqlite3.DatabaseError`` comes through for a damaged file: callers decide whether that
    heals (a rebuildable store) or is reported (the ledger).
    """
    fresh = create and (not path.exists() or path.stat().st_size == 0)
    target = str(path) if create else f"{path.resolve().as_uri()}?mode=rw"
    con = sqlite3.connect(target, timeout=BUSY_TIMEOUT, isolation_level=None, uri=not create)
    try:
        con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        found_app, found_version = _ids(con)
        if found_app == app_id and upgrades and found_version in upgrades:
            found_version = _upgrade(con, found_version, version, upgrades)
        if not create and found_app == 0 and found_version == 0 and not _tables(con):
            raise NotOurs("the file holds no database")
        if fresh or (found_app == 0 and found_version == 0 and not _tables(con)):
            # one script, one transaction (executescript commits whatever came before it)
            con.executescript(
                f"BEGIN IMMEDIATE; PRAGMA application_id = {app_id}; "
                f"PRAGMA user_version = {version}; {schema} COMMIT;"
            )
        elif (found_app, found_version) != (app_id, version):
            raise NotOurs(
                f"application id {found_app:#x}, schema {found_version} "
                f"(expected {app_id:#x}, schema {version})"
            )
        if wal:
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA synchronous = NORMAL")
        return con
    except BaseException:
        con.close()
        raise


def _upgrade(con: sqlite3.Connection, found: int, version: int, upgrades: Upgrades) -> int:
    """Bring a database of an older schema to ``version``, one step at a time, in one
    transaction (a kill midway leaves the old schema; a second process waits, then finds the
    work done)."""
    with transaction(con):
        found = _ids(con)[1]
        while found < version and found in upgrades:
            step = upgrades[found]
            if callable(step):
                step(con)
            else:
                for statement in filter(str.strip, step.split(";")):
                    con.execute(statement)
            found += 1
        con.execute(f"PRAGMA user_version = {found}")
    return found


def _ids(con: sqlite3.Connection) -> tuple[int, int]:
    app = con.execute("PRAGMA application_id").fetchone()[0]
    version = con.execute("PRAGMA user_version").fetchone()[0]
    return app, version


def _tables(con: sqlite3.Connection) -> list[str]:
    return [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; a failure (or Ctrl-C) rolls everything back. (SQLite
    has rolled back already after some errors, a full disk among them: the first error is the
    one raised, never a failed ``ROLLBACK``.)"""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield con
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a read makes many objects at once (the JSON of
    every record's head, the corpus's word counts): none of them is in a cycle, and each
    collection the allocations start would walk them all again (a fifth to a third of such a
    read's time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def busy(error: Exception) -> bool:
    """Whether ``error`` says another connection holds the database (not damage)."""
    return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)


def damaged(error: Exception) -> bool:
    """Whether ``error`` says the database itself is damaged (a garbled value, a broken page,
    not a database at all, text that is not UTF-8), and not that it is busy, full, read-only or
    closed. (Python's sqlite3 reports a text value it cannot decode as an OperationalError
    with no SQLite error code.)"""
    code = getattr(error, "sqlite_errorcode", None)
    return (
        isinstance(error, Garbled)
        or (code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB))
        or (code is None and "Could not decode to UTF-8" in str(error))
    )


def loads(text: Any, kind: type, what: str) -> Any:
    """A JSON value the store wrote, of the kind it wrote; ``Garbled`` for anything else, so
    that damage to a readable database heals like damage to the file."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as error:
        raise Garbled(f"garbled {what} ({error})") from None
    if type(value) is not kind:
        raise Garbled(f"garbled {what} (not a JSON {kind.__name__})")
    return value


def strings(value: list[Any], what: str) -> list[str]:
    """``value`` when it is a list of strings; ``Garbled`` otherwise."""
    if not all(type(v) is str for v in value):
        raise Garbled(f"garbled {what} (not a list of strings)")
    return value


#: A database file's name and the endings of its WAL, shared-memory and journal companions.
COMPANIONS = ("", "-wal", "-shm", "-journal")


def remove_database(path: Path) -> None:
    """Delete a database file with its WAL and shared-memory companions."""
    for suffix in COMPANIONS:
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def chunks(items: list[str], size: int = 500) -> Iterator[list[str]]:
    """Slices small enough for one ``IN (…)`` clause."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def new_instance() -> str:
    """A random name for a store.db: a search view of another instance is rebuilt."""
    return os.urandom(8).hex()
