"""Parsing changed corpus files, on two processes when there is enough text to pay for it."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ParseWarning, RlpapersError
from ..workers import die_with_parent, stops_held
from .db import Garbled, loads
from .identity import fingerprint

if TYPE_CHECKING:
    from multiprocessing.queues import SimpleQueue

PARALLEL_BYTES = 2_000_000  # below this much text to parse, one process is quicker
_WORDS = re.compile(r"[a-z][a-z\-']+[a-z]")

Titles = Mapping[str, tuple[str, str]]


@dataclass(frozen=True)
class Parsed:
    """One file's parse: its row of the store's ``parses`` table (``stored``: content ids and base
    keys as JSON, word counts and rows as compressed JSON), what the parser warned about, and
    the rows themselves when the job asked to keep them.

    The worker that parsed the file encodes the row, so what comes back to the refreshing
    process is a few strings, not a tree of dicts for every paper: a 4,000-paper file's rows
    cost tens of MB there, and a pickle and an unpickle besides."""

    stored: tuple[str, str, bytes, bytes]
    warnings: list[str]
    rows: list[dict[str, Any]] | None = None
    prints: bytes = b""  # ``pack_prints`` of each paper's identity fingerprint


Job = tuple[bytes, str, Titles, str | None, bool]  # bytes, file name, titles, encoding, keep rows


def parse_many(jobs: Iterable[Job], count: int, size: int) -> Iterator[Parsed]:
    """Parse each job (``count`` of them, ``size`` bytes in all), in order. Jobs are taken from
    the iterable only a few ahead of the results, so at most a few files are in memory."""
    if count < 2 or size < PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
        yield from (parse_one(job) for job in jobs)
        return
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import SimpleQueue as new_queue

    # The workers leave Ctrl-C to this process, which stops them at once: a worker may be
    # minutes into a large file, and a pool that waits for it keeps the user waiting as long.
    # (A worker that dies, killed for memory, breaks the pool: an error, never a wait.)
    started: SimpleQueue[int] = new_queue()
    pool = ProcessPoolExecutor(2, initializer=_worker_started, initargs=(started, os.getpid()))
    try:
        pending: deque[Future[Parsed]] = deque()
        for job in jobs:
            with stops_held():  # the first submit forks the workers
                pending.append(pool.submit(parse_one, job))
            if len(pending) >= 4:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        raise RlpapersError(
            "a process parsing the corpus ended abruptly (killed, perhaps for lack of memory); "
            "the records are as they were: run the command again"
        ) from None
    except BaseException:  # Ctrl-C, a failed parse, a reader that stopped early
        forked = list(getattr(pool, "_processes", None) or ())  # before shutdown forgets them
        results = getattr(pool, "_result_queue", None)  # (the same)
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_workers(started, forked)
        _end_results(results)
        raise
    finally:
        pool.shutdown()


def _end_results(results: Any) -> None:
    """Close this process's end of the pool's result pipe (``results``, the pool's queue) for
    writing. A worker stopped half-way through sending its parse leaves half a message there;
    while this process also holds the pipe open, the pool's reader waits for the rest for ever
    (and the process, which waits for that reader at exit, never ends). Closed, the reader meets
    the end of the pipe instead."""
    writer = getattr(results, "_writer", None)
    if writer is not None:
        try:
            writer.close()
        except OSError:
            pass


def _worker_started(started: SimpleQueue[int], parent: int) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):  # not the parent's handlers: a stop is a stop here
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    die_with_parent(parent)
    started.put(os.getpid())


def _stop_workers(started: SimpleQueue[int], forked: list[int]) -> None:
    """End the workers: those that said they started, and those the pool forked (a worker
    stopped before its start reported would be waited for, as long as its file takes)."""
    import signal

    pids = set(forked)
    while not started.empty():
        pids.add(started.get())
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:  # it had ended
            pass


def parse_one(job: Job) -> Parsed:
    from ..keys import base_key
    from ..readers import read_papers

    data, name, titles, encoding, keep = job
    with warnings.catch_warnings(record=True) as caught:  # a worker process cannot show them
        warnings.simplefilter("always")
        papers = read_papers(data, name, encoding, titles)
    counts: Counter[str] = Counter()
    for paper in papers:  # one paper at a time: no list of every word of the file
        counts.update(_WORDS.findall(f"{paper.name} {paper.title} {paper.abstract}".lower()))
    rows = [p.to_dict() for p in papers]
    stored = (
        json.dumps([p.id for p in papers]),
        json.dumps([base_key(p) for p in papers]),
        pack_counts(counts),
        pack(rows),
    )
    messages = [str(w.message) for w in caught if issubclass(w.category, ParseWarning)]
    # A worker makes every paper's identity fingerprint, beside the other worker (a big first
    # build needs them all); the refreshing process itself makes only those it needs (an edit
    # of one abstract in a file of thousands needs one).
    from multiprocessing import parent_process

    prints = pack_prints([fingerprint(p.abstract) for p in papers]) if parent_process() else b""
    return Parsed(stored, messages, rows if keep else None, prints)


class WorkerPrints:
    """The fingerprints the parse workers made, kept through one refresh until the ledger has
    them: in a table of the store connection's temporary database, a file SQLite deletes (in
    the store they were a fifth of it, 32 MB at 75,000 papers; in memory they raised a 75k
    build's peak by 30 MB). Best effort: where SQLite cannot write its temporary files (a full
    or read-only TMPDIR) they are let go, and the refresh makes the fingerprints it needs from
    the texts, as for a file it did not parse."""

    TABLE = "temp.fresh_prints"

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.kept = self._try(
            f"CREATE TEMP TABLE IF NOT EXISTS {self.TABLE} (sha1 TEXT NOT NULL, name TEXT "
            "NOT NULL, prints BLOB NOT NULL, PRIMARY KEY (sha1, name))"
        ) and self._try(f"DELETE FROM {self.TABLE}")

    def _try(self, sql: str, *params: Any) -> bool:
        try:
            self.con.execute(sql, params)
        except sqlite3.OperationalError:  # the temporary file cannot be written
            return False
        return True

    def keep(self, sha1: str, name: str, prints: bytes) -> None:
        if self.kept and prints:
            sql = f"INSERT OR REPLACE INTO {self.TABLE} VALUES (?, ?, ?)"
            self.kept = self._try(sql, sha1, name, prints)

    def get(self, sha1: str, name: str, count: int) -> list[bytes] | None:
        """The ``count`` fingerprints of a parse, in order; None where none were kept."""
        if not self.kept:
            return None
        sql = f"SELECT prints FROM {self.TABLE} WHERE sha1 = ? AND name = ?"
        row = self.con.execute(sql, (sha1, name)).fetchone()
        return None if row is None else unpack_prints(row[0], count)

    def close(self) -> None:
        """Drop the table (after an error a statement may still hold it: it then goes with the
        connection)."""
        self._try(f"DROP TABLE IF EXISTS {self.TABLE}")


def pack_prints(prints: list[bytes]) -> bytes:
    """Fingerprints (``identity.fingerprint``) of a file's papers, in order, as one value:
    each is a byte giving its count of word hashes, then the hashes."""
    return b"".join(bytes((len(p) // 4,)) + p for p in prints)


def unpack_prints(blob: bytes, count: int) -> list[bytes]:
    """``pack_prints``'s fingerprints; ``Garbled`` unless there are ``count`` of them."""
    out = []
    at = 0
    while at < len(blob):
        end = at + 1 + 4 * blob[at]
        out.append(blob[at + 1 : end])
        at = end
    if at != len(blob) or len(out) != count:
        raise Garbled("garbled fingerprints of a parse")
    return out


#: zlib level of the parse rows: 4 stores them in 0.31 of their JSON, 1 in 0.36, 6 in 0.29 at
#: three times the time of 4 (the rows of 4,900 arXiv papers: 0.11 s at 4, 0.07 s at 1).
PACK_LEVEL = 4


def pack(rows: list[dict[str, Any]]) -> bytes:
    """A file's parse rows as compressed JSON: they repeat every abstract the finished records
    hold, and are read only when a file's records are finished again."""
    return _packed(rows)


def pack_counts(counts: Mapping[str, int]) -> bytes:
    """A file's word counts as compressed JSON (9.6 → 3.5 MB at 75,000 arXiv papers): read
    whole by ``stats`` and spelling suggestions, never in part."""
    return _packed(dict(counts))


def _packed(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False).encode("utf-8"), PACK_LEVEL)


def _unpacked(blob: Any, kind: type, what: str) -> Any:
    """``_packed``'s value, of ``kind``; ``Garbled`` for anything else (the store heals)."""
    try:
        return loads(zlib.decompress(blob), kind, what)
    except (zlib.error, TypeError) as error:
        raise Garbled(f"garbled {what} ({error})") from None


def unpack_counts(blob: Any) -> dict[str, int]:
    """``pack_counts``'s counts; ``Garbled`` for anything else (the store heals)."""
    counts: dict[str, int] = _unpacked(blob, dict, "word counts")
    if not set(map(type, counts.values())) <= {int}:
        raise Garbled("garbled word counts (a count that is no number)")
    return counts


def compact_parses(con: sqlite3.Connection) -> None:
    """Bring the parses of a store of schema 6 to schema 7, in place: the fingerprints the parse
    workers make wait for the ledger in a temporary table during the refresh that made them
    (kept in the store they were a fifth of it, 32 MB at 75,000 papers), and the word counts
    are compressed. Counts that are not a JSON object are ``Garbled``: the store is rebuilt."""
    con.execute("DROP TABLE IF EXISTS prints")
    rows = con.execute("SELECT rowid, vocab FROM parses").fetchall()
    packed = [(pack_counts(loads(vocab, dict, "word counts")), n) for n, vocab in rows]
    con.executemany("UPDATE parses SET vocab = ? WHERE rowid = ?", packed)


def unpack(blob: bytes) -> list[dict[str, Any]]:
    """``pack``'s rows; a garbled value is reported as a damaged database, which the store heals
    by rebuilding itself. (Each row's other fields are checked where it becomes a Paper.)"""
    rows = _unpacked(blob, list, "parse rows")
    for row in rows:
        if type(row) is not dict or not all(type(row.get(f)) is str for f in _ROW_TEXT):
            raise Garbled("garbled parse rows (a row without its id, name, title or abstract)")
    checked: list[dict[str, Any]] = rows
    return checked


#: The fields of a parse row that a refresh reads before it makes the row a Paper.
_ROW_TEXT = ("id", "name", "title", "abstract")
