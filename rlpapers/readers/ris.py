"""RIS files (``.ris``: EndNote, Mendeley, Zotero, Web of Science), read with rispy.

rispy maps the tags to names and gathers each record's lines. It knows no line numbers and
drops a record that has no ``ER`` line at the end of the file (and reads two records as one
where the ``ER`` between them is missing), so the lines are handed to it through a filter that
notes where each record starts and closes a record left open, with a warning: the record is
kept. The text between records goes (rispy took a line there starting ``TY`` for a record's
start, and lost the record before it). Any text encoding, BOM and CRLF are dealt with before
(``readers.read``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..parse import MAX_PARAGRAPH
from .record import (
    MAX_TITLE,
    Record,
    arxiv_of,
    bounded,
    doi_of,
    keywords_of,
    one_line,
    own_notes,
    person,
    safe_key,
    warn,
    year_of,
)

#: The tags rispy gives, first found first, for each field.
TITLE = ("title", "primary_title", "translated_title", "short_title")
VENUE = (
    "secondary_title",
    "journal_name",
    "alternate_title3",
    "alternate_title1",
    "alternate_title2",
    "tertiary_title",
)
YEAR = ("year", "publication_year", "date")
AUTHORS = ("authors", "first_authors")
#: An end-of-record line added after the text: it closes a record the file left open.
_CLOSE = "ER  - "
#: A line meant to start a record that is not written as one (``TY - JOUR``, ``TY -JOUR``).
_LIKE_A_START = re.compile(r"TY\s*-")


def read(text: str, source: str) -> list[Record]:
    """The records of a RIS file's text, in file order."""
    lines = text.split("\n")
    try:
        found = _parse(lines, 0, source)
    except Exception:  # rispy failed on the whole file: each record is read on its own
        found = []
        starts = [n for n, line in enumerate(lines) if line.startswith("TY  -")] or [0]
        for begin, end in zip(starts, [*starts[1:], len(lines)], strict=True):
            try:
                found += _parse(lines[begin:end], begin, source)
            except Exception as error:
                warn(source, begin + 1, f"record not read ({type(error).__name__}); skipped")
    if not found and not any(line.startswith("TY") for line in lines):
        warn(source, 0, "no RIS record (no TY line starts one); nothing read")
    return [r for data, line in found if (r := _record(data, line, source)) is not None]


def _parse(lines: list[str], offset: int, source: str) -> list[tuple[dict[str, Any], int]]:
    """rispy's records of ``lines`` with the line each starts on (``offset`` lines before)."""
    parser = _parser()
    found = parser.parse_lines(_closed(lines, offset, source, parser.starts))
    return list(zip(found, parser.starts, strict=False))


def _closed(lines: list[str], offset: int, source: str, starts: list[int]) -> Iterator[str]:
    """The lines, each record closed: an ``ER`` line is added where a record starts before
    the last one ended, or the file ends inside one (each with a warning). ``starts`` gets the
    line each record starts on."""
    inside = False
    for number, line in enumerate(lines, offset + 1):
        line = line.rstrip("\r")
        if line.startswith("TY  -"):
            if inside:
                warn(source, starts[-1], "record without an ER line before the next one; kept")
                yield _CLOSE
            starts.append(number)
            inside = True
        elif not inside:  # text between records: rispy took any line starting TY for a start
            if _LIKE_A_START.match(line):
                warn(source, number, "not a record's start (TY, two spaces, a dash); skipped")
            continue
        elif line.startswith("ER  -"):
            inside = False
        yield line
    if inside:
        warn(source, starts[-1], "record without an ER line at the end of the file; kept")
        yield _CLOSE


def _parser() -> Any:
    from rispy.parser import RisParser

    parser = RisParser(skip_unknown_tags=True)
    parser.starts = []
    return parser


def _record(data: dict[str, Any], line: int, source: str) -> Record | None:
    def first(names: tuple[str, ...]) -> Any:
        return next((data[n] for n in names if data.get(n)), None)

    def text(names: tuple[str, ...], limit: int = MAX_PARAGRAPH) -> str:
        value = first(names)
        value = " ".join(value) if isinstance(value, list) else one_line(value)
        return bounded(" ".join(value.split()), limit, names[0], source, line)

    title = text(TITLE, MAX_TITLE)
    abstract = text(("abstract", "notes_abstract"))
    if not title and not abstract:
        warn(source, line, "record has no title and no abstract; skipped")
        return None
    names = [one_line(n).strip() for n in (first(AUTHORS) or [])]
    truncated = bool(names) and names[-1].lower() == "others"
    names = names[:-1] if truncated else names
    urls = [one_line(u).strip() for u in data.get("urls") or []]
    notes = [one_line(n).strip() for n in data.get("notes") or []]
    derived = any(own_notes(n)[1] for n in notes)
    notes = [kept for n in notes if (kept := own_notes(n)[0])]
    venue = text(VENUE)
    doi = doi_of(data.get("doi"))
    return Record(
        title=title,
        abstract=abstract,
        authors=tuple(_person(n) for n in names if n),
        authors_truncated=truncated,
        year=year_of(first(YEAR), source, line),
        venue=venue,
        doi=doi,
        url=urls[0] if urls else "",
        arxiv=arxiv_of(*urls, doi, venue, *notes),
        tags=keywords_of(data.get("keywords") or []),
        note=". ".join(n.rstrip(".") for n in notes),
        title_derived=derived,
        key=safe_key(data.get("id"), needs_letter=True),
        kind=one_line(data.get("type_of_reference")),
        source=source,
        line=line,
    )


def _person(name: str) -> str:
    """A RIS name as ``First Last Suffix``: RIS writes ``Last, First, Suffix`` (``Heath, Robert
    W., Jr.``), where BibTeX's order with two commas is ``Last, Suffix, First``."""
    parts = [part.strip() for part in name.split(",")]
    if len(parts) == 3 and all(parts):
        return f"{parts[1]} {parts[0]} {parts[2]}"
    return person(name)
