"""Reading the record store: every record in corpus order, records by id, what changed since a
search view was built, the vocabulary, and lookups by what a user typed.

``Reads`` is the reading half of ``Store`` (``rlpapers.store``), which holds the connection,
the lock, healing and freshness; a read first brings the records up to date.

Damage met while reading (a garbled record, a broken page) is healed like damage met on
opening: the store is rebuilt from the corpus files, with a note, and read again. The rebuilt
store holds the same records in the same order, since the ledger keeps their ids.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..model import Paper
from .db import busy, chunks, collector_paused, damaged
from .files import CORPUS
from .records import HEAD_SQL, head_counts, paper_of, text_of

if TYPE_CHECKING:
    from ..errors import IndexBusyError
    from ..lookup import Lookup
    from .find import Found
    from .ledger import IdentityLedger

T = TypeVar("T")


class Reads:
    """The reads of a ``Store``: what it provides them is declared here."""

    names: dict[str, str]
    data_dir: Path
    ledger_url: str | None

    if TYPE_CHECKING:

        @property
        def path(self) -> Path: ...

        @property
        def ledger(self) -> IdentityLedger: ...

        @property
        def con(self) -> sqlite3.Connection: ...

        @property
        def ledger_name(self) -> str: ...

        def refresh(self) -> None: ...

        def heal(self, error: sqlite3.DatabaseError) -> None: ...

        def busy_error(self, error: sqlite3.DatabaseError) -> IndexBusyError: ...

    def reading(self, read: Callable[[], T]) -> T:
        """``read()`` on the fresh records; once more after healing damage it met (the store's
        own reads, and readers beside it such as the sentence vectors)."""
        self.refresh()
        try:
            return read()
        except sqlite3.DatabaseError as error:
            if busy(error):
                raise self.busy_error(error) from None
            if not damaged(error):
                raise
            self.heal(error)
        self.refresh()
        return read()

    def papers(self) -> Iterator[Paper]:
        """Every record in corpus order (file order, then place in the file). Damage met on
        the way heals, and the stream goes on with the records it has not given yet (each
        record comes once, even if a corpus file changed meanwhile)."""
        given: list[str] = []
        skip: frozenset[str] = frozenset()  # after a heal: the ids given before it
        for attempt in range(2):
            self.refresh()
            con = self.con
            try:
                for (data,) in con.execute("SELECT data FROM records ORDER BY fpos, ordinal"):
                    paper = paper_of(data)
                    if paper.id not in skip:
                        given.append(paper.id)
                        yield paper
                return
            except sqlite3.DatabaseError as error:
                if busy(error):
                    raise self.busy_error(error) from None
                replaced = self.__dict__.get("con") is not con  # healed by another reader
                if attempt or not (damaged(error) or replaced):
                    raise
                if not replaced:
                    self.heal(error)
                skip = frozenset(given)

    def head_counts(self) -> tuple[int, dict[str, Counter[Any]]]:
        """The number of records, and for each field of their heads (``records.HEAD``: the
        fields ``stats`` counts, and the abstracts' LaTeX commands) how many records have each
        value: read in one query and one ``json.loads``, without decoding any abstract."""
        return self.reading(self._head_counts)

    def _head_counts(
        self, con: sqlite3.Connection | None = None
    ) -> tuple[int, dict[str, Counter[Any]]]:
        count, heads = (
            (con or self.con)
            .execute(f"SELECT count(*), '[' || group_concat({HEAD_SQL}, ',') || ']' FROM records")
            .fetchone()
        )
        with collector_paused():
            return head_counts(heads, count)

    def head_counts_apart(self) -> tuple[int, dict[str, Counter[Any]]]:
        """``head_counts`` through a read-only connection of its own, with no refresh and no
        healing (errors come through): for a process forked beside this one
        (``workers.beside``), which must not use this process's connection."""
        from .db import BUSY_TIMEOUT

        path = self.path.resolve()
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT)
        try:
            return self._head_counts(con)
        finally:
            con.close()

    def abstracts(self) -> Iterator[str]:
        """The records' abstracts in no particular order, each decoded when it is reached (a
        reader may stop early). Not refreshed or healed: read it inside ``reading``."""
        for (data,) in self.con.execute("SELECT data FROM records"):
            yield text_of(data)[1]

    def count(self) -> int:
        return self.reading(
            lambda: int(self.con.execute("SELECT count(*) FROM records").fetchone()[0])
        )

    def fetch(self, ids: Iterable[str]) -> dict[str, Paper]:
        """Records by id (ids that name none are left out)."""
        wanted = list(dict.fromkeys(ids))
        return self.reading(lambda: self._fetch(wanted))

    def _fetch(self, wanted: list[str]) -> dict[str, Paper]:
        out: dict[str, Paper] = {}
        for part in chunks(wanted):
            marks = ",".join("?" * len(part))
            for pid, data in self.con.execute(
                f"SELECT id, data FROM records WHERE id IN ({marks})", part
            ):
                out[pid] = paper_of(data)
        return out

    def changed_since(self, counter: int) -> tuple[Iterator[Paper], list[str]]:
        """Records changed after ``counter``, and ids removed after it. Damage met on the way
        heals the store and is raised: a search view then builds itself anew."""
        self.refresh()
        try:
            removed = [
                row[0]
                for row in self.con.execute("SELECT id FROM removed WHERE changed > ?", (counter,))
            ]
            rows = self.con.execute(
                "SELECT data FROM records WHERE changed > ? ORDER BY fpos, ordinal", (counter,)
            )
        except sqlite3.DatabaseError as error:
            self._heal_if_damaged(error)
            raise
        return self._decoded(rows), removed

    def _decoded(self, rows: Iterable[tuple[Any, ...]]) -> Iterator[Paper]:
        try:
            for (data,) in rows:
                yield paper_of(data)
        except sqlite3.DatabaseError as error:
            self._heal_if_damaged(error)
            raise

    def _heal_if_damaged(self, error: sqlite3.DatabaseError) -> None:
        if damaged(error):
            self.heal(error)

    def vocabulary(self) -> dict[str, int]:
        """Surface words of the corpus with their counts (for spelling suggestions)."""
        return self.reading(lambda: _summed(self._word_counts()))

    def word_counts(self) -> list[dict[str, int]]:
        """Each corpus file's words with their counts, as ``vocabulary`` sums them (in that
        order): a reader that needs the sums of a few words only sums those."""
        return self.reading(self._word_counts)

    def _word_counts(self) -> list[dict[str, int]]:
        from .parsing import unpack_counts

        out = []
        files = self.con.execute("SELECT path, sha1 FROM files WHERE kind = ?", (CORPUS,))
        for path, sha1 in files.fetchall():
            row = self.con.execute(
                "SELECT vocab FROM parses WHERE sha1 = ? AND name = ?",
                (sha1, self.names.get(path) or Path(path).name),
            ).fetchone()
            with collector_paused():
                out.append(unpack_counts(row[0]) if row else {})
        return out

    def keys(self) -> list[tuple[str, str, str]]:
        """(id, key, source file) of every record, in corpus order."""
        return self.reading(
            lambda: list(
                self.con.execute("SELECT id, key, file FROM records ORDER BY fpos, ordinal")
            )
        )

    def joined_keys(self) -> list[tuple[str, str, str]]:
        """(id, key before, key now) of the papers whose key changed when the data folder's
        ledger joined the team ledger, and still differs (a pin may have brought it back):
        each is listed once, then forgotten."""
        if not self.ledger_url:
            return []
        from .ledger import is_server

        if not is_server(self.ledger_url):
            return []
        from .ledger.team import take_changes

        # a refresh (a ledger the records were not keyed by) opens the ledger, and its first
        # connection brings the data folder's ledger in; fresh records need no server
        now = {pid: key for pid, key, _ in self.keys()}
        changes = take_changes(self.data_dir)
        return [
            (c["id"], c["old"], now[c["id"]])
            for c in changes
            if now.get(c["id"], c["old"]) != c["old"]
        ]

    # --- lookups ------------------------------------------------------------------------------

    @cached_property
    def lookup(self) -> Lookup:
        from .find import SqlLookup

        return SqlLookup(self)

    def get(self, ref: str) -> Paper:
        """The paper an id, id prefix (≥ 4 characters), key or former id/key names."""
        return self.reading(lambda: self.lookup.get(ref))

    def find(self, refs: Iterable[str]) -> Found:
        """Many references at once, in linear time; each paper once, unknown ones named."""
        from .find import find

        wanted = list(refs)  # read once: a second try after healing reads the same list
        return self.reading(lambda: find(self.lookup, wanted))


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    total: Counter[str] = Counter()
    with collector_paused():
        for each in counts:
            total.update(each)
    return dict(total)
