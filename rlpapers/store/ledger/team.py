"""A member joining a team ledger, and what their data folder remembers of it.

A member's first connection to a server ledger (``postgres.PostgresLedger``) brings in the
papers of their data folder's SQLite ledger (``join``), in one transaction under the ledger's
lock:

- a paper the server knows, by its id or any of its content ids, keeps the server's id and key
  (the server's key wins; a key the member pinned in ``keys.yaml`` wins again on their next
  refresh, as any metadata key does); the member's id and keys for it become its aliases and old
  keys where no other paper holds them, so they still find it;
- a paper the server lacks comes in with its key, or the next free form of it.

Every key that changed for the member waits in ``team.json`` in the data folder until
``rlpapers keys`` has listed it (``take_changes``); ``team.json`` also names the server ledgers
the folder joined, so each join happens once. The member's own ledger is never changed, and
nothing on the server is deleted: a ledger only grows.

URLs are shown without their password or query (``shown_url``): credentials come from the URL,
``PGPASSFILE`` or the ``PG*`` environment variables, and rlpapers writes none.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol
from urllib.parse import parse_qs, urlencode, urlsplit

from ...errors import LedgerError
from ...keys import key_suffix

if TYPE_CHECKING:
    from contextlib import AbstractContextManager


class Shared(Protocol):
    """What joining reads and writes of the server's ledger (``postgres.PostgresLedger``)."""

    folder: Path
    instance: str | None
    member: str

    def transaction(self) -> AbstractContextManager[None]: ...

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    def _write(self, sql: str, params: tuple[Any, ...] | dict[str, Any]) -> None: ...


TEAM_FILE = "team.json"
P = "rlpapers."  # the server's table prefix (``postgres.SCHEMA_NAME``)


def shown_url(url: str) -> str:
    """The URL as messages show it: scheme, user, host, port and database; never a password
    nor the query's parameters (a password may stand there too)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
    except ValueError:
        return "postgresql://…"
    query = parse_qs(parts.query)
    if not host and "host" in query:
        host = query["host"][0]
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


#: Query parameters of a URL that carry a secret, never written anywhere.
_SECRET_PARAMETERS = frozenset({"password", "sslpassword"})


def ledger_place(url: str) -> str:
    """Which ledger a URL names, without its secrets: ``shown_url`` and the query's other
    parameters (``dbname=``, ``port=``, ``host=`` and the like name another database), sorted."""
    try:
        query = parse_qs(urlsplit(url).query, keep_blank_values=True)
    except ValueError:
        return shown_url(url)
    kept = sorted(
        (k, v) for k, values in query.items() if k not in _SECRET_PARAMETERS for v in values
    )
    return shown_url(url) + ("?" + urlencode(kept) if kept else "")


def secrets(url: str) -> list[str]:
    """The passwords a URL carries (in its user part or its query), longest first."""
    found = []
    try:
        parts = urlsplit(url)
        if parts.password:
            found.append(parts.password)
        found += parse_qs(parts.query).get("password", [])
    except ValueError:
        pass
    return sorted({s for s in found if s}, key=len, reverse=True)


# --- joining ------------------------------------------------------------------------------------


class Local(NamedTuple):
    """The rows of a data folder's SQLite ledger, read once for a join."""

    papers: list[Any]  # (id, key, created, cid, print, file, ordinal, stamp)
    aliases: dict[str, list[str]]  # paper id -> its content ids
    keys: dict[str, list[str]]  # paper id -> every key it has had


class Server(NamedTuple):
    """What the server holds that a join compares with."""

    ids: dict[str, str]  # alias -> paper id, for the member's aliases and ids
    keys: dict[str, str]  # paper id -> current key
    held: set[str]  # every key held or once held, lower case


def join(ledger: Shared) -> None:
    """Bring the data folder's SQLite ledger into the server's, once per server ledger."""
    from .sqlite import FILE_NAME

    team = read_team(ledger.folder)
    if not (ledger.folder / FILE_NAME).exists() or ledger.instance in team["imported"]:
        return
    local = _local(ledger.folder)
    with ledger.transaction():
        server = _server(ledger, local)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        changes = [c for row in local.papers if (c := _merge(ledger, local, server, row, stamp))]
    team["imported"].append(ledger.instance)
    team["changes"] += [c for c in changes if c not in team["changes"]]
    write_team(ledger.folder, team)


def _local(folder: Path) -> Local:
    from .sqlite import SqliteLedger

    ledger = SqliteLedger(folder)
    try:
        with ledger.reporting_damage():
            con = ledger.con
            papers = con.execute(
                "SELECT id, key, created, cid, print, file, ordinal, stamp FROM papers "
                "ORDER BY rowid"
            ).fetchall()
            aliases: dict[str, list[str]] = {}
            for alias, pid in con.execute("SELECT alias, id FROM ids"):
                aliases.setdefault(pid, []).append(alias)
            keys: dict[str, list[str]] = {}
            for key, pid in con.execute("SELECT key, id FROM keys"):
                keys.setdefault(pid, []).append(key)
    finally:
        ledger.close()
    return Local(papers, aliases, keys)


def _server(ledger: Shared, local: Local) -> Server:
    wanted = [a for found in local.aliases.values() for a in found] + [p[0] for p in local.papers]
    ids = ledger._read(f"SELECT alias, id FROM {P}ids WHERE alias = ANY(%s)", (wanted,))
    keys = ledger._read(f"SELECT id, key FROM {P}papers")
    held = ledger._read(f"SELECT lkey FROM {P}keys")
    return Server(dict(ids), dict(keys), {str(k) for (k,) in held})


def _merge(
    ledger: Shared, local: Local, server: Server, row: Any, stamp: str
) -> dict[str, str] | None:
    """One paper of the member's ledger into the server's; the change of its key, if any."""
    pid, key, created, cid, print_, file, ordinal, place = row
    mine = local.aliases.get(pid, [])
    target = pid if pid in server.keys else None
    for alias in ([cid] if cid else []) + mine:
        target = target or server.ids.get(alias)
    if target is None:  # new to the server: it comes in with its key, if free
        target = pid
        server.keys[pid] = _free(key, server.held) if key else ""
        ledger._write(
            f"INSERT INTO {P}papers VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO NOTHING",
            (
                pid,
                server.keys[pid],
                created,
                cid,
                print_,
                file,
                ordinal,
                marked(place, ledger.member),
            ),
        )
    now = server.keys.get(target, "")
    for alias in {pid, *mine}:
        if alias not in server.ids:
            server.ids[alias] = target
            ledger._write(
                f"INSERT INTO {P}ids VALUES (%s, %s) ON CONFLICT DO NOTHING", (alias, target)
            )
    # the paper's key and the member's former keys for it keep finding it
    for held in dict.fromkeys([now, key, *local.keys.get(pid, [])]):
        if held and held.lower() not in server.held:
            server.held.add(held.lower())
            ledger._write(
                f"INSERT INTO {P}keys VALUES (lower(%s), %s, %s) ON CONFLICT DO NOTHING",
                (held, held, target),
            )
            if held.lower() != now.lower():
                ledger._write(
                    f"INSERT INTO {P}old_keys VALUES (lower(%s), %s, %s, %s) "
                    "ON CONFLICT DO NOTHING",
                    (held, held, target, stamp),
                )
    return {"id": target, "old": key, "new": now} if key and now and now != key else None


def _free(key: str, held: set[str]) -> str:
    """``key``, or the first of ``key`` + b, c, … that is not in ``held`` (lower case)."""
    n = 0
    while (key + key_suffix(n)).lower() in held:
        n += 1
    return key + key_suffix(n)


# --- whose place -------------------------------------------------------------------------------
#
# A paper's place (file, ordinal, stamp) is where a member last saw it. An edit continues a
# paper only if the paper may have left this corpus: its last file is one of this corpus, gone,
# or changed (``assign.Identities._may_have_left``). A file that stands unchanged elsewhere means
# another corpus of the same member; a colleague's file on a machine both use (a lab server)
# means nothing of the kind. So the server keeps each stamp marked with the data folder that
# noted it, and a place another member noted has no stamp here (``own``): the paper may have
# left it.


def member_of(folder: Path) -> str:
    """The mark of this data folder among the team's members, made once, kept in team.json
    ("" where the folder cannot be written: places are then noted unmarked, as before marks)."""
    team = read_team(folder)
    if not team["member"]:
        team["member"] = uuid.uuid4().hex[:16]
        try:
            write_team(folder, team)
        except OSError:
            return ""
    return str(team["member"])


def marked(stamp: str | None, member: str) -> str | None:
    """A stamp as the server keeps it: with the member who noted it."""
    return f"{stamp}@{member}" if stamp and member else stamp


def bare(stamp: str | None) -> str | None:
    """A stamp without its mark: whoever noted a place, a member who sees the paper in the same
    file, unchanged, at the same ordinal, notes nothing."""
    return stamp.rpartition("@")[0] if stamp and "@" in stamp else stamp


def own(stamp: str | None, member: str) -> str | None:
    """A stamp as the search for an edit's paper reads it: this member's (or one from before
    marks) without its mark; None for another member's, as for a place whose stamp is unknown:
    the paper may have left it."""
    if not stamp or "@" not in stamp:
        return stamp
    bare, _, who = stamp.rpartition("@")
    return bare if who == member else None


# --- team.json ----------------------------------------------------------------------------------


def read_team(folder: Path) -> dict[str, Any]:
    """``imported``: the server ledgers this data folder's ledger went into; ``changes``: the
    keys that changed for the member then, until ``rlpapers keys`` listed them; ``member``:
    the mark of the places this data folder notes (``member_of``), "" until it noted one."""
    path = folder / TEAM_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as error:
        raise LedgerError(f"{path} is unreadable ({error}): move it away") from None
    if not isinstance(data, dict):
        raise LedgerError(f"{path} is not what rlpapers wrote: move it away")
    imported = data.get("imported") or []
    changes = data.get("changes") or []
    member = data.get("member") if isinstance(data.get("member"), str) else ""
    return {"imported": list(imported), "changes": list(changes), "member": member}


def write_team(folder: Path, team: dict[str, Any]) -> None:
    """``team.json``, replaced whole (``files.write_atomic``)."""
    from ...files import write_atomic

    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(team, indent=1, sort_keys=True)
    write_atomic(folder / TEAM_FILE, text.encode("utf-8"))


def take_changes(folder: Path) -> list[dict[str, str]]:
    """The keys that changed when this data folder's ledger joined a team ledger, once: they
    are forgotten as they are handed out."""
    team = read_team(folder)
    if not team["changes"]:
        return []
    write_team(folder, {**team, "changes": []})
    return [c for c in team["changes"] if isinstance(c, dict)]
