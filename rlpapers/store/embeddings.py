"""The embeddings table of the record store: one sentence vector per paper, for semantic search.

    embeddings(id, model, digest, vector)

``id`` is the paper's id; ``model`` names the model and its hash (``name:sha256-prefix``), so a
different model re-embeds; ``digest`` is a hash of the text that was embedded (title and
abstract), so an edited paper is re-embedded and an unchanged one never is; ``vector`` holds the
raw bytes (rlpapers.semantic decides their layout). Rows are written in batches, one transaction
each, so an interrupted ``embed`` keeps what it finished. ``embeddings_complete`` remembers the store's change counter
at which no vector was missing, so a search on an unchanged store skips checking 75k digests.
The tables are created the first time
semantic search is used: a store that never sees it pays nothing, and, like the rest of
``store.db``, it is rebuildable (by embedding again).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from .db import chunks, transaction
from .records import text_of

DDL = """
CREATE TABLE IF NOT EXISTS embeddings (id TEXT PRIMARY KEY, model TEXT NOT NULL,
                         digest TEXT NOT NULL, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings_complete (model TEXT PRIMARY KEY, state TEXT NOT NULL);
"""


#: The high byte of a float16 (stored little-endian, as ``rlpapers.semantic`` writes them) whose
#: exponent bits are all set: the value is infinite or NaN.
_FINITE = bytes(b for b in range(256) if b & 0x7C != 0x7C)


def finite(blob: bytes) -> bool:
    """Whether every float16 of a stored vector is a finite number: its high bytes, with the
    finite ones deleted, leave nothing (a C-speed pass, a microsecond for a vector)."""
    return not blob[1::2].translate(None, _FINITE)


class EmbeddingTable:
    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        for statement in DDL.split(";"):
            if statement.strip():
                con.execute(statement)

    def digests(self, model: str) -> dict[str, str]:
        """id -> digest of the text each stored vector of ``model`` was made from."""
        rows = self.con.execute("SELECT id, digest FROM embeddings WHERE model = ?", (model,))
        return dict(rows.fetchall())

    def complete_at(self, model: str) -> str:
        """The store state (instance and change counter) at which every record last had a
        current vector of ``model``; "" when unknown."""
        row = self.con.execute(
            "SELECT state FROM embeddings_complete WHERE model = ?", (model,)
        ).fetchone()
        return row[0] if row else ""

    def mark_complete(self, model: str, state: str) -> None:
        with transaction(self.con):
            self.con.execute("DELETE FROM embeddings_complete")
            self.con.execute(
                "INSERT INTO embeddings_complete (model, state) VALUES (?, ?)", (model, state)
            )

    def texts(self) -> Iterator[tuple[str, str, str]]:
        """(id, title, abstract) of every record: what is embedded, without building Papers.
        ``Garbled`` when a record is not one with text in both."""
        rows = self.con.execute("SELECT id, data FROM records ORDER BY fpos, ordinal")
        for pid, data in rows:
            yield pid, *text_of(data)

    def put(self, model: str, rows: Iterable[tuple[str, str, bytes]]) -> None:
        """Store ``(id, digest, vector)`` rows in one transaction (replacing older ones)."""
        with transaction(self.con):
            self.con.executemany(
                "INSERT OR REPLACE INTO embeddings (id, model, digest, vector) VALUES (?, ?, ?, ?)",
                [(pid, model, digest, vector) for pid, digest, vector in rows],
            )

    def vectors(self, model: str, size: int) -> Iterator[tuple[str, bytes]]:
        """(id, vector bytes) of every stored vector of ``model`` whose paper still exists.
        A vector that is not ``size`` bytes long (cut short or grown), or that holds a value
        that is not a finite number (NaN, infinity: no search could ever match it), is damage:
        it is left out, dropped with a note, and so embedded again by the next search that
        needs it."""
        damaged: list[str] = []
        rows = self.con.execute(
            "SELECT e.id, e.vector FROM embeddings e JOIN records r ON r.id = e.id"
            " WHERE e.model = ?",
            (model,),
        )
        try:
            for pid, blob in rows:
                if len(blob) == size and finite(blob):
                    yield pid, blob
                else:
                    damaged.append(pid)
        finally:
            if damaged:
                self._drop_damaged(damaged)

    def _drop_damaged(self, ids: list[str]) -> None:
        import warnings

        from ..errors import IndexNotice

        self.drop(ids)
        with transaction(self.con):
            self.con.execute("DELETE FROM embeddings_complete")
        count = f"{len(ids)} sentence vector{'s' if len(ids) != 1 else ''}"
        warnings.warn(
            IndexNotice(
                f"{count} {'was' if len(ids) == 1 else 'were'} damaged (the wrong length, or "
                "values that are not finite numbers); dropped, and embedded again by the next "
                f"search that needs {'it' if len(ids) == 1 else 'them'}"
            ),
            stacklevel=4,
        )

    def prune(self, model: str) -> int:
        """Drop vectors of other models and of papers that are gone; returns how many."""
        with transaction(self.con):
            cursor = self.con.execute(
                "DELETE FROM embeddings WHERE model != ? OR id NOT IN (SELECT id FROM records)",
                (model,),
            )
            if cursor.rowcount:
                self.con.execute("DELETE FROM embeddings_complete")
        return cursor.rowcount

    def count(self, model: str) -> int:
        """Vectors of ``model`` whose paper still exists."""
        row = self.con.execute(
            "SELECT count(*) FROM embeddings e JOIN records r ON r.id = e.id WHERE e.model = ?",
            (model,),
        )
        return int(row.fetchone()[0])

    def drop(self, ids: list[str]) -> None:
        with transaction(self.con):
            for part in chunks(ids):
                marks = ",".join("?" * len(part))
                self.con.execute(f"DELETE FROM embeddings WHERE id IN ({marks})", part)
