"""Lists of paper references (ids, keys or id prefixes), one a line: ``export --ids``, ``show -``.

Read as a stream, one line at a time, each reference once: the work is linear in the input and
memory holds only the distinct references. Blank lines and ``#`` comments are skipped, and a
tab-separated line (the ``tsv`` listing) gives its first field. The text is UTF-8 (a BOM is
dropped) or UTF-16 or UTF-32 with a BOM; anything else, a NUL byte in particular, or a line
longer than ``MAX_LINE``, is an ``InputError`` naming the line (and quoting only its start),
not a crash. Lines are read ``MAX_LINE`` bytes at most at a time, so an endless one (``/dev/zero``)
costs no more memory than that.
"""

from __future__ import annotations

import codecs
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import IO

from .errors import InputError

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_UTF32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
_UTF8_BOM = codecs.BOM_UTF8
#: The longest line a list may hold, in bytes (characters for UTF-16 and UTF-32): far above an
#: id, a key or a line of the ``tsv`` listing, far below what would fill the memory
#: (``--ids /dev/zero`` read one endless line).
MAX_LINE = 65_536
#: How much of a line or reference a message quotes.
QUOTED = 60
_PIECE = 65_536


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


def shown(text: str, width: int = QUOTED) -> str:
    """The start of a reference or line, for a message: never more than ``width`` characters."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _lines(stream: IO[bytes], source: str) -> Iterator[str]:
    first = stream.readline(MAX_LINE + 1)
    if first[:4] in _UTF32_BOMS:
        yield from _wide_lines(first, stream, source, "utf-32")
        return
    if first[:2] in _UTF16_BOMS:
        yield from _wide_lines(first, stream, source, "utf-16")
        return
    raws = itertools.chain([first], iter(lambda: stream.readline(MAX_LINE + 1), b""))
    for number, raw in enumerate(raws, 1):
        if not raw:
            return
        if b"\x00" in raw:
            raise InputError(f"{source}:{number}: a NUL byte: not a text list of ids or keys")
        if number == 1:
            raw = raw.removeprefix(_UTF8_BOM)  # what the utf-8-sig codec does, without loading it
        if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
            raise _too_long(source, number, raw.decode("utf-8", "replace"))
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(
                f"{source}:{number}: not UTF-8 (byte 0x{raw[error.start]:02x}); "
                "give one id or key per line"
            ) from None
        yield line.rstrip("\r\n")


def _wide_lines(first: bytes, stream: IO[bytes], source: str, codec: str) -> Iterator[str]:
    """A UTF-16 or UTF-32 list (rare: Windows PowerShell writes UTF-16), decoded a piece at a
    time, its lines bounded like UTF-8 ones."""
    decoder = codecs.getincrementaldecoder(codec)()
    pieces = itertools.chain([first], iter(lambda: stream.read(_PIECE), b""))
    pending, number = "", 0
    for piece in itertools.chain(pieces, [None]):
        try:
            pending += decoder.decode(piece or b"", final=piece is None)
        except UnicodeDecodeError:
            raise InputError(f"{source}:{number + 1}: invalid {codec.upper()}") from None
        *lines, pending = pending.split("\n")
        if piece is None:
            lines.append(pending)
        for line in lines:
            number += 1
            if "\x00" in line:
                raise InputError(f"{source}:{number}: a NUL character: not a list of ids or keys")
            if len(line) > MAX_LINE:
                raise _too_long(source, number, line)
            yield line.rstrip("\r")
        if len(pending) > MAX_LINE:
            raise _too_long(source, number + 1, pending)


def _too_long(source: str, number: int, line: str) -> InputError:
    return InputError(
        f"{source}:{number}: a line longer than {MAX_LINE:,} bytes ({shown(line)!r}): "
        "not a list of ids or keys"
    )
