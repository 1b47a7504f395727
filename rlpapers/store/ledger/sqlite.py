"""The identity ledger's SQLite engine, the default: each paper's id and citation key, given
once and kept (the interface: ``ledger.IdentityLedger``).

One SQLite file per data folder (``RLPAPERS_DATA_DIR`` or the platform's user data folder, not
the cache), keyed by the papers themselves, not by corpus paths: any corpus read with the same
data folder shares it. It is precious: nothing here is rebuilt, and a damaged ledger is reported
(``LedgerError``), never replaced. It holds everything identity needs, so deleting everything
rebuildable (the index folder) never moves an id or a key.

Tables::

    papers(id, key, created, cid, print, file, ordinal, stamp)
                               every paper ever seen; ``key`` is its current key; ``cid`` the
                               content id of the text it last had, ``print`` that text's
                               fingerprint (``identity.fingerprint``), ``file`` (the corpus
                               path as given, not a symlink's target) and ``ordinal`` where it
                               last stood, ``stamp`` that file's size and mtime then: what
                               tells an edit of it from a new paper
    ids(alias, id)             content ids (the hash of an abstract) -> the paper that has it now;
                               a bibliography entry joined to a text paper is one of them
    keys(key, id)              every key a paper has had (case-insensitive) -> the paper's id
    old_keys(key, id, retired) the keys a paper had and no longer has, and when each was
                               replaced: they still find the paper, an export never prints them

A new ledger is made only where no ``ledger.db`` file (nor its journal) exists, and atomically:
written under a temporary name, then linked into place, so a kill during the first run never
leaves an empty ledger behind that a later run would take for a new one.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

from ...errors import LedgerError, LedgerUnwritable
from ...keys import SAFE_KEY
from ..db import COMPANIONS, NotOurs, busy, chunks, connect, transaction
from ..identity import Version, hashes
from . import IdentityLedger, PaperState

F = TypeVar("F", bound=Callable[..., Any])


def _reports_damage(method: F) -> F:
    """``method`` run inside ``Ledger.reporting_damage``."""

    @wraps(method)
    def guarded(self: SqliteLedger, *args: Any, **kwargs: Any) -> Any:
        with self.reporting_damage():
            return method(self, *args, **kwargs)

    return guarded  # type: ignore[return-value]


APP_ID = 0x726C706C  # "rlpl"
VERSION = 4  # 2: papers.cid, print, file, ordinal; 3: papers.stamp (what matching an edit
# needs); 4: old_keys
SCHEMA = """
CREATE TABLE IF NOT EXISTS papers (id TEXT PRIMARY KEY, key TEXT NOT NULL, created TEXT NOT NULL,
                                   cid TEXT, print BLOB, file TEXT, ordinal INTEGER, stamp TEXT);
CREATE TABLE IF NOT EXISTS ids (alias TEXT PRIMARY KEY, id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS keys (key TEXT PRIMARY KEY COLLATE NOCASE, id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_id ON keys (id);
CREATE TABLE IF NOT EXISTS old_keys (key TEXT PRIMARY KEY COLLATE NOCASE, id TEXT NOT NULL,
                                     retired TEXT NOT NULL);
"""
#: Schema version -> the script that brings a ledger of that version to the next one.
UPGRADES = {
    1: "ALTER TABLE papers ADD COLUMN cid TEXT; ALTER TABLE papers ADD COLUMN print BLOB; "
    "ALTER TABLE papers ADD COLUMN file TEXT; ALTER TABLE papers ADD COLUMN ordinal INTEGER;",
    2: "ALTER TABLE papers ADD COLUMN stamp TEXT;",
    # the keys a paper held before its current one (a metadata rename) become its old keys;
    # when they were replaced is not known
    3: "CREATE TABLE old_keys (key TEXT PRIMARY KEY COLLATE NOCASE, id TEXT NOT NULL, "
    "retired TEXT NOT NULL); INSERT OR IGNORE INTO old_keys (key, id, retired) "
    "SELECT keys.key, keys.id, '' FROM keys JOIN papers ON papers.id = keys.id "
    "WHERE papers.key != keys.key COLLATE NOCASE;",
}
FILE_NAME = "ledger.db"


class SqliteLedger(IdentityLedger):
    """Ids and keys by paper in the data folder's ``ledger.db``."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.path = folder / FILE_NAME
        self.where = str(self.path)
        try:
            present = [end for end in COMPANIONS if Path(f"{self.path}{end}").exists()]
            if not present:
                _create(folder, self.path)
            elif "" not in present:
                raise self.damaged(f"{FILE_NAME} is missing beside {FILE_NAME}{present[0]}")
            elif self.path.stat().st_size == 0:
                raise self.damaged("the file is empty")
            self.con = connect(self.path, APP_ID, VERSION, SCHEMA, upgrades=UPGRADES, create=False)
            self.con.execute("SELECT count(*) FROM papers").fetchone()
        except NotOurs as error:
            raise self.damaged(f"it is not an rlpapers ledger of this version ({error})") from None
        except sqlite3.DatabaseError as error:
            raise self._error(error) from None
        except OSError as error:
            raise self._os_error(error) from None

    def damaged(self, why: str) -> LedgerError:
        return LedgerError(
            f"the identity ledger {self.path} is damaged ({why}); ids and keys live there, so it "
            "is not replaced: restore it from a backup, or move it away to start a new one "
            "(pinned keys.yaml files bring the keys back)"
        )

    def _error(self, error: sqlite3.DatabaseError, code: int | None = None) -> LedgerError:
        """What an SQLite error met in the ledger means: only damage is called damage. A
        read-only or full disk says so, and advises nothing that would throw keys away."""
        extended = getattr(error, "sqlite_errorcode", None) or 0
        if code is None:
            code = extended & 0xFF
        if (
            code == sqlite3.SQLITE_FULL
            or extended == sqlite3.SQLITE_IOERR_SHMSIZE
            or (code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR) and self._disk_full())
        ):
            return LedgerError(
                f"the disk holding the identity ledger {self.path} is full; nothing was "
                "written: free some space and run the command again"
            )
        if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH):
            return LedgerUnwritable(
                f"the identity ledger {self.path} cannot be written ({error}); nothing was "
                "written: make it and its folder writable"
            )
        if code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR):
            return LedgerUnwritable(
                f"cannot open the identity ledger {self.path} ({error}): its folder must be "
                "a readable and writable folder"
            )
        if self.path.exists() and self.path.stat().st_size == 0:
            return self.damaged("the file is empty")
        return self.damaged(str(error))

    def _disk_full(self) -> bool:
        """Whether the ledger's disk has (almost) no room: SQLite reports a full disk met while
        it grows its shared-memory file as an I/O error."""
        import shutil

        try:
            usage = shutil.disk_usage(self.path.parent)
        except OSError:
            return False
        return usage.total > 0 and usage.free < 1 << 20  # /proc has no size at all

    def _os_error(self, error: OSError) -> LedgerError:
        if error.errno == errno.ENOSPC:
            return self._error(sqlite3.OperationalError(error.strerror), sqlite3.SQLITE_FULL)
        if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return LedgerUnwritable(
                f"cannot write the identity ledger's folder {self.path.parent}: "
                f"{error.strerror or error}"
            )
        return LedgerUnwritable(
            f"cannot open the identity ledger {self.path}: {error.strerror or error}"
        )

    def close(self) -> None:
        self.con.close()

    @contextmanager
    def reporting_damage(self) -> Iterator[None]:
        """Damage met inside the ledger (a broken page) is a ``LedgerError`` naming the ledger,
        never an error a caller could take for damage to the rebuildable record store."""
        try:
            yield
        except sqlite3.DatabaseError as error:
            if busy(error):
                raise
            raise self._error(error) from None
        except OSError as error:
            raise self._os_error(error) from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction on the ledger; damage met in it is a ``LedgerError``."""
        self._taken = {}
        try:
            with self.reporting_damage(), transaction(self.con):
                yield
        finally:
            self._taken = {}

    # --- reading ------------------------------------------------------------------------------

    # Every value read is checked: a ledger edited by hand (or damaged inside a value) is
    # reported as damaged, never used to write ids or keys that are not ours.

    @_reports_damage
    def ids_of(self, aliases: Iterable[str]) -> dict[str, str]:
        """Content id -> paper id, for the aliases the ledger knows."""
        found = self._lookup("ids", "alias", "id", list(aliases))
        for pid in found.values():
            self._paper_id(pid, "ids")
        return found

    @_reports_damage
    def keys_of(self, ids: Iterable[str]) -> dict[str, str]:
        """Paper id -> its current key."""
        found = self._lookup("papers", "id", "key", list(ids))
        for key in found.values():
            if type(key) is not str or (key and not SAFE_KEY.fullmatch(key)):
                raise self.damaged(f"{repr(key)[:40]} in table papers is not a citation key")
        return found

    @_reports_damage
    def holder(self, key: str) -> str | None:
        """The paper that has (or once had) ``key``, compared without case."""
        row = self.con.execute("SELECT id FROM keys WHERE key = ?", (key,)).fetchone()
        return self._paper_id(row[0], "keys") if row else None

    def _paper_id(self, value: Any, table: str) -> str:
        if type(value) is not str or not value:
            raise self.damaged(f"a paper id in table {table} is {repr(value)[:40]}, not text")
        return value

    @_reports_damage
    def old_keys(self) -> dict[str, str]:
        """Every old key (a key its paper had before its current one) -> the paper's id."""
        found = dict(self.con.execute("SELECT key, id FROM old_keys"))
        for key, pid in found.items():
            if type(key) is not str or not SAFE_KEY.fullmatch(key):
                raise self.damaged(f"{repr(key)[:40]} in table old_keys is not a citation key")
            self._paper_id(pid, "old_keys")
        return found

    @_reports_damage
    def resolve(self, ref: str) -> str | None:
        """The paper id behind an id, a content id or any key the paper has had."""
        row = self.con.execute(
            "SELECT id FROM papers WHERE id = ? UNION ALL SELECT id FROM ids WHERE alias = ? "
            "UNION ALL SELECT id FROM keys WHERE key = ? LIMIT 1",
            (ref.lower(), ref.lower(), ref),
        ).fetchone()
        return self._paper_id(row[0], "ids or keys") if row else None

    @_reports_damage
    def states_of(self, ids: Iterable[str]) -> dict[str, PaperState]:
        """Paper id -> what the ledger knows of its latest text."""
        wanted = set(ids)
        columns = "SELECT id, cid, file, ordinal, print IS NOT NULL, stamp FROM papers"
        (rows,) = self.con.execute("SELECT coalesce(max(rowid), 0) FROM papers").fetchone()
        if len(wanted) * 3 >= rows:  # one pass over the table (see ``_lookup``)
            found = self.con.execute(columns).fetchall()
        else:
            found = []
            for part in chunks(list(wanted)):
                marks = ",".join("?" * len(part))
                found += self.con.execute(f"{columns} WHERE id IN ({marks})", part).fetchall()
        out: dict[str, PaperState] = {}
        for pid, cid, file, ordinal, printed, stamp in found:
            if pid in wanted:
                state = PaperState(cid, file, ordinal, bool(printed), stamp)
                out[self._paper_id(pid, "papers")] = state
        return out

    @_reports_damage
    def absent(self, present: set[str], where: Callable[[str, str | None], bool]) -> list[Version]:
        """The papers with a fingerprint that are not in ``present`` and whose last file and
        its stamp then ``where`` accepts, as they last stood. (Ids and files first, without
        the fingerprints: in the usual refresh every paper is present.)"""
        scan = self.con.execute("SELECT id, file, stamp FROM papers WHERE print NOT NULL")
        wanted = [
            pid
            for pid, file, stamp in scan
            if pid not in present and where(str(file or ""), stamp if type(stamp) is str else None)
        ]
        out = []
        for part in chunks(wanted):
            marks = ",".join("?" * len(part))
            rows = self.con.execute(
                f"SELECT id, file, ordinal, print FROM papers WHERE id IN ({marks})", part
            )
            for pid, file, ordinal, print_ in rows:
                if type(print_) is not bytes or type(ordinal) not in (int, type(None)):
                    raise self.damaged(f"the fingerprint of paper {repr(pid)[:40]} is garbled")
                out.append(
                    Version(self._paper_id(pid, "papers"), file or "", ordinal or 0, hashes(print_))
                )
        return out

    def _lookup(self, table: str, column: str, wanted: str, values: list[str]) -> dict[str, str]:
        """``column`` -> ``wanted`` in ``table`` for ``values``. Many values (a third of the
        table or more, as every refresh of a corpus asks) are found in one pass over the table,
        which costs about a quarter of looking each one up (75k papers: 0.1 s against 0.4 s)."""
        (rows,) = self.con.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()
        if len(values) * 3 >= rows:
            keep = set(values)
            scan = self.con.execute(f"SELECT {column}, {wanted} FROM {table}")
            return {key: value for key, value in scan if key in keep}
        out: dict[str, str] = {}
        for part in chunks(values):
            marks = ",".join("?" * len(part))
            sql = f"SELECT {column}, {wanted} FROM {table} WHERE {column} IN ({marks})"
            out.update(self.con.execute(sql, part).fetchall())
        return out

    # --- writing (inside a transaction) -------------------------------------------------------

    @_reports_damage
    def add_paper(self, paper_id: str, content_ids: Iterable[str]) -> None:
        self.con.execute(
            "INSERT OR IGNORE INTO papers (id, key, created) VALUES (?, '', ?)",
            (paper_id, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
        )
        self.add_aliases(paper_id, content_ids)

    @_reports_damage
    def add_aliases(self, paper_id: str, content_ids: Iterable[str]) -> None:
        self.con.executemany(
            "INSERT OR IGNORE INTO ids (alias, id) VALUES (?, ?)",
            [(cid, paper_id) for cid in {paper_id, *content_ids}],
        )

    @_reports_damage
    def give_key(self, paper_id: str, key: str) -> None:
        """Make ``key`` the paper's current key; the caller checked that no other paper holds it.
        The key it had before, if any, becomes an old key of the paper."""
        row = self.con.execute("SELECT key FROM papers WHERE id = ?", (paper_id,)).fetchone()
        before = row[0] if row else ""
        if before and str(before).lower() != key.lower():
            self.con.execute(
                "INSERT OR IGNORE INTO old_keys (key, id, retired) VALUES (?, ?, ?)",
                (before, paper_id, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            )
        self.con.execute("DELETE FROM old_keys WHERE key = ?", (key,))  # a paper's own, back
        self.con.execute("INSERT OR IGNORE INTO keys (key, id) VALUES (?, ?)", (key, paper_id))
        self.con.execute("UPDATE papers SET key = ? WHERE id = ?", (key, paper_id))

    @_reports_damage
    def note_text(
        self,
        paper_id: str,
        cid: str,
        print_: bytes,
        file: str,
        ordinal: int,
        stamp: str | None = None,
    ) -> None:
        """The paper's latest text is ``cid`` (fingerprint ``print_``), at ``file``/``ordinal``
        (a file whose size and mtime were ``stamp``); the content id is the paper's from now
        on, whichever paper had it before."""
        self.con.execute(
            "UPDATE papers SET cid = ?, print = ?, file = ?, ordinal = ?, stamp = ? WHERE id = ?",
            (cid, print_, file, ordinal, stamp, paper_id),
        )
        self.con.execute(
            "INSERT INTO ids (alias, id) VALUES (?, ?) "
            "ON CONFLICT (alias) DO UPDATE SET id = excluded.id WHERE id != excluded.id",
            (cid, paper_id),
        )

    @_reports_damage
    def note_place(self, paper_id: str, file: str, ordinal: int, stamp: str | None) -> None:
        """The paper now stands at ``file``/``ordinal``, a file whose size and mtime are
        ``stamp``."""
        self.con.execute(
            "UPDATE papers SET file = ?, ordinal = ?, stamp = ? WHERE id = ?",
            (file, ordinal, stamp, paper_id),
        )

    @_reports_damage
    def _held_from(self, base: str) -> set[str]:
        """Every key (lower-cased) that a paper holds or held and that begins with ``base``."""
        rows = self.con.execute(
            "SELECT key FROM keys WHERE key >= ? AND key < ?", (base, base + "\U0010ffff")
        )
        return {str(key).lower() for (key,) in rows}


def _create(folder: Path, path: Path) -> None:
    """A new, empty ledger at ``path``, made under a temporary name and linked into place: a
    kill midway leaves no ``ledger.db`` at all, never an empty one. If another process made
    one meanwhile, that one is kept."""
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{FILE_NAME}.{os.getpid()}.new"
    temporary.unlink(missing_ok=True)
    try:
        con = connect(temporary, APP_ID, VERSION, SCHEMA, wal=False)
        con.close()
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)
