"""Bibliography files as corpus files: BibTeX (``.bib``), RIS (``.ris``), CSL-JSON, arXiv
records and rlpapers' own exports (``.json``, ``.jsonl``).

Each format has one module that turns a file's text into ``Record`` values, pure functions
from bytes to records: a well-kept library does each format's syntax (bibtexparser 2 for
BibTeX and BibLaTeX, rispy for RIS, the standard library's ``json``), and the module maps its
fields to a record's. The bytes are decoded as a text file's are (``parse.text.decode``: BOMs,
UTF-16, legacy encodings), and CRLF and CR line ends become LF before a reader sees them.

A problem in one entry (a brace that never closes, an undefined ``@string``, a duplicate key,
a broken JSON line) is a ``ParseWarning`` naming the file and line; the other entries are
kept. A file that cannot be decoded raises ``ParseError``, as a text file does.

``Record.to_paper`` makes the ``Paper`` the rest of rlpapers works with; a record keeps what
a paper has no field for (the file's own key, the arXiv id, the entry type).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib import import_module
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from ..errors import ParseError, ParseWarning
from ..model import Paper
from .record import Record

if TYPE_CHECKING:
    from ..parse import Titles

__all__ = [
    "EXTENSIONS",
    "Record",
    "format_of",
    "read_bytes",
    "read_file",
    "read_papers",
    "read_text",
]

#: File extension -> the reader module, for the formats read by extension.
EXTENSIONS: dict[str, str] = {
    ".bib": "bibtex",
    ".ris": "ris",
    ".json": "jsonfiles",
    ".jsonl": "jsonfiles",
}


def format_of(name: str) -> str | None:
    """The reader module for a file name (by its extension, in any case), or None."""
    return EXTENSIONS.get(PurePath(name).suffix.lower())


def read_bytes(data: bytes, source: str, encoding: str | None = None) -> list[Record]:
    """The records of a bibliography file's bytes; ``source`` names the file in warnings and
    records, and its extension picks the reader. ``encoding`` overrides the detected one."""
    from ..parse.text import decode

    return read_text(decode(data, source, encoding), source)


def read_text(text: str, source: str) -> list[Record]:
    """The records of a bibliography file's text (see ``read_bytes``)."""
    module = format_of(source)
    if module is None:
        known = ", ".join(EXTENSIONS)
        raise ParseError(f"not a bibliography file (known: {known})", source)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():  # as for a text file
        warnings.warn(ParseWarning(f"{source}: empty file, no records"), stacklevel=2)
        return []
    reader: Callable[[str, str], list[Record]] = import_module(f"{__name__}.{module}").read
    try:
        return reader(text, source)
    except MemoryError:
        raise ParseError(
            "not enough memory to read it; split it into several files", source
        ) from None


def read_file(path: str | Path, encoding: str | None = None) -> list[Paper]:
    """The papers of one corpus file: a bibliography file by its extension (``.bib``, ``.ris``,
    ``.json``, ``.jsonl``), any other in the seed layout (``parse``)."""
    from ..parse import file_bytes

    path = Path(path)
    return read_papers(file_bytes(path), path.name, encoding)


def read_papers(
    data: bytes, name: str, encoding: str | None = None, titles: Titles | None = None
) -> list[Paper]:
    """The papers of a corpus file's bytes, read by the file ``name``'s extension: its records
    for a bibliography file, else the seed layout (``titles``: derived titles to reuse)."""
    from ..parse import parse_bytes

    if format_of(name) is None:
        return parse_bytes(data, name, titles=titles, encoding=encoding)
    return [record.to_paper() for record in read_bytes(data, name, encoding)]
