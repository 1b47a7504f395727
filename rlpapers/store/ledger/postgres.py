"""The identity ledger's PostgreSQL engine: one ledger for a whole team (``ledger:
postgresql://…``), through psycopg 3 (the ``team`` extra).

Tables, in the schema ``rlpapers`` of the database the URL names::

    meta(name, value)     schema version, the ledger's instance id
    papers(id, key, created, cid, print, file, ordinal, stamp)   as in the SQLite ledger
    ids(alias, id)        content ids -> the paper that has it now
    keys(lkey, key, id)   every key a paper has had, by its lower-case form -> the paper
    old_keys(lkey, key, id, retired)  the keys a paper had and no longer has

How members share it:

- **One decision at a time.** A refresh assigns ids and keys inside ``exclusive``: one
  transaction holding a transaction-level advisory lock (``pg_advisory_xact_lock``), so what
  it read (which abstracts are new, which keys are free) is still true when it writes. Two
  members adding the same paper at once get the same id and key: the second waits, then finds
  the first one's paper. A client killed midway leaves nothing: the server rolls its
  transaction back and lets the lock go. Unique keys (``lkey``) and ids are primary keys too.
- **Writes are queued** in a transaction and sent as pipelined ``executemany`` runs before the
  next read and at commit: a few round trips per refresh, not several per paper.
- **A member's first connection** brings the papers of their data folder's SQLite ledger in
  (``team.join``), the server's keys winning. A ledger only grows: nothing here deletes a row.
- **Roles.** A reader (a role that may not write) reads every paper already keyed; places are
  then not noted, and what needs a new key or id is one line, exit 2. No message shows a
  password (``team.shown_url``).
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from ...errors import LedgerError, LedgerOffline
from ...keys import SAFE_KEY, key_suffix
from ..identity import Version, hashes
from . import IdentityLedger, PaperState
from .team import bare, join, marked, member_of, own, read_team, secrets, shown_url

#: The schema version, in step with the SQLite ledger's (``sqlite.VERSION``); 4: old_keys.
VERSION = 4
SCHEMA_NAME = "rlpapers"
#: The advisory lock every writer of the ledger holds for its transaction ("rlpl").
LOCK = 0x726C706C
#: How long a member waits for another member's transaction (a big first import) to end.
LOCK_WAIT_S = 600
CONNECT_TIMEOUT_S = 10
INSTALL = "pip install 'rlpapers[team]'"

OLD_KEYS = (
    f'CREATE TABLE IF NOT EXISTS {SCHEMA_NAME}.old_keys (lkey text COLLATE "C" PRIMARY KEY, '
    "key text NOT NULL, id text NOT NULL, retired text NOT NULL)"
)
SCHEMA = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA_NAME};
CREATE TABLE IF NOT EXISTS {SCHEMA_NAME}.meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA_NAME}.papers (
    id text PRIMARY KEY, key text NOT NULL, created text NOT NULL,
    cid text, print bytea, file text, ordinal integer, stamp text);
CREATE TABLE IF NOT EXISTS {SCHEMA_NAME}.ids (alias text PRIMARY KEY, id text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA_NAME}.keys (
    lkey text COLLATE "C" PRIMARY KEY, key text NOT NULL, id text NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_id ON {SCHEMA_NAME}.keys (id);
{OLD_KEYS};
"""
#: Schema version -> the statements that bring a server ledger of that version to the next.
UPGRADES: dict[int, str] = {
    # the keys a paper held before its current one become its old keys (when: not known)
    3: f"{OLD_KEYS}; INSERT INTO {SCHEMA_NAME}.old_keys (lkey, key, id, retired) "
    f"SELECT k.lkey, k.key, k.id, '' FROM {SCHEMA_NAME}.keys k JOIN {SCHEMA_NAME}.papers p "
    "ON p.id = k.id WHERE lower(p.key) <> k.lkey ON CONFLICT DO NOTHING",
}

P = f"{SCHEMA_NAME}."  # table prefix


class PostgresLedger(IdentityLedger):
    """Ids and keys by paper in a PostgreSQL database shared by a team."""

    def __init__(self, url: str, folder: Path) -> None:
        super().__init__()
        self.url = url
        self.folder = folder
        self.where = f"the team ledger {shown_url(url)}"
        self._queue: list[tuple[str, Any]] = []
        self._depth = 0  # nested transactions
        self._keys: set[str] | None = None  # every key (lower case), read once per transaction
        try:
            import psycopg
        except ImportError:
            raise LedgerError(
                f"a postgresql ledger needs psycopg, which is not installed: {INSTALL}"
            ) from None
        self._pg = psycopg
        # psycopg logs what it ignores while closing a lost connection: the error already
        # raised is the one line a user sees
        logging.getLogger("psycopg").addHandler(logging.NullHandler())
        self.con = self._connect()
        try:
            with self.reporting_damage():
                self._check_schema()
                self.writable = self._may_write()
                self.instance = self._meta("instance")
                self.member = member_of(folder) if self.writable else read_team(folder)["member"]
                if self.writable:
                    join(self)
        except BaseException:
            self.con.close()
            raise

    # --- connection and errors ----------------------------------------------------------------

    def _connect(self) -> Any:
        # the process shows in pg_stat_activity, for an administrator (and the tests)
        name = f"rlpapers/{os.getpid()}"
        options: dict[str, Any] = {"autocommit": True, "application_name": name}
        if "connect_timeout" not in self.url:
            options["connect_timeout"] = CONNECT_TIMEOUT_S
        try:
            con = self._pg.connect(self.url, **options)
        except self._pg.Error as error:
            raise self._connect_error(error) from None
        # each statement sees what the member before committed, once the lock is taken (a
        # server whose default is REPEATABLE READ or SERIALIZABLE would read from before it)
        con.isolation_level = self._pg.IsolationLevel.READ_COMMITTED
        return con

    def _connect_error(self, error: Exception) -> LedgerError:
        reason = self._reason(error)
        lowered = reason.lower()
        refused = ("password", "authentication", "does not exist", "permission", "ssl", "invalid")
        if any(word in lowered for word in refused) or isinstance(error, self._pg.ProgrammingError):
            return LedgerError(f"cannot connect to {self.where}: {reason}")
        return LedgerOffline(
            f"cannot reach {self.where} ({reason}); nothing was written: commands that need "
            "no new key still work on the papers already keyed here; run this one again when "
            "the server is back"
        )

    def _reason(self, error: Exception) -> str:
        """The first line of a server or libpq error, without any password or the URL."""
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        text = lines[0] if lines else type(error).__name__
        for prefix in ("connection failed: ", "FATAL:  ", "ERROR:  "):
            text = text.replace(prefix, "")
        text = text.replace(self.url, shown_url(self.url))
        for secret in secrets(self.url):
            text = text.replace(secret, "***")
        return text

    def _error(self, error: Exception) -> LedgerError:
        """What an error met while using the ledger means, as one line."""
        errors = self._pg.errors
        reason = self._reason(error)
        if isinstance(error, errors.LockNotAvailable):
            return LedgerOffline(
                f"{self.where} stayed locked by another member for {LOCK_WAIT_S} s; nothing "
                "was written: run the command again"
            )
        if isinstance(error, errors.TransactionRollback):  # serialization failure, deadlock
            return LedgerOffline(
                f"{self.where} was changed by another member at the same time ({reason}); "
                "nothing was written: run the command again"
            )
        if isinstance(error, self._pg.OperationalError):
            return LedgerOffline(
                f"lost {self.where} ({reason}); nothing was written: run the command again "
                "when the server is back"
            )
        if isinstance(error, (errors.InsufficientPrivilege, errors.ReadOnlySqlTransaction)):
            return self._unwritable(reason)
        return LedgerError(f"{self.where} failed: {reason}")

    def _unwritable(self, reason: str) -> LedgerError:
        return LedgerError(
            f"{self.where} cannot be written by this role ({reason}); nothing was written: "
            "papers already keyed can be read and searched, new ones need a role that may "
            "write the ledger"
        )

    def close(self) -> None:
        self.con.close()

    @contextmanager
    def reporting_damage(self) -> Iterator[None]:
        try:
            yield
        except self._pg.Error as error:
            raise self._error(error) from None

    # --- schema -------------------------------------------------------------------------------

    def _meta(self, name: str) -> str | None:
        row = self.con.execute(f"SELECT value FROM {P}meta WHERE name = %s", (name,)).fetchone()
        return str(row[0]) if row else None

    def _check_schema(self) -> None:
        """Make the tables if the database has none; upgrade an older schema in place where
        this role may; refuse a newer one or one that is not ours."""
        errors = self._pg.errors
        try:
            found = self._meta("version")
        except errors.UndefinedTable:
            found = None
        if found is None:
            found = self._create()
        if not found.isdigit():
            raise LedgerError(f"{self.where} is not an rlpapers ledger (version {found[:20]!r})")
        version = int(found)
        if version > VERSION:
            raise LedgerError(
                f"{self.where} has schema {version}, from a newer rlpapers than this one "
                f"(schema {VERSION}): upgrade rlpapers"
            )
        if version < VERSION:
            self._upgrade(version)

    def _create(self) -> str:
        try:
            with self.con.transaction():
                self.con.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
                for statement in filter(str.strip, SCHEMA.split(";")):
                    self.con.execute(statement)
                self.con.execute(
                    f"INSERT INTO {P}meta VALUES ('version', %s), ('instance', %s) "
                    "ON CONFLICT (name) DO NOTHING",
                    (str(VERSION), uuid.uuid4().hex),
                )
        except self._pg.errors.InsufficientPrivilege as error:
            raise LedgerError(
                f"{self.where} holds no rlpapers ledger yet, and this role may not make one "
                f"({self._reason(error)}): run rlpapers once as the role that owns the database"
            ) from None
        return self._meta("version") or ""

    def _upgrade(self, version: int) -> None:
        try:
            with self.con.transaction():
                self.con.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
                found = int(self._meta("version") or version)
                while found < VERSION:
                    for statement in filter(str.strip, UPGRADES[found].split(";")):
                        self.con.execute(statement)
                    found += 1
                self.con.execute(
                    f"UPDATE {P}meta SET value = %s WHERE name = 'version'", (str(found),)
                )
        except (self._pg.errors.InsufficientPrivilege, KeyError) as error:
            raise LedgerError(
                f"{self.where} has schema {version}, from an older rlpapers, and this role "
                f"may not upgrade it to schema {VERSION} "
                f"({self._reason(error) if not isinstance(error, KeyError) else 'no upgrade'})"
                ": run rlpapers once as the role that owns the database"
            ) from None

    def _may_write(self) -> bool:
        """Whether this role may add papers and keys and note texts (a reader may not)."""
        checks = " AND ".join(
            f"has_table_privilege('{P}{table}', '{right}')"
            for table, right in (
                ("papers", "INSERT"),
                ("papers", "UPDATE"),
                ("ids", "INSERT"),
                ("ids", "UPDATE"),
                ("keys", "INSERT"),
            )
        )
        row = self.con.execute(
            f"SELECT {checks} AND current_setting('default_transaction_read_only') = 'off'"
        ).fetchone()
        return bool(row and row[0])

    # --- transactions -------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction under the ledger's lock; inside another one (``exclusive``),
        part of it. Queued writes are sent before it commits."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._taken, self._keys, self._queue = {}, None, []
        try:
            with self.reporting_damage(), self.con.transaction():
                self.con.execute(f"SET LOCAL lock_timeout = '{LOCK_WAIT_S}s'")
                self.con.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
                self._depth = 1
                yield
                self._flush()
        finally:
            self._depth = 0
            self._taken, self._keys, self._queue = {}, None, []

    def exclusive(self) -> AbstractContextManager[None]:
        """One transaction under the ledger's lock, for a whole assignment of ids and keys."""
        return self.transaction()

    def _write(self, sql: str, params: tuple[Any, ...] | dict[str, Any]) -> None:
        if not self._depth:
            raise RuntimeError("a ledger write outside a transaction")
        self._queue.append((sql, params))

    def _flush(self) -> None:
        """Send the queued writes in order, each run of one statement as one ``executemany``
        (pipelined: no wait for each answer)."""
        queue, self._queue = self._queue, []
        start = 0
        with self.con.cursor() as cursor:
            while start < len(queue):
                sql, end = queue[start][0], start + 1
                while end < len(queue) and queue[end][0] == sql:
                    end += 1
                cursor.executemany(sql, [params for _, params in queue[start:end]])
                start = end

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.reporting_damage():
            if self._queue:
                self._flush()
            return list(self.con.execute(sql, params).fetchall())

    def _needs_writing(self, what: str) -> None:
        if not self.writable:
            raise self._unwritable(f"{what} needs writing")

    # --- reading ------------------------------------------------------------------------------

    def ids_of(self, aliases: Iterable[str]) -> dict[str, str]:
        rows = self._read(f"SELECT alias, id FROM {P}ids WHERE alias = ANY(%s)", (list(aliases),))
        return {str(alias): str(pid) for alias, pid in rows}

    def keys_of(self, ids: Iterable[str]) -> dict[str, str]:
        rows = self._read(f"SELECT id, key FROM {P}papers WHERE id = ANY(%s)", (list(ids),))
        out = {}
        for pid, key in rows:
            if key and not SAFE_KEY.fullmatch(key):
                raise LedgerError(f"{self.where}: {key[:40]!r} in papers is not a citation key")
            out[str(pid)] = str(key)
        return out

    def old_keys(self) -> dict[str, str]:
        rows = self._read(f"SELECT key, id FROM {P}old_keys")
        return {str(key): str(pid) for key, pid in rows}

    def holder(self, key: str) -> str | None:
        rows = self._read(f"SELECT id FROM {P}keys WHERE lkey = lower(%s)", (key,))
        return str(rows[0][0]) if rows else None

    def resolve(self, ref: str) -> str | None:
        rows = self._read(
            f"SELECT id FROM {P}papers WHERE id = %s UNION ALL "
            f"SELECT id FROM {P}ids WHERE alias = %s UNION ALL "
            f"SELECT id FROM {P}keys WHERE lkey = lower(%s) LIMIT 1",
            (ref.lower(), ref.lower(), ref),
        )
        return str(rows[0][0]) if rows else None

    def states_of(self, ids: Iterable[str]) -> dict[str, PaperState]:
        rows = self._read(
            f"SELECT id, cid, file, ordinal, print IS NOT NULL, stamp FROM {P}papers "
            "WHERE id = ANY(%s)",
            (list(set(ids)),),
        )
        return {
            str(pid): PaperState(cid, file, ordinal, bool(printed), bare(stamp))
            for pid, cid, file, ordinal, printed, stamp in rows
        }

    def absent(self, present: set[str], where: Callable[[str, str | None], bool]) -> list[Version]:
        scan = self._read(f"SELECT id, file, stamp FROM {P}papers WHERE print IS NOT NULL")
        wanted = [
            str(pid)
            for pid, file, stamp in scan
            if pid not in present and where(str(file or ""), own(stamp, self.member))
        ]
        if not wanted:
            return []
        rows = self._read(
            f"SELECT id, file, ordinal, print FROM {P}papers WHERE id = ANY(%s)", (wanted,)
        )
        return [
            Version(str(pid), file or "", ordinal or 0, hashes(bytes(print_)))
            for pid, file, ordinal, print_ in rows
        ]

    def _held_from(self, base: str) -> set[str]:
        low = base.lower()
        return {k for k in self._all_keys() if k.startswith(low)}

    def _all_keys(self) -> set[str]:
        """Every key (lower case) any paper holds or held: read once per transaction (one
        query instead of one per new paper); under the ledger's lock it stays true until the
        transaction ends, with the keys given meanwhile added as they are given."""
        if self._keys is None:
            self._keys = {str(k) for (k,) in self._read(f"SELECT lkey FROM {P}keys")}
        return self._keys

    def free_key(self, base: str) -> str:
        """As ``IdentityLedger.free_key``, against the set of every key read once (inside a
        transaction; outside one, a key could be given meanwhile, so the server is asked)."""
        if not self._depth:
            return super().free_key(base)
        held = self._all_keys()
        _, n = self._taken.get(base) or (set(), 0)
        while (base + key_suffix(n)).lower() in held:
            n += 1
        self._taken[base] = (set(), n + 1)
        held.add((base + key_suffix(n)).lower())  # given by the caller next
        return base + key_suffix(n)

    # --- writing (inside a transaction) -------------------------------------------------------
    #
    # One statement per call (data-modifying CTEs where a call touches several tables), so that
    # a refresh's calls of one kind come in runs that ``_flush`` sends as one ``executemany``.

    def add_paper(self, paper_id: str, content_ids: Iterable[str]) -> None:
        self._needs_writing("a new paper")
        self._write(
            f"WITH paper AS (INSERT INTO {P}papers (id, key, created) VALUES (%s, '', %s) "
            "ON CONFLICT (id) DO NOTHING) "
            f"INSERT INTO {P}ids (alias, id) SELECT unnest(%s::text[]), %s "
            "ON CONFLICT (alias) DO NOTHING",
            (
                paper_id,
                time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                sorted({paper_id, *content_ids}),
                paper_id,
            ),
        )

    def add_aliases(self, paper_id: str, content_ids: Iterable[str]) -> None:
        self._needs_writing("a new content id")
        self._write(
            f"INSERT INTO {P}ids (alias, id) SELECT unnest(%s::text[]), %s "
            "ON CONFLICT (alias) DO NOTHING",
            (sorted({paper_id, *content_ids}), paper_id),
        )

    def give_key(self, paper_id: str, key: str) -> None:
        """Make ``key`` the paper's current key; the key it had before, if any, becomes one of
        its old keys (read on the server, in order with the writes queued before)."""
        self._needs_writing("a new key")
        self._write(
            f"WITH before AS (SELECT key FROM {P}papers WHERE id = %(id)s), "
            f"old AS (INSERT INTO {P}old_keys (lkey, key, id, retired) "
            "SELECT lower(key), key, %(id)s, %(now)s FROM before "
            "WHERE key <> '' AND lower(key) <> lower(%(key)s) ON CONFLICT (lkey) DO NOTHING), "
            f"back AS (DELETE FROM {P}old_keys WHERE lkey = lower(%(key)s)), "
            f"held AS (INSERT INTO {P}keys (lkey, key, id) VALUES (lower(%(key)s), %(key)s, "
            "%(id)s) ON CONFLICT (lkey) DO NOTHING) "
            f"UPDATE {P}papers SET key = %(key)s WHERE id = %(id)s",
            {"id": paper_id, "key": key, "now": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        )
        if self._keys is not None:
            self._keys.add(key.lower())

    def note_text(
        self,
        paper_id: str,
        cid: str,
        print_: bytes,
        file: str,
        ordinal: int,
        stamp: str | None = None,
    ) -> None:
        self._needs_writing("a paper's new text")
        self._write(
            f"WITH paper AS (UPDATE {P}papers SET cid = %(cid)s, print = %(print)s, "
            "file = %(file)s, ordinal = %(ordinal)s, stamp = %(stamp)s WHERE id = %(id)s) "
            f"INSERT INTO {P}ids (alias, id) VALUES (%(cid)s, %(id)s) ON CONFLICT (alias) "
            f"DO UPDATE SET id = excluded.id WHERE {P}ids.id <> excluded.id",
            {
                "id": paper_id,
                "cid": cid,
                "print": print_,
                "file": file,
                "ordinal": ordinal,
                "stamp": marked(stamp, self.member),
            },
        )

    def note_place(self, paper_id: str, file: str, ordinal: int, stamp: str | None) -> None:
        """Where a member last saw the paper: a hint for matching edits, not identity; a role
        that may not write skips it."""
        if not self.writable:
            return
        self._write(
            f"UPDATE {P}papers SET file = %s, ordinal = %s, stamp = %s WHERE id = %s",
            (file, ordinal, marked(stamp, self.member), paper_id),
        )
