"""JSON and JSON Lines files (``.json``, ``.jsonl``), recognised by what they hold, read with
the standard library's ``json``.

Four shapes are records:

- CSL-JSON (Zotero, Better BibTeX, pandoc): a list of objects with ``type`` and ``title``;
- the arXiv metadata snapshot, one object a line: ``authors`` and ``categories`` as strings,
  and ``authors_parsed``;
- the arXiv listing records of the benchmarks: ``id``, ``title``, ``authors`` and
  ``categories`` as lists, ``date``, ``url``, ``abstract``;
- rlpapers' own ``json`` and ``jsonl`` exports (the record schema).

A file is read as one JSON value, else as JSON Lines (a line that is not JSON is warned about,
and the other lines are kept). A list's items are read one at a time with
``json.JSONDecoder.raw_decode``, so each record knows its line. Any other JSON (a
``package.json``, a settings file) is skipped with a note: it is not a corpus file.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
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
    safe_key,
    warn,
    year_of,
)

#: The fields of rlpapers' record schema that tell its exports apart.
OWN_FIELDS = frozenset({"id", "key", "abstract", "sources"})


def read(text: str, source: str) -> list[Record]:
    """The records of a JSON or JSON Lines file's text, in file order."""
    items = list(_items(text, source))
    if not items:
        return []
    readers = [(_reader(item), item, line) for item, line in items]
    if all(reader is None for reader, _, _ in readers):
        warn(source, 0, "not CSL-JSON, arXiv records or an rlpapers export; skipped")
        return []
    records = []
    for reader, item, line in readers:
        if reader is None:
            warn(source, line, "not a record of a known kind; skipped")
            continue
        record = reader(item, source, line)
        if record is not None:
            records.append(record)
    return records


def _items(text: str, source: str) -> Iterator[tuple[Any, int]]:
    """The file's objects with their lines: a list's items, one object, or JSON Lines."""
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(offset: int) -> int:
        return bisect_right(newlines, offset) + 1

    stripped = text.lstrip()
    start = len(text) - len(stripped)
    if stripped.startswith("["):
        yield from _list_items(text, start, source, line_of)
        return
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        yield from _lines(text, source)
        return
    yield value, line_of(start)


def _list_items(text: str, start: int, source: str, line_of: Any) -> Iterator[tuple[Any, int]]:
    """A JSON list's items one at a time; at a broken item, a warning, and the rest skipped."""
    decoder = json.JSONDecoder()
    at = start + 1
    while True:
        at = _skip(text, at)
        if at >= len(text) or text[at] == "]":
            if at >= len(text):
                warn(source, line_of(at), "the list is not closed with ]")
            return
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError) as error:
            warn(source, line_of(at), f"not JSON ({_why(error)}); the rest of the file is skipped")
            return
        yield value, line_of(at)
        at = _skip(text, end)
        if at < len(text) and text[at] == ",":
            at += 1
        elif at < len(text) and text[at] != "]":
            warn(source, line_of(at), "expected , or ] between items; the rest is skipped")
            return


def _why(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    return "nested too deeply" if isinstance(error, RecursionError) else str(error)


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _lines(text: str, source: str) -> Iterator[tuple[Any, int]]:
    """JSON Lines: each non-blank line one value; a line that is not JSON is warned about."""
    bad = 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as error:
            bad += 1
            if bad <= 20:
                warn(source, number, f"not a JSON line ({_why(error)}); skipped")
            continue
        yield value, number
    if bad > 20:
        warn(source, 0, f"{bad:,} lines in all are not JSON and were skipped")


def _reader(item: Any) -> Any:
    """The function reading ``item``, by its shape; None for anything else."""
    if not isinstance(item, dict):
        return None
    if OWN_FIELDS <= item.keys():
        return _own
    if "authors_parsed" in item or (
        isinstance(item.get("authors"), str) and isinstance(item.get("categories"), str)
    ):
        return _arxiv_snapshot
    if isinstance(item.get("authors"), list) and {"id", "title", "abstract"} <= item.keys():
        return _arxiv_listing
    if "type" in item and "title" in item:
        return _csl
    return None


def _text(value: Any, source: str, line: int, limit: int = MAX_PARAGRAPH) -> str:
    """A field's text: a string or a number as written, a list of them joined by spaces; any
    other value (an object, true/false) is no text, with a warning (it showed as Python's
    ``repr`` of it)."""
    if isinstance(value, list) and all(_plain(v) for v in value):
        value = " ".join(str(v) for v in value)
    elif value is not None and not _plain(value):
        kind = {"dict": "an object", "bool": "true or false", "list": "a list of objects"}
        shown = kind.get(type(value).__name__, type(value).__name__)
        warn(source, line, f"a field holds {shown}, not text; left out")
        value = None
    return bounded(" ".join(one_line(value).split()), limit, "field", source, line)


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(s for s in (" ".join(one_line(v).split()) for v in value) if s)


def _own(item: dict[str, Any], source: str, line: int) -> Record | None:
    """A record of rlpapers' own JSON schema."""
    title = _text(item.get("title"), source, line, MAX_TITLE)
    abstract = _text(item.get("abstract"), source, line)
    if not title and not abstract:
        warn(source, line, "record has no title and no abstract; skipped")
        return None
    year = item.get("year")
    url, doi = one_line(item.get("url")), doi_of(item.get("doi"))
    return Record(
        title=title,
        abstract=abstract,
        authors=_strings(item.get("authors")),
        authors_truncated=item.get("authors_truncated") is True,
        year=year_of(year, source, line) if year is not None else None,
        venue=_text(item.get("venue"), source, line),
        doi=doi,
        url=url,
        arxiv=arxiv_of(url, doi, *_strings(item.get("links"))),
        tags=_strings(item.get("tags")),
        categories=_strings(item.get("categories")),
        topic=_text(item.get("topic"), source, line),
        name=_text(item.get("name"), source, line),
        note=_text(item.get("note"), source, line),
        title_derived=item.get("title_derived") is True,
        key=safe_key(item.get("key")),
        kind="rlpapers",
        source=source,
        line=line,
    )


def _arxiv_snapshot(item: dict[str, Any], source: str, line: int) -> Record | None:
    """A line of the arXiv metadata snapshot."""
    ident = one_line(item.get("id")).strip()
    parsed = item.get("authors_parsed")
    if isinstance(parsed, list):
        authors = tuple(
            " ".join(p for p in (one_line(x).strip() for x in (n[1:2] + n[0:1] + n[2:])) if p)
            for n in parsed
            if isinstance(n, list)
        )
    else:
        authors = tuple(a.strip() for a in one_line(item.get("authors")).split(",") if a.strip())
    versions = item.get("versions")
    first = (
        versions[0].get("created")
        if isinstance(versions, list) and versions and isinstance(versions[0], dict)
        else None
    )
    return _arxiv(
        item,
        source,
        line,
        ident,
        tuple(a for a in authors if a),
        first or item.get("update_date"),
        one_line(item.get("categories")).split(),
        one_line(item.get("journal-ref")),
    )


def _arxiv_listing(item: dict[str, Any], source: str, line: int) -> Record | None:
    """A record of the arXiv listings the benchmarks use (authors and categories as lists)."""
    ident = one_line(item.get("id")).strip()
    return _arxiv(
        item,
        source,
        line,
        ident,
        _strings(item.get("authors")),
        item.get("date"),
        list(_strings(item.get("categories"))),
        "",
    )


def _arxiv(
    item: dict[str, Any],
    source: str,
    line: int,
    ident: str,
    authors: tuple[str, ...],
    date: Any,
    categories: list[str],
    venue: str,
) -> Record | None:
    title = _text(item.get("title"), source, line, MAX_TITLE)
    abstract = _text(item.get("abstract"), source, line)
    if not title and not abstract:
        warn(source, line, "record has no title and no abstract; skipped")
        return None
    arxiv = arxiv_of(bare=ident) or arxiv_of(item.get("url"))
    return Record(
        title=title,
        abstract=abstract,
        authors=authors,
        year=year_of(_year_text(date, arxiv), source, line),
        venue=" ".join(venue.split()),
        doi=doi_of(item.get("doi")),
        url=one_line(item.get("url")) or (f"https://arxiv.org/abs/{arxiv}" if arxiv else ""),
        arxiv=arxiv,
        categories=tuple(dict.fromkeys(categories)),
        kind="arxiv",
        source=source,
        line=line,
    )


def _year_text(date: Any, arxiv: str) -> Any:
    """The year of a date (``2025-03-18``, ``Mon, 2 Apr 2007 19:18:42 GMT``), else of a new
    style arXiv id (``2503.11731``: 2025)."""
    if date:
        import re

        found = re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", str(date))
        if found:
            return found.group(0)
    if arxiv[:4].isdigit():
        return 2000 + int(arxiv[:2])
    return None


def _csl(item: dict[str, Any], source: str, line: int) -> Record | None:
    """A CSL-JSON item."""
    title = _text(item.get("title"), source, line, MAX_TITLE)
    abstract = _text(item.get("abstract"), source, line)
    if not title and not abstract:
        warn(source, line, "item has no title and no abstract; skipped")
        return None
    authors = [_csl_name(a) for a in item.get("author") or [] if isinstance(a, dict)]
    truncated = bool(authors) and authors[-1].lower() == "others"
    authors = authors[:-1] if truncated else authors
    note, derived = own_notes(_text(item.get("note"), source, line))
    url, doi = one_line(item.get("URL")), doi_of(item.get("DOI"))
    venue = _text(item.get("container-title"), source, line)
    return Record(
        title=title,
        abstract=abstract,
        authors=tuple(a for a in authors if a),
        authors_truncated=truncated,
        year=year_of(_csl_year(item.get("issued")), source, line),
        venue=venue,
        doi=doi,
        url=url,
        arxiv=arxiv_of(item.get("number"), url, doi, venue, item.get("archive_location")),
        tags=keywords_of(item.get("keyword")),
        note=note,
        title_derived=derived,
        key=safe_key(item.get("id"), needs_letter=True),
        kind=one_line(item.get("type")),
        source=source,
        line=line,
    )


def _csl_name(name: dict[str, Any]) -> str:
    if name.get("literal"):
        return " ".join(one_line(name["literal"]).split())
    parts = (
        name.get(p)
        for p in ("given", "dropping-particle", "non-dropping-particle", "family", "suffix")
    )
    return " ".join(" ".join(one_line(p).split()) for p in parts if p)


def _csl_year(issued: Any) -> Any:
    """The year of a CSL date: ``{"date-parts": [[2025, 3]]}``, ``{"raw": "2025"}``, a string."""
    if isinstance(issued, dict):
        parts = issued.get("date-parts")
        if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
            return parts[0][0]
        return issued.get("raw") or issued.get("literal") or issued.get("season")
    return issued
