"""Finding records in the store by what a user typed: the lookup rule (``rlpapers.lookup``) over
the store's tables and the identity ledger. Imported when a command looks papers up (``show``,
``export --ids``), not by those that only list or search them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..lookup import Lookup, resolve_many
from ..model import Paper
from .records import paper_of

if TYPE_CHECKING:
    from .ledger import Ledger


class Source(Protocol):
    """What a lookup reads (a store's ``Reads``): the connection, records by id, and the ledger
    in the data folder."""

    data_dir: Path

    @property
    def con(self) -> sqlite3.Connection: ...

    @property
    def ledger(self) -> Ledger: ...

    def fetch(self, ids: Iterable[str]) -> dict[str, Paper]: ...


class Found(NamedTuple):
    """What a list of references resolved to: papers in the order asked (each once), and the
    references that named none, each with a close key where there is one."""

    papers: list[Paper]
    unknown: list[tuple[str, str | None]]


def find(lookup: Lookup, refs: Iterable[str]) -> Found:
    """Many references at once, in linear time; each paper once, unknown ones named."""
    papers, unknown = resolve_many(lookup, refs)
    return Found(papers, unknown)


class SqlLookup(Lookup):
    """The lookup rule (``rlpapers.lookup``) over the store's tables and the ledger."""

    def __init__(self, store: Source) -> None:
        self.store = store

    @property
    def con(self) -> sqlite3.Connection:
        return self.store.con

    def by_id(self, ref: str) -> Paper | None:
        row = self.con.execute("SELECT data FROM records WHERE id = ?", (ref,)).fetchone()
        return paper_of(row[0]) if row else None

    def by_key(self, ref: str) -> Paper | None:
        row = self.con.execute(
            "SELECT data FROM records WHERE key = ? COLLATE NOCASE", (ref,)
        ).fetchone()
        return paper_of(row[0]) if row else None

    def by_prefix(self, ref: str) -> list[Paper]:
        rows = self.con.execute(
            "SELECT data FROM records WHERE id >= ? AND id < ? LIMIT 2", (ref, ref + "\uffff")
        ).fetchall()
        return [paper_of(row[0]) for row in rows]

    def by_former(self, ref: str) -> Paper | None:
        path = self.store.data_dir / "ledger.db"
        if not path.exists():
            return None
        pid = self.store.ledger.resolve(ref)
        return self.by_id(pid) if pid else None

    def all_keys(self) -> list[str]:
        return [row[0] for row in self.con.execute("SELECT key FROM records")]

    def ids_and_keys(self) -> Iterator[tuple[str, str]]:
        yield from self.con.execute("SELECT id, key FROM records")

    def many(self, ids: list[str]) -> dict[str, Paper]:
        return self.store.fetch(ids)
