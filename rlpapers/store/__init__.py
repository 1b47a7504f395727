"""The record store: the corpus's single home, below the search index.

Two SQLite files:

- ``store.db`` in the corpus's index folder, rebuildable from the corpus files at any time::

      meta(name, value)      schema of the parser, a random instance id, the change counter
      files(path, kind, position, size, mtime_ns, sha1)     the corpus and metadata files
      parses(sha1, name, encoding, ids, bases, vocab, rows) each file's parse, by content
      metadata(path, sha1, data, warned)  each metadata file's encoding and overrides as
                             JSON, read again only when its hash changes, and the entries
                             already warned about as naming no paper (once per version)
      records(id, key, file, fpos, ordinal, digest, copies, changed, data)  finished records,
                             each a short JSON head and compressed JSON (``records``)
      removed(id, changed)   records that went away, so a search view can catch up
      embeddings(id, model, digest, vector)   sentence vectors, made only when semantic search
                             is used (``embeddings.EmbeddingTable``)

- ``ledger.db`` in the data folder: the identity ledger (``ledger.IdentityLedger``), precious;
  or a team's ledger on a PostgreSQL server (``ledger: postgresql://…``).

Every run stats the corpus files and compares them with ``files``. Equal: read, no lock. Different:
take the lock, look again, hash what changed, parse what is new (parses are kept by content, so
a file edited back and forth is parsed once), give ids and keys to papers the ledger has not seen
(``identity.match_edits`` tells an edited abstract from a new one; ``join`` makes a text
paper and its bibliography entry one paper), finish the records (merge copies, apply metadata
overrides) and write the records that changed, all in one transaction:
a killed refresh leaves the previous state. ``changed`` is the counter value of a record's last
change: a search view built at counter N updates itself from the rows changed after N.

A ``store.db`` that is damaged, not ours or of another schema is rebuilt with a one-line note.
"""

from __future__ import annotations

import os
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IndexBusyError, IndexFolderError, IndexNotice, ParseWarning
from ..parse import PARSER_VERSION
from .db import (
    BUSY_TIMEOUT,
    NotOurs,
    Upgrades,
    busy,
    connect,
    damaged,
    new_instance,
    remove_database,
)
from .files import CORPUS, METADATA, FileState, stat_files
from .reads import Reads
from .records import reencode

if TYPE_CHECKING:
    from filelock import BaseFileLock

    from ..key_format import KeyFormat
    from .embeddings import EmbeddingTable
    from .ledger import IdentityLedger

Progress = Callable[[int, int], None]


def _compact_parses(con: sqlite3.Connection) -> None:
    from .parsing import compact_parses  # not imported by a warm read

    compact_parses(con)


APP_ID = 0x726C7073  # "rlps"
# 3: parses.rows in zlib; 4: prints; 5: metadata; 6: records.data; 7: no prints, vocab in zlib
VERSION = 7
#: Schema version -> what brings a store of that version to the next (the records it holds are
#: what an identity ledger written before version 4 learns its fingerprints from: they are kept).
UPGRADES: Upgrades = {
    3: "CREATE TABLE IF NOT EXISTS prints (sha1 TEXT NOT NULL, name TEXT NOT NULL, "
    "prints BLOB NOT NULL, PRIMARY KEY (sha1, name))",
    4: "CREATE TABLE IF NOT EXISTS metadata (path TEXT PRIMARY KEY, sha1 TEXT NOT NULL, "
    "data TEXT NOT NULL, warned TEXT NOT NULL)",
    5: reencode,
    6: _compact_parses,
}
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, kind TEXT NOT NULL, position INTEGER NOT NULL,
                    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha1 TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS parses (sha1 TEXT NOT NULL, name TEXT NOT NULL,
                     encoding TEXT NOT NULL, ids TEXT NOT NULL, bases TEXT NOT NULL,
                     vocab BLOB NOT NULL, rows BLOB NOT NULL, PRIMARY KEY (sha1, name));
CREATE TABLE IF NOT EXISTS metadata (path TEXT PRIMARY KEY, sha1 TEXT NOT NULL, data TEXT NOT NULL,
                                     warned TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, key TEXT NOT NULL, file TEXT NOT NULL,
                      fpos INTEGER NOT NULL, ordinal INTEGER NOT NULL, digest TEXT NOT NULL,
                      copies INTEGER NOT NULL, changed INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS records_key ON records (key COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS records_order ON records (fpos, ordinal);
CREATE INDEX IF NOT EXISTS records_changed ON records (changed);
CREATE TABLE IF NOT EXISTS removed (id TEXT PRIMARY KEY, changed INTEGER NOT NULL);
"""
FILE_NAME = "store.db"
LOCK_WAIT_COLD = 900.0  # no records yet: wait for the builder, however long a big corpus takes
LOCK_WAIT_WARM = 30.0  # records exist: wait this long, then read them as they are


class Store(Reads):
    """The records of one corpus. Reads refresh first when a corpus file changed."""

    def __init__(
        self,
        root: Path,
        files: list[Path],
        metadata: list[Path],
        data_dir: Path,
        progress: Progress | None = None,
        encoding: str | None = None,
        names: dict[str, str] | None = None,
        ledger: str | None = None,
        key_format: KeyFormat | None = None,
    ) -> None:
        self.root = root
        self.ledger_url = ledger  # a team ledger's postgresql:// URL; None: the data folder's
        self.encoding = encoding
        self.key_format = key_format  # the user's key format for papers first seen, if any
        self.names = names or {}  # resolved path -> the name its records show (its file name)
        self.looked: tuple[str, int] | None = None  # (instance, counter) as ``state`` read them
        self.files = files
        self.metadata = metadata
        self.data_dir = data_dir
        self.progress = progress
        self._fresh = False

    # --- the database -------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The store's database file."""
        return self.root / FILE_NAME

    @cached_property
    def con(self) -> sqlite3.Connection:
        path = self.path
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            return self._connect(path)
        except OSError as error:
            raise _folder_error(self.root, error) from None

    def _connect(self, path: Path) -> sqlite3.Connection:
        """Open the store; rebuild it only if it is damaged or not ours. Any other failure (a
        full disk, a read-only file) is reported and the store, with its vectors, is kept."""
        if path.is_symlink():
            self._unlink_planted(path)
        try:
            return _open_store(path)
        except (NotOurs, sqlite3.DatabaseError) as error:
            if busy(error):
                raise
            if not isinstance(error, NotOurs) and not damaged(error):
                raise IndexFolderError(f"cannot open the record store {path}: {error}") from None
            return self._replace(path, f"the record store {path} was unreadable ({error})")

    def _unlink_planted(self, path: Path) -> None:
        """Remove a symbolic link found where the store belongs, under the lock: SQLite would
        write through it, and take a file of a few bytes elsewhere for an empty database of
        its own (the file it names is left as it is; the store is rebuilt)."""
        with self._locked_cold():
            if path.is_symlink():
                _notice(f"the record store {path} was a symbolic link, not followed")
                path.unlink()

    @contextmanager
    def _locked_cold(self) -> Iterator[None]:
        from filelock import Timeout

        try:
            self.lock.acquire(timeout=LOCK_WAIT_COLD)
        except Timeout:
            raise IndexBusyError(
                f"another rlpapers process holds the record store in {self.root}"
            ) from None
        try:
            yield
        finally:
            self.lock.release()

    @cached_property
    def lock(self) -> BaseFileLock:
        """The lock writers of this store and its search view take: one object, so that the
        process holding it can take it again (a search view that finds the store damaged while
        it builds heals the store under its own lock)."""
        from filelock import FileLock

        return FileLock(str(self.root / ".lock"))

    def _replace(self, path: Path, why: str, damaged: str | None = None) -> sqlite3.Connection:
        """Under the lock (another process may be healing it too), look once more and, if the
        store is still unusable, delete it and start an empty one: the next refresh fills it.

        ``damaged``: the instance of a store that opened but was found damaged inside (which
        opening does not show); it is thrown away unless another process has replaced it since.
        """
        with self._locked_cold():
            try:
                con = _open_store(path)
                if damaged is None or _instance(con) != damaged:
                    return con
                con.close()
            except (NotOurs, sqlite3.DatabaseError) as error:
                if busy(error):
                    raise
            _notice(f"{why}; rebuilding it")
            remove_database(path)
            con = _open_store(path)
            # named at once: a second process that found the old one damaged tells them apart
            con.execute("INSERT INTO meta VALUES ('instance', ?)", (new_instance(),))
            return con

    def heal(self, error: sqlite3.DatabaseError) -> None:
        """Throw away a store found damaged while reading or writing (a garbled value, a broken
        page); the next read rebuilds it. Once, however many processes found it so. Any other
        error (a full disk, a read-only file) only reopens it."""
        seen = _instance(self.con) if damaged(error) else None
        self._let_go()
        path = self.path
        why = f"the record store in {self.root} was damaged ({error})"
        self._replace(path, why, damaged=seen).close()

    def close(self) -> None:
        """Close the databases this store opened; a later read opens them again and first
        checks the corpus files, as a new store would."""
        self._let_go()
        if "ledger" in self.__dict__:
            self.__dict__.pop("ledger").close()

    def _let_go(self) -> None:
        """Close the records' connection, and forget what was read through it: the vectors'
        table (it holds the connection) and that the records were fresh."""
        self._fresh = False
        self.__dict__.pop("embeddings", None)
        if "con" in self.__dict__:
            self.__dict__.pop("con").close()

    def busy_error(self, error: sqlite3.DatabaseError) -> IndexBusyError:
        """What a reader that met this store busy raises (exit 3)."""
        return IndexBusyError(f"the record store in {self.root} is busy: {error}")

    def _meta(self, name: str, default: str = "") -> str:
        row = self.con.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return row[0] if row else default

    @property
    def counter(self) -> tuple[str, int]:
        """(instance id, change counter): a search view built at this value is up to date."""
        return self._meta("instance"), int(self._meta("counter", "0"))

    # --- freshness ----------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> None:
        """Bring the records up to date with the corpus files (a no-op when nothing changed);
        ``force``: finish them again even so, as after keys changed in the ledger."""
        if self._fresh and not force:
            return
        for attempt in range(2):
            try:
                self._refresh_once(force)
                self._fresh = True
                return
            except sqlite3.DatabaseError as error:
                if attempt or busy(error):
                    raise self.busy_error(error) from None
                self.heal(error)

    def _refresh_once(self, force: bool = False) -> None:
        states = stat_files(self.files, self.metadata, self.names)
        # a store from before the ledger kept fingerprints teaches it once, even unchanged
        if not force and self.is_fresh(states) and self._meta("taught"):
            return
        from filelock import Timeout

        had_records = self.con.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None
        lock = self.lock
        try:
            lock.acquire(timeout=LOCK_WAIT_WARM if had_records else LOCK_WAIT_COLD)
        except Timeout:
            if had_records:
                _notice("another process is updating the records; showing them as they were")
                return
            raise IndexBusyError(
                f"another rlpapers process is still building the records in {self.root}"
            ) from None
        except OSError as error:
            raise _folder_error(self.root, error) from None
        try:
            states = stat_files(
                self.files, self.metadata, self.names
            )  # again: they may have changed
            if force or not (self.is_fresh(states) and self._meta("taught")):
                from .refresh import Refresh

                with _write_errors(self.root):
                    Refresh(self, states).run()
        finally:
            lock.release()

    def is_fresh(self, states: list[FileState]) -> bool:
        return (
            self._meta("parser") == PARSER_VERSION
            and self._meta("ledger") == self.keyed_by
            and not _stale(self.con, states)
        )

    @property
    def keyed_by(self) -> str:
        """The ledger the records are keyed by, as the store remembers it: the team ledger's
        URL without its secrets (``ledger_place``), else the data folder's ledger file, links
        resolved. Records another ledger keyed (one index folder used with two data folders in
        turn) are refreshed before they are read, so a key shown is the ledger's from the first
        command on."""
        if self.ledger_name:
            from .ledger.team import ledger_place

            return ledger_place(str(self.ledger_url))
        return os.path.realpath(self.data_dir / "ledger.db")

    @property
    def ledger_name(self) -> str:
        """Which ledger the records were keyed by: '' for the data folder's, else the team
        ledger's URL without credentials (records keyed by another are refreshed). A warm
        read with the default ledger imports nothing for it."""
        if not self.ledger_url:
            return ""
        from .ledger import is_server

        if not is_server(self.ledger_url):
            return ""
        from .ledger.team import shown_url

        return shown_url(str(self.ledger_url))

    def _stale_files(self, con: sqlite3.Connection) -> list[str]:
        """Corpus and metadata files that changed since the last refresh (nothing is written)."""
        return _stale(con, stat_files(self.files, self.metadata, self.names))

    def state(self) -> dict[str, Any]:
        """Where the store is, how many records it holds and whether it is fresh: reading only
        (a missing or damaged store is reported, not built or healed)."""
        path = self.path
        out: dict[str, Any] = {
            "path": str(path),
            "ledger": self.ledger_name or str(self.data_dir / "ledger.db"),
            "files": len(self.files),
        }
        if not path.exists():
            return out | {"state": "missing"}
        try:
            con = _read_only(path, self.root)
            try:
                records = con.execute("SELECT count(*) FROM records").fetchone()[0]
                stale = self._stale_files(con)
                keyed_by = con.execute("SELECT value FROM meta WHERE name = 'ledger'").fetchone()
                self.looked = _counter(con)
            finally:
                con.close()
        except sqlite3.DatabaseError as error:
            return out | {"state": f"damaged ({error})"}
        # records another ledger keyed are keyed again before they are read (``keyed_by``)
        other = keyed_by is None or keyed_by[0] != self.keyed_by
        return out | {
            "state": "stale" if stale or other else "fresh",
            "records": records,
            "changed_files": stale,
            "size_bytes": path.stat().st_size,
        }

    @cached_property
    def embeddings(self) -> EmbeddingTable:
        """The sentence vectors (the table is created on first use)."""
        self.refresh()
        from .embeddings import EmbeddingTable

        return EmbeddingTable(self.con)

    @cached_property
    def ledger(self) -> IdentityLedger:
        from .ledger import open_ledger

        return open_ledger(self.data_dir, self.ledger_url)


def _read_only(path: Path, root: Path) -> sqlite3.Connection:
    """A connection that writes nothing. In a folder this process cannot write, SQLite cannot
    make the ``-shm`` file a WAL database needs even to read it: there the file is opened as
    immutable (nothing else can be writing it either, for the same reason)."""
    writable = os.access(root, os.W_OK)
    flags = "mode=ro" if writable else "mode=ro&immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True, timeout=BUSY_TIMEOUT)


def _counter(con: sqlite3.Connection) -> tuple[str, int]:
    rows = dict(con.execute("SELECT name, value FROM meta WHERE name IN ('instance', 'counter')"))
    return str(rows.get("instance", "")), int(rows.get("counter", 0) or 0)


def _stale(con: sqlite3.Connection, states: list[FileState]) -> list[str]:
    """The files whose stat differs from the last refresh's, and the files that went away;
    every file when the records came from another parser version."""
    parser = con.execute("SELECT value FROM meta WHERE name = 'parser'").fetchone()
    if (parser[0] if parser else "") != PARSER_VERSION:
        return [s.path for s in states]
    known = {row[0]: FileState(*row) for row in con.execute("SELECT * FROM files")}
    changed = [s.path for s in states if not s.same_stat(known.get(s.path))]
    return changed + sorted(set(known) - {s.path for s in states})


def _open_store(path: Path) -> sqlite3.Connection:
    con = connect(path, APP_ID, VERSION, SCHEMA, upgrades=UPGRADES)
    try:
        con.execute("SELECT count(*) FROM meta").fetchone()
    except BaseException:
        con.close()
        raise
    return con


def _instance(con: sqlite3.Connection) -> str:
    """The store's instance id; "?" when even that cannot be read."""
    try:
        row = con.execute("SELECT value FROM meta WHERE name = 'instance'").fetchone()
    except sqlite3.DatabaseError:
        return "?"
    return str(row[0]) if row else ""


def _notice(message: str) -> None:
    warnings.warn(IndexNotice(message), stacklevel=4)


def _folder_error(root: Path, error: OSError) -> IndexFolderError:
    where = error.filename or root
    return IndexFolderError(
        f"cannot write the record store in {root}: {error.strerror or error} ({where})"
    )


@contextmanager
def _write_errors(root: Path) -> Iterator[None]:
    """An operating-system error while writing the store: one clear line, not a traceback."""
    try:
        yield
    except sqlite3.OperationalError as error:
        if "disk" not in str(error).lower() and "readonly" not in str(error).lower():
            raise
        raise IndexFolderError(f"cannot write the record store in {root}: {error}") from None
    except OSError as error:
        raise _folder_error(root, error) from None


__all__ = ["CORPUS", "METADATA", "ParseWarning", "Store"]
