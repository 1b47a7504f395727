"""Damage to the search view's files (a flipped byte, a garbled part of a compound segment)
heals: the view is rebuilt from the record store with one note, and the search answers exactly
as before, through every path that reads it (eager, lazy, the command line)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from .conftest import run


def _segment(index: Path) -> Path:
    (found,) = sorted(index.rglob("*.seg"))
    return found


def _part(segment: Path, suffix: str) -> tuple[int, int]:
    """Where the part of a compound segment whose name ends with ``suffix`` stands: its
    (offset, length), from the segment's directory (its offset first, then a varint length
    and the directory's JSON)."""
    data = segment.read_bytes()
    (where,) = struct.unpack(">q", data[:8])
    size, shift, at = 0, 0, where
    while True:
        byte = data[at]
        size |= (byte & 0x7F) << shift
        shift, at = shift + 7, at + 1
        if byte < 0x80:
            break
    directory = json.loads(data[at : at + size])
    (name,) = [name for name in directory if name.endswith(suffix)]
    return directory[name]["offset"], directory[name]["length"]


def _garble(segment: Path, start: int, end: int, step: int = 7) -> None:
    data = bytearray(segment.read_bytes())
    for at in range(start, end, step):
        data[at] ^= 0xFF
    segment.write_bytes(bytes(data))


def test_a_garbled_stored_ids_column_heals_in_a_lazy_search(seeds_copy, isolated):
    """The command line reads a search's paper ids lazily, as it prints them: damage met
    there heals as it does anywhere (it was exit 70, "internal error")."""
    args = ("--corpus", seeds_copy, "search", "policy")
    expected = {fmt: run(*args, "--all", "-f", fmt).stdout for fmt in ("ids", "jsonl")}
    for fmt, output in expected.items():
        segment = _segment(isolated / "index")
        offset, length = _part(segment, "_stored.col")
        _garble(segment, offset + 10, offset + length - 40)
        result = run(*args, "--all", "-f", fmt)
        assert result.stdout == output
        assert result.stderr.count("rebuilding") == 1
