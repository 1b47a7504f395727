"""Bytes to clean text: encoding detection, BOMs, newlines and control characters."""

from __future__ import annotations

import codecs
import re

from ..errors import ParseError
from ..text import PARTICLES, fold  # noqa: F401  (re-exported for the parser)

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# C0/C1 controls other than tab and the newline family; they come from PDF copy-paste.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x84\x86-\x9f]")
_HIGH_RUN = re.compile(rb"[\x80-\xff]+")
# A form feed at the start or end of a line is a page break (a paragraph break); inside a line
# it is only whitespace, and must not cut "reward\fshaping" into two paragraphs.
_PAGE_BREAK = re.compile(r"^[ \t]*\f+|\f+[ \t]*$", re.MULTILINE)


def decode(data: bytes, source: str = "") -> str:
    """Decode a corpus file: UTF-8 (with or without BOM), UTF-16 with BOM, GB18030, or cp1252.

    A file with NUL bytes and no UTF-16 BOM is binary and raises ``ParseError``.
    """
    if data.startswith(_UTF16_BOMS):
        return _decode_utf16(data, source)
    if b"\x00" in data[:65536]:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise ParseError("binary file (NUL byte), not a text file of abstracts", source, line)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    if _looks_like_gb(data):
        try:
            return data.decode("gb18030")
        except UnicodeDecodeError:
            pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        line = data[: utf8_error.start].count(b"\n") + 1
        raise ParseError(
            f"cannot decode byte 0x{data[utf8_error.start]:02x}: not UTF-8, GB18030 or cp1252",
            source,
            line,
        ) from None


def _decode_utf16(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError as exc:
        raise ParseError(f"invalid UTF-16 at byte {exc.start}", source) from None


def _looks_like_gb(data: bytes) -> bool:
    """GBK/GB18030 text has its non-ASCII bytes in pairs; Latin text has lone accented bytes."""
    runs = _HIGH_RUN.findall(data)
    return bool(runs) and all(len(run) % 2 == 0 for run in runs)


_SURROGATES = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` with lone surrogates (the undecodable bytes of a file name, as Python reads
    them) replaced by U+FFFD, so it always encodes to valid UTF-8."""
    return _SURROGATES.sub("\ufffd", text)


def clean(text: str) -> str:
    """Normalise newlines to ``\\n`` and replace stray control characters with spaces."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n\n").replace("\x85", "\n")
    text = _PAGE_BREAK.sub("\n\n", text).replace("\f", " ").replace("\ufeff", "")
    return _CONTROL.sub(" ", text)
