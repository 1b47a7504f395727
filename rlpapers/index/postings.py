"""How the view stores its postings: Whoosh's blocks, without pickle, positions in a third of
the space.

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
- ``CompactCodec`` also keeps each document's field length once it is read while the postings
  are written (Whoosh reads it from the lengths column again for every posting, 1.3 million
  times at 10k papers, for each block's shortest and longest document).
- ``plain_blocks``: Whoosh pickles each block's header and data. A block's header is packed
  with ``struct`` (``_HEADER``) and its data laid out as arrays (``block_data``), for every
  Whoosh codec of the process; a block that does not read back whole is ``Garbled`` (damage:
  the view is rebuilt). The other files of the view: ``plainfiles``.
- ``spill_with_marshal``: a writer whose postings outgrow its memory pool sorts them and
  spills them to run files in the generation folder, which it merges at commit. Whoosh writes
  and reads a run a posting at a time with pickle: a fifth of a build's CPU went to reading
  back 1.3 million postings at 10k papers. The runs are written and read with ``marshal``
  instead, a thousand postings a call: they hold only tuples of strings, bytes and numbers (as
  Whoosh's own docstring of its pool says), and ``marshal`` builds values, never calls anything.

These are Whoosh's own classes with those methods replaced, so everything else (skip lists,
scores, merges) is Whoosh's. A view written before them is of an older schema version and is
rebuilt (``view.View._same_version``).
"""

from __future__ import annotations

import marshal
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable, Iterator
from itertools import accumulate, islice
from typing import IO, Any

from whoosh.codec.whoosh3 import (
    WHOOSH3_HEADER_MAGIC,
    W3Codec,
    W3FieldWriter,
    W3LeafMatcher,
    W3PostingsWriter,
)
from whoosh.formats import Positions
from whoosh.system import _INT_SIZE
from whoosh.util.numeric import byte_to_length, length_to_byte

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

    def _write_block(self, last: bool = False) -> None:
        """Whoosh's block, with its header and data in ``_HEADER`` and ``block_data``'s layout
        (Whoosh pickles both)."""
        if self._byteids:
            raise TypeError("the view keeps no term vectors")
        postfile = self._postfile
        if not self._blockcount:
            postfile.write(WHOOSH3_HEADER_MAGIC)
        self._terminfo.add_block(self)
        data = block_data(self._mini_ids(), self._mini_weights(), self._mini_values())
        if self._compression:
            data = zlib.compress(data, self._compression)
        fields = _FIELDS.pack(
            len(self._ids),
            self._ids[-1],
            self._maxweight,
            self._compression,
            length_to_byte(self._minlength),
            length_to_byte(self._maxlength),
        )
        size = _HEADER.size + len(data)
        size = -size if last else size  # negative: the last block of the term
        postfile.write_int(size)
        postfile.write(fields + _CHECK.pack(_check(size, fields)))
        postfile.write(data)
        self._blockcount += 1
        self._new_block()


class _LeafMatcher(W3LeafMatcher):
    def _goto(self, position: int) -> None:
        """Go to the block at ``position`` and read its header (``_PostingsWriter``)."""
        postfile = self._postfile
        self._data: Any = None
        self._ids: Any = None
        self._weights: Any = None
        self._values: Any = None
        self._i = 0
        postfile.seek(position)
        size = postfile.read_int()
        try:
            *header, check = _HEADER.unpack(raw := postfile.read(_HEADER.size))
        except struct.error:
            raise Garbled("a postings block cut short") from None
        if check != _check(size, raw[: _FIELDS.size]):
            raise Garbled("a garbled header of a postings block")
        self._lastblock = size < 0
        self._nextoffset = position + _INT_SIZE + abs(size)
        self._dataoffset = position + _INT_SIZE + _HEADER.size
        self._blocklength, self._maxid, self._maxweight, self._compression = header[:4]
        self._minlength = byte_to_length(header[4])
        self._maxlength = byte_to_length(header[5])

    def _read_data(self) -> None:
        size = self._nextoffset - self._dataoffset
        if not 0 <= size <= _MAX_BLOCK:
            raise Garbled("a postings block of an impossible size")
        data = self._postfile.get(self._dataoffset, size)
        if self._compression:
            data = inflate(data, _MAX_BLOCK, "postings block")
        self._data = read_block_data(data, self._blocklength)

    def _read_values(self) -> None:
        if self._data is None:
            self._read_data()
        packed = self._data[2]
        if not (isinstance(packed, bytes) and _variable(self._fixedsize)):
            super()._read_values()
            return
        count = self._blocklength
        self._values = tuple(_pieces(packed, count, packed[:count]))


def plain_blocks() -> None:
    """Every Whoosh codec of this process writes and reads its blocks as ``_PostingsWriter``
    and ``_LeafMatcher`` do (a plain Whoosh index a benchmark builds beside the view too)."""
    W3PostingsWriter._write_block = _PostingsWriter._write_block
    W3LeafMatcher._goto = _LeafMatcher._goto
    W3LeafMatcher._read_data = _LeafMatcher._read_data


class Garbled(ValueError):
    """A postings block that is not as ``block_data`` writes it: the view is rebuilt."""


#: A block's header: its postings, last document, highest weight, zlib level, and the shortest
#: and longest field length as Whoosh's length bytes (``_FIELDS``); then a CRC-32 of the block's
#: size and those fields (``_check``): any bytes unpack, and a flipped bit read as a count, a
#: size's sign or a bound would drop postings or skip blocks silently.
_FIELDS = struct.Struct("<IIdBBB")
_HEADER = struct.Struct("<IIdBBBI")
_CHECK = struct.Struct("<I")
_BLOCK_SIZE = struct.Struct(">i")  # as Whoosh writes a block's size (``write_int``)
#: Before a block's data: how its weights and values are kept (``_KINDS``), and its postings.
_SHAPE = struct.Struct("<BBI")
_NONE, _ONE, _MANY = 0, 1, 2
_WEIGHT = struct.Struct("<d")


#: The most a block's data can hold, inflated: 128 postings (Whoosh's block) of at most 65,536
#: positions (an abstract is cut at 65,536 characters) as 4-byte numbers, with room to spare.
#: A block that would inflate further is damage, found before it fills the memory (a planted
#: block of a megabyte inflated to a gigabyte).
_MAX_BLOCK = 1 << 26


def inflate(data: bytes, most: int, what: str) -> bytes:
    """``data`` decompressed, if it inflates to at most ``most`` bytes; ``Garbled`` (naming
    ``what``) when it is cut short, larger, or followed by more."""
    inflater = zlib.decompressobj()
    try:
        inflated = inflater.decompress(data, most)
    except zlib.error:
        raise Garbled(f"a garbled {what}") from None
    if not inflater.eof or inflater.unconsumed_tail or inflater.unused_data:
        raise Garbled(f"a garbled {what} (cut short, too large or followed by more)")
    return inflated


def _check(size: int, fields: bytes) -> int:
    return zlib.crc32(fields, zlib.crc32(_BLOCK_SIZE.pack(size)))


def block_data(ids: Any, weights: Any, values: Any) -> bytes:
    """A block's documents (as gaps), weights and values as bytes: ``_SHAPE``, then the gaps
    as 4-byte numbers; the weights as nothing (each 1.0), one 8-byte float (all the same) or a
    4-byte float each; the values as nothing, one byte string, or each one's length then all
    of them."""
    parts = [b"", _little("I", ids)]
    if weights is None:
        wkind = _NONE
    elif isinstance(weights, float):
        wkind = _ONE
        parts.append(_WEIGHT.pack(weights))
    else:
        wkind = _MANY
        parts.append(_little("f", weights))
    if values is None:
        vkind = _NONE
    elif isinstance(values, bytes):
        vkind = _ONE
        parts.append(values)
    else:
        vkind = _MANY
        parts += [struct.pack("<I", len(values)), _little("I", map(len, values)), *values]
    parts[0] = _SHAPE.pack(wkind, vkind, len(ids))
    return b"".join(parts)


def read_block_data(data: bytes, count: int) -> tuple[Any, Any, Any]:
    """``block_data``'s (gaps, weights, values) of a block of ``count`` postings; ``Garbled``
    for anything else."""
    try:
        wkind, vkind, n = _SHAPE.unpack_from(data)
        at = _SHAPE.size
        ids, at = _array("I", data, at, n), at + 4 * n
        weights: Any = None
        if wkind == _ONE:
            (weights,), at = _WEIGHT.unpack_from(data, at), at + _WEIGHT.size
        elif wkind == _MANY:
            weights, at = _array("f", data, at, n), at + 4 * n
        values: Any = None
        if vkind == _ONE:
            values, at = data[at:], len(data)
        elif vkind == _MANY:
            (m,) = struct.unpack_from("<I", data, at)
            sizes, at = _array("I", data, at + 4, m), at + 4 + 4 * m
            values = tuple(_pieces(data, at, sizes))
            at += sum(sizes)
    except struct.error:
        raise Garbled("a postings block cut short") from None
    if n != count or at != len(data) or wkind > _MANY or vkind > _MANY:
        raise Garbled("a garbled postings block")
    return ids, weights, values


def _little(code: str, numbers: Iterable[Any]) -> bytes:
    packed = array(code, numbers)
    if sys.byteorder == "big":
        packed.byteswap()  # stored little-endian, whatever the machine
    return packed.tobytes()


def _array(code: str, data: bytes, at: int, count: int) -> array[Any]:
    packed = array(code)
    end = at + packed.itemsize * count
    if end > len(data):
        raise Garbled("a postings block cut short")
    packed.frombytes(data[at:end])
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


def _pieces(data: bytes, at: int, sizes: Iterable[int]) -> Iterator[bytes]:
    for size in sizes:
        if at + size > len(data):
            raise Garbled("a postings block cut short")
        yield data[at : at + size]
        at += size


class _Lengths:
    """A segment's field lengths as Whoosh asks for them while it writes the postings, each
    read from the lengths column once. Whoosh writes a field's postings together, so only the
    current field's lengths are kept: a list the size of the segment (a dict for every field
    would hold tens of megabytes at 75k papers)."""

    def __init__(self, lengths: Any) -> None:
        self._read = lengths.doc_field_length
        self._field: tuple[str, int] | None = None
        self._known: list[Any] = []

    def doc_field_length(self, docnum: int, fieldname: str, default: int = 0) -> Any:
        if self._field != (fieldname, default):
            self._field, self._known = (fieldname, default), []
        known = self._known
        if docnum >= len(known):
            known.extend([_UNREAD] * (docnum + 1 - len(known)))
        length = known[docnum]
        if length is _UNREAD:
            length = known[docnum] = self._read(docnum, fieldname, default)
        return length


_UNREAD = object()


class _FieldWriter(W3FieldWriter):
    def add_postings(self, schema: Any, lengths: Any, items: Any) -> None:
        super().add_postings(schema, _Lengths(lengths) if lengths else lengths, items)


class CompactCodec(W3Codec):
    """Whoosh's codec, with a block's variable-length postings kept as one byte string."""

    def field_writer(self, storage: Any, segment: Any) -> Any:
        return _FieldWriter(self, storage, segment)

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


#: Postings a ``marshal`` call writes or reads in a run file.
_RUN_CHUNK = 1024


def _write_run(pool: Any, file: IO[bytes], items: Iterable[Any]) -> None:
    postings = iter(items)
    try:
        while chunk := list(islice(postings, _RUN_CHUNK)):
            marshal.dump(chunk, file)
    finally:
        file.close()


def _read_run(pool: Any, path: str) -> Iterator[Any]:
    file = pool._open_run(path)
    try:
        while True:
            try:
                chunk = marshal.load(file)
            except EOFError:
                return
            yield from chunk
    finally:
        file.close()
        pool._remove_run(path)


def spill_with_marshal() -> None:
    """Make every Whoosh writer of this process (and of the workers it forks) write and read
    its spilled runs of postings with ``marshal`` (see the module's docstring). Once a process:
    what is set later (a test's stand-in) is left in place."""
    global _SPILLING
    if _SPILLING:
        return
    from whoosh.externalsort import SortingPool

    SortingPool._write_run = _write_run
    SortingPool._read_run = _read_run
    _SPILLING = True


_SPILLING = False
