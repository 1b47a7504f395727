"""Bytes to clean text: encoding detection, BOMs, newlines and control characters."""

from __future__ import annotations

import codecs
import re
from typing import Any

from ..errors import ParseError
from ..text import PARTICLES, fold  # noqa: F401  (re-exported for the parser)

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_UTF32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
#: A link in an abstract (trailing punctuation is trimmed by the caller).
URL = re.compile(r"https?://[^\s<>\"'{}|\\^`\]]+")
# C0/C1 controls other than tab and the newline family; they come from PDF copy-paste.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x84\x86-\x9f]")
# A form feed at the start or end of a line is a page break (a paragraph break); inside a line
# it is only whitespace, and must not cut "reward\fshaping" into two paragraphs.
_PAGE_BREAK = re.compile(r"^[ \t]*\f+|\f+[ \t]*$", re.MULTILINE)


#: A file with valid UTF-8 multi-byte sequences is UTF-8 damaged in places, not a legacy file,
#: when its invalid sequences are at most this share of its non-ASCII bytes (or just one).
DAMAGED_UTF8 = 0.01
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
_ASCII = bytes(range(128))
_HIGH_BYTE = re.compile(rb"[\x80-\xff]")
_LINE_END = re.compile(rb"[\r\n]")
SAMPLE = 256 * 1024


def decode(data: bytes, source: str = "", encoding: str | None = None) -> str:
    """Decode a corpus file.

    An explicit ``encoding`` always wins. Otherwise: UTF-32 or UTF-16 with a BOM; UTF-8 (with or without
    a BOM); UTF-8 damaged in places (valid multi-byte sequences and a few invalid bytes, under
    ``DAMAGED_UTF8`` of its non-ASCII bytes: decoded with U+FFFD and a ``ParseWarning`` naming
    the lines); else a legacy encoding, told apart by charset-normalizer (GB18030, cp1252 and
    the like). A file with NUL bytes and no UTF-16 or UTF-32 BOM is UTF-16 where its NULs are
    the high bytes of ASCII text, else binary: ``ParseError``.
    """
    if encoding:
        return _decode_as(data, source, encoding)
    if data.startswith(_UTF32_BOMS):  # before UTF-16: FF FE 00 00 starts with FF FE
        return _decode_as(data, source, "utf-32")
    if data.startswith(_UTF16_BOMS):
        return _decode_utf16(data, source)
    if b"\x00" in data[:65536]:
        return _bomless_utf16(data, source)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    damaged = _damaged_utf8(data, source)
    if damaged is not None:
        return damaged
    mixed = _mixed(data, source)
    if mixed is not None:
        return mixed
    legacy = _legacy(data)
    if legacy is not None:
        return legacy[1]
    line = data[: utf8_error.start].count(b"\n") + 1
    raise ParseError(
        f"cannot decode byte 0x{data[utf8_error.start]:02x}: not UTF-8 and no known encoding "
        "fits; give the file's encoding",
        source,
        line,
    )


def text_codec(name: str) -> str:
    """The codec's canonical name if ``name`` is a text encoding; ``LookupError`` (with a message
    fit to show) if it is unknown or not one: base64, rot13 and zlib are codecs too, but turn
    bytes into bytes, not text."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise LookupError(f"unknown encoding {name!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        raise LookupError(f"{name!r} is not a text encoding (it turns bytes into bytes)")
    return info.name


def _decode_as(data: bytes, source: str, encoding: str) -> str:
    try:
        text_codec(encoding)
    except LookupError as error:
        raise ParseError(str(error), source) from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        if exc.object != data or exc.start >= len(data):  # idna names a part of the text
            raise ParseError(f"the text is not valid {encoding} ({exc.reason})", source) from None
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(
            f"byte 0x{data[exc.start]:02x} is not valid {encoding}", source, line
        ) from None
    except UnicodeError as exc:  # punycode names no position
        raise ParseError(f"the text is not valid {encoding} ({exc})", source) from None
    return text.removeprefix("\ufeff")


def _damaged_utf8(data: bytes, source: str) -> str | None:
    """UTF-8 with a few bad bytes, decoded with U+FFFD and a warning; None if it is not."""
    import warnings

    from ..errors import ParseWarning

    if not _UTF8_MULTIBYTE.search(data):
        return None  # no valid multi-byte sequence at all: a legacy single-byte file
    non_ascii = len(data.translate(None, _ASCII))
    text = data.decode("utf-8-sig", "replace")
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    if bad > max(1.0, non_ascii * DAMAGED_UTF8):
        return None
    lines = [
        str(number)
        for number, (raw, line) in enumerate(
            zip(data.split(b"\n"), text.split("\n"), strict=False), 1
        )
        if line.count("\ufffd") > raw.count("\ufffd".encode())
    ]
    message = f"{source}: invalid UTF-8 replaced with U+FFFD on {_named(lines)}"
    warnings.warn(ParseWarning(message), stacklevel=4)
    return text


def _mixed(data: bytes, source: str) -> str | None:
    """UTF-8 with whole lines in a legacy encoding (files joined with ``cat``): each UTF-8 line
    as UTF-8, the others in the encoding they share, with a warning naming them; None unless
    the UTF-8 lines hold most of the non-ASCII bytes (a line of GB18030 is valid UTF-8 by
    chance now and then, so a GB18030 file is no such file)."""
    import warnings

    from ..errors import ParseWarning

    if not _UTF8_MULTIBYTE.search(data):
        return None  # no UTF-8 line at all
    lines = data.split(b"\n")
    texts: list[str | None] = []
    for line in lines:
        try:
            texts.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            texts.append(None)
    bad = [number for number, text in enumerate(texts) if text is None]
    in_bad = sum(len(lines[n].translate(None, _ASCII)) for n in bad)
    if 2 * in_bad >= len(data.translate(None, _ASCII)):
        return None
    legacy = _legacy(b"\n".join(lines[n] for n in bad))
    if legacy is None:
        return None
    codec, text = legacy
    decoded = text.split("\n")
    if len(decoded) != len(bad):  # a guess such as UTF-16 that does not keep the lines
        return None
    for number, line_text in zip(bad, decoded, strict=True):
        texts[number] = line_text
    named = _named([str(n + 1) for n in bad])
    verb = "is" if len(bad) == 1 else "are"
    warnings.warn(
        ParseWarning(f"{source}: {named} {verb} not UTF-8; read as {codec}"), stacklevel=4
    )
    return "\n".join(t or "" for t in texts).removeprefix("\ufeff")


def _named(lines: list[str]) -> str:
    """``line 3``, ``lines 3, 5``, or the first ten and how many more."""
    shown = ", ".join(lines[:10]) + (f" and {len(lines) - 10} more" if len(lines) > 10 else "")
    return f"line{'s' if len(lines) > 1 else ''} {shown}"


def _legacy(data: bytes) -> tuple[str, str] | None:
    """The legacy (non-UTF) encoding charset-normalizer finds likeliest and the text in it, or
    None.

    It is shown only the lines that hold non-ASCII bytes (at most ``SAMPLE`` bytes of them):
    they carry all the evidence, English lines around a short Chinese header only drown it,
    and the time stays bounded on a file of any size. The lines are cut at CR as well as LF and
    joined with LF: carriage returns swayed its guess (GB18030 with CRLF read as iso8859-13).
    """
    from charset_normalizer import from_bytes

    sample = bytearray()
    position = 0
    while len(sample) < SAMPLE and (high := _HIGH_BYTE.search(data, position)):
        low = max(0, high.start() - 2048)  # each look stays within 2 KB of the byte
        start = max(data.rfind(b"\n", low, high.start()), data.rfind(b"\r", low, high.start()))
        start = max(start + 1, low)
        found = _LINE_END.search(data, high.end(), high.end() + 2048)
        end = min(len(data), high.end() + 2048) if found is None else found.start()
        sample += data[start:end] + b"\n"  # the line, or 2 KB either side of a long line's byte
        position = end + 1
    results = from_bytes(bytes(sample))
    guesses = [m.encoding for m in results if m.encoding.replace("-", "_") != "utf_8"]
    if _western(results.best(), guesses):
        guesses.insert(0, "cp1252")
    elif _gb18030_ties(results):
        guesses.insert(0, "gb18030")
    for encoding in guesses:
        try:
            return encoding, data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    return None


def _western(best: Any, guesses: list[str]) -> bool:
    """Whether to read single-byte text as cp1252, the Western default: when it fits as well as
    the detector's pick, or the detector cannot name the language. On a few accented letters its
    pick among single-byte code pages is a coin toss (cp775 for "José", EBCDIC for ASCII);
    Cyrillic or Greek text is still told apart (cp1252 does not fit it as well)."""
    if best is None:
        return True
    return not best.multi_byte_usage and ("cp1252" in guesses or best.language == "Unknown")


def _gb18030_ties(results: Any) -> bool:
    """Whether GB18030 fits as well as the detector's pick of another multi-byte code page (no
    more chaos, no less coherence): a short Chinese header is all the evidence some files give,
    and on it big5 or cp949 is a coin toss. Korean, Shift-JIS and longer Big5 text fit their own
    code page better, so they are still told apart."""
    best = results.best()
    if best is None or not best.multi_byte_usage or best.encoding == "gb18030":
        return False
    gb = next((m for m in results if m.encoding == "gb18030"), None)
    return gb is not None and gb.chaos <= best.chaos and gb.coherence >= best.coherence


def _bomless_utf16(data: bytes, source: str) -> str:
    """A file with NUL bytes and no BOM: UTF-16 when its NULs are the high bytes of the text's
    ASCII characters (most bytes at odd places NUL, almost none at even ones: little-endian;
    the other way round, big-endian), else binary: ``ParseError``."""
    sample = data[:65536] if len(data) % 2 == 0 else b""  # UTF-16 is an even number of bytes
    even, odd = sample[0::2], sample[1::2]
    for codec, high, low in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if sample and high.count(0) >= 0.7 * len(high) and low.count(0) <= 0.01 * len(low):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                break
    line = data[: data.index(b"\x00")].count(b"\n") + 1
    raise ParseError(
        "binary file (NUL byte), not a text file of abstracts (for UTF-16 or UTF-32 without a "
        "byte-order mark, give its encoding with --encoding)",
        source,
        line,
    )


def _decode_utf16(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError as exc:
        raise ParseError(f"invalid UTF-16 at byte {exc.start}", source) from None


def clean(text: str) -> str:
    """Normalise newlines to ``\\n`` and replace stray control characters with spaces."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n").replace("\x85", "\n")
    if "\f" in text:  # the pattern is slow to run over a whole file that has none
        text = _PAGE_BREAK.sub("\n\n", text).replace("\f", " ")
    text = text.replace("\ufeff", "")
    return _CONTROL.sub(" ", text)
