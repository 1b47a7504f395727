"""Lists of paper references (ids, keys or id prefixes), one a line: ``export --ids``, ``show -``.

Read as a stream, one line at a time, each reference once: the work is linear in the input and
memory holds only the distinct references. Blank lines and ``#`` comments are skipped, and a
tab-separated line (the ``tsv`` listing) gives its first field. The text is UTF-8 (a BOM is
dropped) or UTF-16 with a BOM; anything else, a NUL byte in particular, is an ``InputError``
naming the line, not a crash.
"""

from __future__ import annotations

import codecs
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import IO

from .errors import InputError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_UTF8_BOM = codecs.BOM_UTF8


def read_refs(stream: IO[bytes], source: str = "<stdin>") -> Iterator[str]:
    """The distinct references of ``stream``, in their order."""
    return unique(refs_of_lines(_lines(stream, source)))


def binary(stream: IO[str] | IO[bytes]) -> IO[bytes]:
    """The bytes under a text stream (``sys.stdin.buffer``); a text-only stream (``StringIO``)
    is encoded as UTF-8."""
    if isinstance(stream, io.TextIOBase):
        buffer = getattr(stream, "buffer", None)
        return buffer if buffer is not None else io.BytesIO(stream.read().encode("utf-8"))
    return stream  # type: ignore[return-value]


def refs_of_lines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        field = line.split("\t", 1)[0].strip()
        if field and not field.startswith("#"):
            yield field


def unique(refs: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for ref in refs:
        if ref not in seen:
            seen.add(ref)
            yield ref


def _lines(stream: IO[bytes], source: str) -> Iterator[str]:
    first = stream.readline()
    if first[:2] in _UTF16_BOMS:
        yield from _utf16_lines(first + stream.read(), source)
        return
    for number, raw in enumerate(itertools.chain([first], stream), 1):
        if b"\x00" in raw:
            raise InputError(f"{source}:{number}: a NUL byte: not a text list of ids or keys")
        if number == 1:
            raw = raw.removeprefix(_UTF8_BOM)  # what the utf-8-sig codec does, without loading it
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(
                f"{source}:{number}: not UTF-8 (byte 0x{raw[error.start]:02x}); "
                "give one id or key per line"
            ) from None
        yield line.rstrip("\r\n")


def _utf16_lines(data: bytes, source: str) -> Iterator[str]:
    """A UTF-16 list (rare: Windows PowerShell writes them) is decoded whole."""
    try:
        text = data.decode("utf-16")
    except UnicodeDecodeError as error:
        where = data[: error.start].decode("utf-16", "replace").count("\n") + 1
        raise InputError(f"{source}:{where}: invalid UTF-16") from None
    for number, line in enumerate(text.splitlines(), 1):
        if "\x00" in line:
            raise InputError(f"{source}:{number}: a NUL character: not a list of ids or keys")
        yield line
