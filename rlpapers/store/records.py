"""Records as the store keeps them, and read back as a ``Paper``.

A record is one BLOB: a short JSON head, a NUL byte, then the CRC-32 of the rest of the record
and the rest compressed::

    ["topic", ["categories"], ["authors"], year, "venue", ["tags"], ["commands"]] \\0 crc deflate

The head holds the fields ``stats`` counts (``FACETS``) and the LaTeX command names of the
abstract (``\\mathcal`` gives ``mathcal``; its filter of terms needs them), so counting reads no
abstract: SQL cuts the heads off (``HEAD_SQL``) and one ``json.loads`` reads them all. The rest
is the record's other fields as JSON, those at their default left out, raw deflate with a preset
dictionary (``records.zdict``: common words of abstracts and the field names): a record of
1.9 KB of JSON takes about 0.75 KB. Raw deflate and a CRC-32 of our own read faster than zlib's
own wrapper with the dictionary (8 against 11 µs a record, and a third of zlib's adler32 time
for the check). The dictionary is part of the format (the store's ``VERSION`` guards it; a test
pins its hash); a row that does not inflate to the text its CRC names, whatever the damage, is
told from a record and heals like any other damage.

The store's reads, its lookups and its refresh all decode records here; none of them imports
the store package itself for it."""

from __future__ import annotations

import json
import re
import sqlite3
import zlib
from collections import Counter
from dataclasses import MISSING, fields
from functools import cache
from itertools import chain
from pathlib import Path
from typing import Any

from ..model import Paper
from .db import Garbled, loads

#: The fields of a record's head, in order (the fields ``stats`` counts); then the head holds
#: the abstract's LaTeX command names (``commands``).
FACETS = ("topic", "categories", "authors", "year", "venue", "tags")
HEAD = (*FACETS, "commands")
_LISTS = frozenset({"categories", "authors", "tags", "commands"})
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_DEFAULTS = {f.name: f.default for f in fields(Paper) if f.default is not MISSING}
LEVEL = 6  # 1 writes in 0.6x the time but is 12% larger and inflates 1.4x slower; 9 no smaller
#: SQL for a record's head as text ('' for a row that has none).
HEAD_SQL = "CAST(substr(data, 1, instr(data, x'00') - 1) AS TEXT)"


@cache
def zdict() -> bytes:
    """The preset dictionary (``benchmarks/records_zdict.py`` wrote it; never changed under a
    stored row: see the module docstring)."""
    return Path(__file__).with_name("records.zdict").read_bytes()


@cache
def _packer() -> Any:
    """A raw deflate compressor primed with the dictionary, never fed: each record is written by
    a copy of it (priming one costs a tenth of compressing a record; the output is the same)."""
    return zlib.compressobj(LEVEL, zlib.DEFLATED, -15, zdict=zdict())


def encode(record: dict[str, Any]) -> bytes:
    """A record (``Paper.to_dict()``) as the store keeps it."""
    head = [record[name] for name in FACETS]
    head.append(commands(record["abstract"]))
    rest = {
        name: value
        for name, value in record.items()
        if name not in FACETS and _DEFAULTS.get(name, MISSING) != value
    }
    text = _json(rest)
    packer = _packer().copy()
    body: bytes = packer.compress(text) + packer.flush()
    return _json(head) + b"\0" + zlib.crc32(text).to_bytes(4, "big") + body


def commands(abstract: str) -> list[str]:
    """The names of the LaTeX commands in an abstract, lower-cased, each once, sorted."""
    if "\\" not in abstract:
        return []
    return sorted({name.lower() for name in _COMMAND.findall(abstract)})


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def paper_of(data: Any) -> Paper:
    """A record as the store keeps it back as a Paper; ``Garbled`` when it is no paper's
    record. The head and the rest are read by one ``json.loads``: the head's list with the
    rest appended to it."""
    text = _text(data)
    head = data[: data.index(b"\0")]
    if not head.endswith(b"]"):
        raise Garbled("garbled record (a head that is not a list)")
    values = loads(head[:-1] + b"," + text + b"]", list, "record")
    if len(values) != len(HEAD) + 1 or type(values[-1]) is not dict:
        raise Garbled("garbled record (a head of another length)")
    row: dict[str, Any] = values[-1]
    row.update(zip(FACETS, values, strict=False))
    return stored_paper(row)


def text_of(data: Any) -> tuple[str, str]:
    """A stored record's title and abstract, the rest of it not read; ``Garbled`` when it has
    no text in them."""
    rest = _rest(data)
    title, abstract = rest.get("title", ""), rest.get("abstract")
    if type(title) is not str or type(abstract) is not str:
        raise Garbled("garbled record (no title or abstract text)")
    return title, abstract


def _rest(data: Any) -> dict[str, Any]:
    """The record's fields but its head's (``Garbled`` for anything else)."""
    row: dict[str, Any] = loads(_text(data), dict, "record")
    return row


def _text(data: Any) -> bytes:
    """The JSON text of the record's fields but its head's, inflated and checked against its
    CRC (``Garbled`` for anything else)."""
    if type(data) is not bytes or b"\0" not in data:
        raise Garbled("garbled record (not a stored record)")
    start = data.index(b"\0") + 1
    check, body = data[start : start + 4], data[start + 4 :]
    unpacker = zlib.decompressobj(-15, zdict=zdict())
    try:
        text = unpacker.decompress(body)
    except zlib.error as error:
        raise Garbled(f"garbled record ({error})") from None
    if not unpacker.eof or unpacker.unused_data:
        raise Garbled("garbled record (its compressed text is cut or followed by more)")
    if len(check) != 4 or zlib.crc32(text) != int.from_bytes(check, "big"):
        raise Garbled("garbled record (its text is not the one written)")
    return text


def stored_paper(row: dict[str, Any]) -> Paper:
    """``Paper.from_dict`` for a record or parse row the store wrote; ``Garbled`` if damaged."""
    try:
        return Paper.from_dict(row)
    except ValueError as error:
        raise Garbled(f"garbled record ({error})") from None


def head_counts(heads: str | None, count: int) -> tuple[int, dict[str, Counter[Any]]]:
    """The number of records, and for each field of ``HEAD`` how many records have each value
    (each element of a list; a single value only when it is set), from the heads of ``count``
    records given as one JSON list of them (``HEAD_SQL`` joined by commas in brackets; None
    for no record). ``Garbled`` unless each head is one a record has. Each field is counted
    and checked in a few calls over all records, none of them per record."""
    rows = loads(heads or "[]", list, "record heads")
    if len(rows) != count or not set(map(type, rows)) <= {list}:
        raise Garbled("garbled record (a head that is not one)")
    if not set(map(len, rows)) <= {len(HEAD)}:
        raise Garbled("garbled record (a head of another length)")
    columns = list(zip(*rows, strict=True)) or [()] * len(HEAD)
    counts: dict[str, Counter[Any]] = {}
    for name, values in zip(HEAD, columns, strict=True):
        if name in _LISTS:
            if not set(map(type, values)) <= {list}:
                raise Garbled(f"garbled record ({name} is not a list)")
            counts[name] = Counter(chain.from_iterable(values))
            values = tuple(counts[name])  # each value checked once
        else:
            counts[name] = Counter(filter(None, values))
        if not set(map(type, values)) <= _KINDS[name]:
            raise Garbled(f"garbled record ({name} of another type)")
    return count, counts


_KINDS: dict[str, set[type]] = {
    "topic": {str},
    "categories": {str},
    "authors": {str},
    "year": {int, type(None)},
    "venue": {str},
    "tags": {str},
    "commands": {str},
}


def reencode(con: sqlite3.Connection) -> None:
    """Bring the records of a store of schema 5 (JSON text) to this encoding, in place: the
    ids, keys and texts stay (a ledger from before fingerprints learns from them). A row that
    is no record's is ``Garbled``: the store is rebuilt, as any damaged one."""
    last = -1
    while True:
        rows = con.execute(
            "SELECT rowid, data FROM records WHERE rowid > ? ORDER BY rowid LIMIT 1000", (last,)
        ).fetchall()
        if not rows:
            return
        con.executemany(
            "UPDATE records SET data = ? WHERE rowid = ?",
            [(encode(stored_paper(loads(data, dict, "record")).to_dict()), n) for n, data in rows],
        )
        last = rows[-1][0]
