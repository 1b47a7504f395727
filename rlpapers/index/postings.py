"""How the view stores word positions: the same positions as Whoosh's, in a third of the space.

Phrase queries (``abstract:"policy gradient"``, ``author:"yoshua bengio"``, a hyphenated word)
need each word's positions in each document, and every field that accepts them keeps them.
What made them cost was their encoding, not the positions: Whoosh's ``Positions`` format
stores each posting as a 4-byte count plus a pickled list of the gaps, and its codec pickles a
block's postings as a tuple of byte strings, which pickle's protocol 2 writes as a call of
``_codecs.encode`` each (some 30 bytes a posting before compression). At 10,000 arXiv papers
the abstract field alone was 19.0 MB with positions and 7.9 MB without.

- ``CompactPositions`` stores the gaps between positions as bytes (one byte each while every
  gap is below 256, else two or four), after a byte that says which; the count is the number
  of gaps.
- ``CompactCodec`` writes a block's positions as one byte string (each posting's length, then
  the postings) and splits it when a phrase reads it; scores never read it.

Both are Whoosh's own classes with those methods replaced, so everything else (blocks, skip
lists, scores, merges) is Whoosh's. A view written before them is of an older schema version
and is rebuilt (``view.View._same_version``).
"""

from __future__ import annotations

import sys
from array import array
from itertools import accumulate
from typing import Any

from whoosh.codec.whoosh3 import W3Codec, W3LeafMatcher, W3PostingsWriter
from whoosh.formats import Positions

#: The first byte of a posting: the array type of the gaps that follow.
_WIDE = {1: "H", 2: "I"}
_SIZE = {0: 1, 1: 2, 2: 4}


class CompactPositions(Positions):
    """Whoosh's ``Positions``, with the gaps stored as bytes rather than a pickled list."""

    def encode(self, poslist: list[int]) -> bytes:
        if len(poslist) == 1 and poslist[0] < 256:  # most postings: a word once in a field
            return bytes((0, poslist[0]))
        gaps = [b - a for a, b in zip([0, *poslist], poslist, strict=False)]
        top = max(gaps)
        if top < 256:
            return b"\x00" + bytes(gaps)
        code = 1 if top < 1 << 16 else 2
        wide = array(_WIDE[code], gaps)
        if sys.byteorder == "big":
            wide.byteswap()  # stored little-endian, whatever the machine
        return bytes((code,)) + wide.tobytes()

    def decode_positions(self, valuestring: bytes) -> list[int]:
        code = valuestring[0]
        if code == 0:
            return list(accumulate(valuestring[1:]))
        wide = array(_WIDE[code], valuestring[1:])
        if sys.byteorder == "big":
            wide.byteswap()
        return list(accumulate(wide))

    def decode_frequency(self, valuestring: bytes) -> int:
        return (len(valuestring) - 1) // _SIZE[valuestring[0]]


def _variable(size: int | None) -> bool:
    """Whether a format's postings vary in length (the ones Whoosh pickles as a tuple)."""
    return size is None or size < 0


class _PostingsWriter(W3PostingsWriter):
    def _mini_values(self) -> Any:
        values = self._values
        fits = values and len(values) == len(self._ids) and max(map(len, values)) < 256
        if fits and not self._byteids and _variable(self._format.fixed_value_size()):
            return bytes(map(len, values)) + b"".join(values)
        return super()._mini_values()


class _LeafMatcher(W3LeafMatcher):
    def _read_values(self) -> None:
        if self._data is None:
            self._read_data()
        packed = self._data[2]
        if not (isinstance(packed, bytes) and _variable(self._fixedsize)):
            super()._read_values()
            return
        count = self._blocklength
        values = []
        at = count
        for size in packed[:count]:
            values.append(packed[at : at + size])
            at += size
        self._values = tuple(values)


class CompactCodec(W3Codec):
    """Whoosh's codec, with a block's variable-length postings kept as one byte string."""

    def postings_writer(self, dbfile: Any, byteids: bool = False) -> Any:
        return _PostingsWriter(
            dbfile,
            blocklimit=self._blocklimit,
            byteids=byteids,
            compression=self._compression,
            inlinelimit=self._inlinelimit,
        )

    def postings_reader(
        self, dbfile: Any, terminfo: Any, format_: Any, term: Any = None, scorer: Any = None
    ) -> Any:
        if terminfo.is_inlined():
            return super().postings_reader(dbfile, terminfo, format_, term=term, scorer=scorer)
        offset, length = terminfo.extent()
        return _LeafMatcher(dbfile, offset, length, format_, term=term, scorer=scorer)
