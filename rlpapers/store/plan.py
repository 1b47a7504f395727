"""What one refresh of the record store works on: the corpus's abstracts in order, what the
store knew of each record, the ids and keys they get, and the plan of what to write."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from ..key_format import KeyFormat
    from .files import FileState
    from .finish import Finisher
    from .ledger import IdentityLedger


@dataclass
class Item:
    """One parsed abstract in corpus order."""

    cid: str  # content id
    base: str  # the key it would get
    file: str
    fpos: int
    ordinal: int
    joined: bool = False  # a bibliography entry joined to a text paper's content id (``join``)


@dataclass(frozen=True)
class Copies:
    """Where the copies of each abstract are, for telling whether a file's records can change."""

    count: Counter[str]  # content id -> how many copies the corpus holds
    first: dict[str, Item]  # content id -> its first copy, where its record lives
    reordered: bool  # a file moved in the corpus order: merged copies may list another order


class RecordState(NamedTuple):
    """What the store knew of a record before this refresh (a named tuple: one is made for every
    record on every refresh, and a frozen dataclass costs several times as much to make)."""

    key: str
    file: str
    ordinal: int
    copies: int
    digest: str


@dataclass
class Identity:
    """Paper id and key of every content id of the corpus, and the overrides' field changes."""

    ids: dict[str, str]  # content id -> paper id
    keys: dict[str, str]  # paper id -> key
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)  # paper id -> fields
    # the changes are those the stored records were finished with (their digest is the one the
    # last refresh stored): a paper's changes then need not be applied again to keep its record
    same_changes: bool = False
    # a bibliography entry's content id -> the text paper's it is joined to (``join``): one
    # paper, whose record merges both
    joined: dict[str, str] = field(default_factory=dict)

    @property
    def changes_digest(self) -> str:
        text = json.dumps(self.changes, sort_keys=True, ensure_ascii=False, default=list)
        return hashlib.sha1(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Plan:
    """What a refresh writes, decided before it writes anything."""

    corpus: list[FileState]
    previous: dict[str, RecordState]  # paper id -> what the store knew of its record
    identity: Identity
    copies: Copies
    by_file: dict[str, list[Item]]  # corpus path -> its abstracts in order
    stable: set[str]  # corpus files whose records stand as they are: not finished again
    # the metadata and the parser are as the stored records saw them: a re-parsed file's rows
    # that are as they were keep their records
    compare: bool
    finisher: Finisher
    counter: int  # the change counter the written records get


def kept(
    items: list[Item], previous: dict[str, RecordState], identity: Identity, copies: Copies
) -> bool:
    """Whether the stored records of these abstracts stand as they are, given that each one's
    parse is unchanged: every paper known with the same key, place and copy count, and no
    metadata change for it other than those the stored records were finished with."""
    for item in items:
        pid = identity.ids[item.cid]
        record = previous.get(pid)
        count = copies.count[item.cid]
        where = copies.first[item.cid]
        if (
            record is None
            or record.copies != count
            or (count > 1 and copies.reordered)
            or record.key != identity.keys[pid]
            or (record.file, record.ordinal) != (where.file, where.ordinal)
            or (pid in identity.changes and not identity.same_changes)
        ):
            return False
    return True


def digest(record: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:16]


class Source(Protocol):
    """What a refresh reads of the store it refreshes (``Store``)."""

    encoding: str | None
    files: list[Path]
    progress: Callable[[int, int], None] | None
    key_format: KeyFormat | None

    @property
    def con(self) -> sqlite3.Connection: ...

    @property
    def ledger(self) -> IdentityLedger: ...

    @property
    def keyed_by(self) -> str: ...

    def _meta(self, name: str, default: str = "") -> str: ...
