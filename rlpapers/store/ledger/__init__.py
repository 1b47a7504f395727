"""The identity ledger: each paper's id and citation key, given once and kept.

One interface (``IdentityLedger``), two engines:

- ``sqlite.SqliteLedger`` (the default): one SQLite file, ``ledger.db``, in the data folder
  (``RLPAPERS_DATA_DIR`` or the platform's user data folder). Shared by every corpus read with
  that data folder.
- ``postgres.PostgresLedger``: a PostgreSQL database a lab already runs (``ledger:
  postgresql://…`` in the config, ``RLPAPERS_LEDGER`` or ``--ledger``), shared by every member
  connected to it, so co-authors get the same id and key for the same paper. Needs psycopg 3
  (the ``team`` extra).

Both keep the same tables (papers, ids, keys, old keys) and are used the same way by a refresh
(``refresh.Identities``): reads, then writes inside ``transaction``. ``exclusive`` wraps one
whole assignment of ids and keys, so that what it read is still true when it writes: on a
server shared between machines it is one transaction under a server-side lock; in the SQLite
file, where the record store's lock already keeps one refresh per corpus, it costs nothing.

The ledger is precious: nothing in it is rebuilt, and a damaged ledger is reported
(``LedgerError``), never replaced. It holds everything identity needs, so deleting everything
rebuildable (the index folder) never moves an id or a key.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import NamedTuple

from ...errors import LedgerError
from ...keys import key_suffix
from ..identity import Version

#: The URL schemes that put the ledger on a PostgreSQL server.
SERVER_SCHEMES = ("postgresql://", "postgres://")


class PaperState(NamedTuple):
    """What the ledger knows of a paper's latest text."""

    cid: str | None
    file: str | None
    ordinal: int | None
    printed: bool
    stamp: str | None = None


class IdentityLedger(ABC):
    """Ids and keys by paper. Writers call the ``add``/``give``/``note`` methods inside
    ``transaction`` (itself inside ``exclusive`` for one whole assignment)."""

    #: Where the ledger is, for messages: a file path or a URL without its password.
    where: str

    def __init__(self) -> None:
        self._taken: dict[str, tuple[set[str], int]] = {}  # free_key's memory, per transaction

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; damage met in it is a ``LedgerError``."""

    def exclusive(self) -> AbstractContextManager[None]:
        """Every read and write inside it decided together: no other writer changes the ledger
        in between. Nothing by default (one writer at a time already)."""
        return _nothing()

    @abstractmethod
    def reporting_damage(self) -> AbstractContextManager[None]:
        """Errors met inside the ledger as ``LedgerError`` naming the ledger."""

    def damaged(self, why: str) -> LedgerError:
        """The error for damage found in the ledger's rows (``why``), naming the ledger."""
        return LedgerError(f"{self.where} is damaged ({why})")

    # --- reading ------------------------------------------------------------------------------

    @abstractmethod
    def ids_of(self, aliases: Iterable[str]) -> dict[str, str]:
        """Content id -> paper id, for the aliases the ledger knows."""

    @abstractmethod
    def keys_of(self, ids: Iterable[str]) -> dict[str, str]:
        """Paper id -> its current key."""

    @abstractmethod
    def holder(self, key: str) -> str | None:
        """The paper that has (or once had) ``key``, compared without case."""

    @abstractmethod
    def old_keys(self) -> dict[str, str]:
        """Every old key (a key its paper had before its current one) -> the paper's id."""

    @abstractmethod
    def resolve(self, ref: str) -> str | None:
        """The paper id behind an id, a content id or any key the paper has had."""

    @abstractmethod
    def states_of(self, ids: Iterable[str]) -> dict[str, PaperState]:
        """Paper id -> what the ledger knows of its latest text."""

    @abstractmethod
    def absent(self, present: set[str], where: Callable[[str, str | None], bool]) -> list[Version]:
        """The papers with a fingerprint that are not in ``present`` and whose last file and
        its stamp then ``where`` accepts, as they last stood."""

    # --- writing (inside a transaction) -------------------------------------------------------

    @abstractmethod
    def add_paper(self, paper_id: str, content_ids: Iterable[str]) -> None: ...

    @abstractmethod
    def add_aliases(self, paper_id: str, content_ids: Iterable[str]) -> None: ...

    @abstractmethod
    def give_key(self, paper_id: str, key: str) -> None:
        """Make ``key`` the paper's current key; the caller checked that no other paper holds it."""

    @abstractmethod
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

    @abstractmethod
    def note_place(self, paper_id: str, file: str, ordinal: int, stamp: str | None) -> None:
        """The paper now stands at ``file``/``ordinal``, a file whose size and mtime are
        ``stamp``."""

    @abstractmethod
    def _held_from(self, base: str) -> set[str]:
        """Every key (lower-cased) that a paper holds or held and that begins with ``base``."""

    def free_key(self, base: str) -> str:
        """``base``, or ``base`` + b, c, … : the first that no paper has ever held. Inside one
        transaction, the keys beginning with ``base`` are read once and the search goes on
        from where it stopped, so giving N papers one base key costs N steps, not N²."""
        taken, n = self._taken.get(base) or (self._held_from(base), 0)
        while True:
            candidate = base + key_suffix(n)
            n += 1
            if candidate.lower() in taken:
                continue
            taken.add(candidate.lower())  # given by the caller next
            if self.holder(candidate) is None:  # a key given meanwhile by another way
                self._taken[base] = (taken, n)
                return candidate


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def is_server(url: str | None) -> bool:
    """Whether a ledger setting names a PostgreSQL server (else the default SQLite file)."""
    return bool(url) and str(url).lower().startswith(SERVER_SCHEMES)


def open_ledger(folder: Path, url: str | None = None) -> IdentityLedger:
    """The ledger of a data folder, or the team ledger on the server ``url`` names
    (``postgresql://…``; the data folder then keeps only what it remembers of the server)."""
    if is_server(url):
        from .postgres import PostgresLedger

        return PostgresLedger(str(url), folder)
    from .sqlite import SqliteLedger

    return SqliteLedger(folder)


# The SQLite engine under its name from before the two engines: ``Ledger(folder)`` is the ledger
# file of a data folder. (Imported last: it builds on the interface above.)
from .sqlite import FILE_NAME, VERSION  # noqa: E402
from .sqlite import SqliteLedger as Ledger  # noqa: E402

__all__ = [
    "FILE_NAME",
    "VERSION",
    "IdentityLedger",
    "Ledger",
    "PaperState",
    "is_server",
    "open_ledger",
]
