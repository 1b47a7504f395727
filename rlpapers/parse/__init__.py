"""Seed files to Paper records.

Data flows one way: bytes -> text (``text.decode``/``clean``) -> blocks (``blocks.split_blocks``)
-> roles (``roles.assign``) -> Paper. A block's role is decided by what it contains, and where
that is ambiguous by the layout the file follows elsewhere, so files that lack category or author
lines, or mix both seed layouts, parse the same way. Wrapped lines
are joined and words broken at a line end are mended with the file's own vocabulary. Names and
titles come from ``titles.derive_title``. Oddities that lose nothing (an empty file, an author line
with no abstract after it, a block that is neither a category line, an author line nor prose) are
reported as ``ParseWarning`` and make no record; unreadable input raises ``ParseError``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ..errors import ParseError, ParseWarning
from ..ids import normalise, paper_id
from ..model import Paper

if TYPE_CHECKING:
    from .blocks import Block

# blocks, text, names and roles compile many patterns; they are imported when a file is actually
# parsed, so that a warm run (which parses nothing, but checks PARSER_VERSION) does not pay for
# them.

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_PARAGRAPH",
    "PARSER_VERSION",
    "parse_bytes",
    "parse_file",
    "parse_text",
    "paper_id",
    "normalise",
]

#: Bump when parsing gives different records for the same bytes: cached parses are then redone.
PARSER_VERSION = "17"


#: The largest corpus file read, in bytes. A file is parsed whole (a word broken at a line end
#: is mended with the whole file's vocabulary), and parsing takes about six times the file's
#: size in memory: a 256 MiB file about 1.5 GB and some minutes. A larger one is refused,
#: naming it, before it is read; split it into several files.
MAX_FILE_BYTES = 256 * 1024 * 1024


def parse_file(path: str | Path, encoding: str | None = None) -> list[Paper]:
    """Parse one file of the seed layout (a bibliography file is read by
    ``rlpapers.readers.read_file``). Raises ``ParseError`` naming the file if it cannot be read
    or is larger than ``MAX_FILE_BYTES``. ``encoding`` (a Python codec name) overrides the
    detected encoding."""
    path = Path(path)
    return parse_bytes(file_bytes(path), source=path.name, encoding=encoding)


def file_bytes(path: Path) -> bytes:
    """The bytes of a corpus file; ``ParseError`` naming it if it cannot be read or is larger
    than ``MAX_FILE_BYTES``."""
    try:
        with path.open("rb") as handle:
            return read_limited(handle, str(path))
    except IsADirectoryError:
        raise ParseError("is a folder, not a file", str(path)) from None
    except OSError as exc:
        raise ParseError(exc.strerror or str(exc), str(path)) from None


def read_limited(stream: IO[bytes], source: str) -> bytes:
    """All of ``stream`` (an open file, stdin), or a ``ParseError`` naming ``source`` once it
    holds more than ``MAX_FILE_BYTES``: what is read is never more than that."""
    import os

    try:
        size = os.fstat(stream.fileno()).st_size
    except (OSError, AttributeError, ValueError):  # io.BytesIO has no descriptor
        size = 0
    if size > MAX_FILE_BYTES:
        raise too_large(source, size)
    first = stream.read(size + 1) if size else b""  # a regular file: one buffer of its size
    if size and len(first) <= size:
        return first
    pieces, total = [first], len(first)  # a pipe, or a file that grew: a piece at a time
    while piece := stream.read(1 << 20):
        total += len(piece)
        if total > MAX_FILE_BYTES:
            raise too_large(source, None)
        pieces.append(piece)
    return b"".join(pieces)


def too_large(source: str, size: int | None) -> ParseError:
    mib = 1024 * 1024
    what = f"{size / mib:,.0f} MiB, more" if size else "more"
    return ParseError(
        f"{what} than the {MAX_FILE_BYTES // mib} MiB a corpus file may hold; split it into "
        "several files",
        source,
    )


Titles = Mapping[str, tuple[str, str]]


def parse_bytes(
    data: bytes,
    source: str = "<stdin>",
    titles: Titles | None = None,
    encoding: str | None = None,
) -> list[Paper]:
    from .text import decode

    try:
        return parse_text(decode(data, source, encoding), source, titles)
    except MemoryError:  # a file under the size limit, on a machine short of memory
        raise ParseError(
            f"not enough memory to parse its {len(data) / 1024 / 1024:,.0f} MiB; split it "
            "into several files",
            source,
        ) from None


def parse_text(text: str, source: str = "<text>", titles: Titles | None = None) -> list[Paper]:
    """Parse the text of a seed file into records, in file order.

    ``titles`` maps paper ids to an already derived (name, title), to skip deriving them again
    when a file is re-read after an edit.
    """
    from ..text import valid_unicode
    from .blocks import mending_vocabulary, split_blocks
    from .text import clean

    text = clean(text)
    source = valid_unicode(source)  # a file name that is not UTF-8 still prints as UTF-8
    blocks = split_blocks(text)
    if not blocks:
        warnings.warn(ParseWarning(f"{source}: empty file, no records"), stacklevel=2)
        return []
    vocab = mending_vocabulary(text)
    from .roles import forget

    try:
        return _assemble(blocks, vocab, source, titles or {})
    finally:
        forget()


def _assemble(blocks: list[Block], vocab: set[str], source: str, titles: Titles) -> list[Paper]:
    from .blocks import join_lines
    from .roles import Role, assign, split_authors, split_categories

    texts = []
    for block in blocks:  # a loop, not a comprehension: _bounded's warning names our caller
        texts.append(_bounded(join_lines(block.lines, vocab), source, block.line))
    papers: list[Paper] = []
    topic = ""
    categories: tuple[str, ...] = ()
    authors: tuple[tuple[str, ...], bool] | None = None
    pending: dict[Role, int] = {}  # the lines of the category and author lines not yet used
    for block, text, role in zip(blocks, texts, assign(texts), strict=True):
        if role is Role.HEADER:
            topic = text
        elif role is Role.OTHER:
            _warn_other(text, block.line, source)
        elif role is Role.CATEGORY:
            _warn_unused(pending.values(), source)
            categories, authors, pending = tuple(split_categories(text)), None, {role: block.line}
        elif role is Role.AUTHORS:
            _warn_unused([pending.pop(role)] if role in pending else [], source)
            names, truncated = split_authors(text)
            authors, pending[role] = (tuple(names), truncated), block.line
        else:
            _warn_long(text, block, source)
            papers.append(_paper(text, block.line, source, topic, categories, authors, titles))
            categories, authors, pending = (), None, {}
    _warn_unused(pending.values(), source)
    if not papers:
        warnings.warn(ParseWarning(f"{source}: no abstracts found, no records"), stacklevel=3)
    return papers


#: Longest paragraph kept whole. Real abstracts are a few thousand characters; a paragraph of
#: megabytes (a file without line breaks, a pasted log) is cut here, so parsing, naming and
#: indexing it stay quick.
MAX_PARAGRAPH = 65_536


def _bounded(text: str, source: str, line: int) -> str:
    if len(text) <= MAX_PARAGRAPH:
        return text
    cut = text.rfind(" ", 0, MAX_PARAGRAPH)
    message = (
        f"{source}:{line}: a paragraph of {len(text):,} characters is not an abstract; "
        f"only its first {MAX_PARAGRAPH:,} are kept"
    )
    warnings.warn(ParseWarning(message), stacklevel=4)
    return text[: cut if cut > 0 else MAX_PARAGRAPH]


#: Longer than abstracts are (arXiv's hold 1,920 characters at most): an abstract of several
#: lines longer than this is most likely papers not separated by blank lines.
LONG_ABSTRACT = 6_000


def _warn_long(text: str, block: Block, source: str) -> None:
    if len(text) > LONG_ABSTRACT and len(block.lines) > 1:
        message = (
            f"{source}:{block.line}: an abstract of {len(text):,} characters in "
            f"{len(block.lines):,} lines, longer than abstracts are: if it is several papers, "
            "put a blank line between their blocks"
        )
        warnings.warn(ParseWarning(message), stacklevel=4)


def _warn_other(text: str, line: int, source: str) -> None:
    shown = text if len(text) <= 60 else text[:59] + "…"
    message = (
        f"{source}:{line}: neither a category line, an author line nor prose, ignored: {shown}"
    )
    warnings.warn(ParseWarning(message), stacklevel=4)


def _warn_unused(lines: Iterable[int], source: str) -> None:
    for line in sorted(lines):
        message = f"{source}:{line}: category or author line with no abstract after it, ignored"
        warnings.warn(ParseWarning(message), stacklevel=4)


def _paper(
    abstract: str,
    line: int,
    source: str,
    topic: str,
    categories: tuple[str, ...],
    authors: tuple[tuple[str, ...], bool] | None,
    titles: Titles,
) -> Paper:
    from .titles import derive_title

    pid = paper_id(abstract)
    name, title = titles[pid] if pid in titles else derive_title(abstract)
    names, truncated = authors if authors else ((), False)
    return Paper(
        id=pid,
        abstract=abstract,
        title=title,
        title_derived=True,
        name=name,
        authors=names,
        authors_truncated=truncated,
        categories=categories,
        topic=topic,
        links=tuple(dict.fromkeys(_links(abstract))),
        source=source,
        line=line,
        sources=(f"{source}:{line}",),
    )


def _links(text: str) -> list[str]:
    if "http" not in text:  # most abstracts: no need to run the pattern
        return []
    from .text import URL

    return [url.rstrip(".,;:!?)") for url in URL.findall(text)]
