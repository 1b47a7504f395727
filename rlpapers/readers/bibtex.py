"""BibTeX and BibLaTeX files (``.bib``), read with bibtexparser 2.

bibtexparser splits the file into entries, ``@string`` macros, comments and the blocks it
could not read (an unbalanced brace ends at the next ``@entry``, so the entries after it are
kept), each with its first line. The parse stack is left empty: a field's value is taken as
written and evaluated here, because bibtexparser resolves a bare macro (``journal = icml``) but
not a concatenation (``icml # " 2020"``), and leaves the entries it reports as duplicates
unevaluated. ``crossref`` is resolved here too (bibtexparser leaves it to the caller): an entry
takes the fields it lacks from the entry it names, and a ``@proceedings`` title becomes its
``booktitle``. Each problem is a ``ParseWarning`` naming the file and line; the entry is kept
where it can be, else skipped.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from ..parse import MAX_PARAGRAPH
from .latex import decode
from .record import (
    MAX_TITLE,
    Record,
    arxiv_of,
    bounded,
    doi_of,
    keywords_of,
    own_notes,
    person,
    safe_key,
    title_identity,
    warn,
    year_of,
)

#: BibTeX's predefined macros: the months.
MONTHS = {
    m[:3].lower(): m
    for m in (
        "January February March April May June July August September October November December"
    ).split()
}
#: Fields a venue is read from, first found first.
VENUE_FIELDS = (
    "journal",
    "journaltitle",
    "booktitle",
    "howpublished",
    "eventtitle",
    "school",
    "institution",
    "organization",
)
#: Entry types that hold data for other entries, not papers.
NOT_PAPERS = frozenset({"xdata", "set"})
#: Entry types that are the volume holding papers (as DBLP exports each conference's, beside
#: its papers): no paper where another entry of the file names one by ``crossref``.
VOLUMES = frozenset({"proceedings", "mvproceedings", "collection", "mvcollection"})
#: The most entries a ``crossref`` chain is followed through.
CROSSREF_DEPTH = 4

Fields = dict[str, str]
#: An ``@type{`` or ``@type(`` at the start of a line: a file without one holds no entry at all.
_AN_ENTRY = re.compile(r"^[ \t]*@[ \t]*[A-Za-z]+[ \t]*[{(]", re.M)


def read(text: str, source: str) -> list[Record]:
    """The entries of a BibTeX file's text, in file order, as records."""
    entries = _entries(_without_comments(text), source)
    if not entries and not _AN_ENTRY.search(text):
        warn(source, 0, "no BibTeX entry (no line starting @type{); nothing read")
    by_key = {entry.key.lower(): entry.fields for entry in entries if entry.key}
    parents = _parents(entries)
    records = []
    for entry in entries:
        if entry.kind in NOT_PAPERS or (entry.kind in VOLUMES and entry.key.lower() in parents):
            continue
        fields = entry.fields
        if "crossref" in fields:
            fields = _crossref(fields, by_key, source, entry.line)
        record = _record(entry, fields, source)
        if record is not None:
            records.append(record)
    return _shared_keys(records, source)


def _parents(entries: list[_Entry]) -> set[str]:
    """The keys (lower case) the file's entries name by ``crossref``."""
    named = (e.fields.get("crossref", "").strip().lower() for e in entries)
    return {key for key in named if key}


def _shared_keys(records: list[Record], source: str) -> list[Record]:
    """Entries of one file that give one key: copies of one entry (the same title and first
    author) all keep it, so they are one paper; different entries all lose it, each named by
    its DOI, arXiv id or title instead. Either way which entry comes first decides nothing (the
    first keeping the key made re-sorting a file, or deleting a duplicate, move the key and the
    id it names to another paper)."""
    from dataclasses import replace

    groups: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        if record.key:
            groups.setdefault(record.key.lower(), []).append(i)
    for at in (found for found in groups.values() if len(found) > 1):
        first = records[at[0]]
        same = len({title_identity(records[i].title, records[i].authors[:1]) for i in at}) == 1
        for i in at[1:]:
            what = f"duplicate key {first.key!r} (first at line {first.line})"
            end = "a copy of that entry" if same else "another entry: neither keeps the key"
            warn(source, records[i].line, f"{what}; {end}")
        if not same:
            for i in at:
                records[i] = replace(records[i], key="")
    return records


class _Entry(NamedTuple):
    key: str  # safe, or empty
    kind: str
    line: int
    fields: Fields


def _entries(text: str, source: str) -> list[_Entry]:
    """Each entry with its fields evaluated, in file order. A duplicate key keeps its entry
    without the key; blocks that could not be read are warned about and skipped."""
    from bibtexparser.model import (
        DuplicateBlockKeyBlock,
        DuplicateFieldKeyBlock,
        Entry,
        ParsingFailedBlock,
        String,
    )

    strings = dict(MONTHS)
    seen: dict[str, int] = {}
    out = []
    for block, line in _blocks(text, source):
        if isinstance(block, DuplicateBlockKeyBlock):
            previous = seen.get(block.key.lower())
            where = f" (first at line {previous})" if previous else ""
            what = f"duplicate key {block.key!r}{where}"
            block = block.ignore_error_block
            if not isinstance(block, Entry):  # an entry's is settled in ``_shared_keys``
                warn(source, line, f"{what}; the later definition is used")
        elif isinstance(block, DuplicateFieldKeyBlock):
            names = ", ".join(sorted(block.duplicate_keys))
            warn(source, line, f"field {names} given more than once; the first is kept")
            block = block.ignore_error_block
        elif isinstance(block, ParsingFailedBlock):
            reason = getattr(block.error, "abort_reason", "") or str(block.error)
            warn(source, line, f"entry not read ({' '.join(reason.split())}); skipped")
            continue
        if isinstance(block, String):
            strings[str(block.key).lower()] = _value(str(block.value), strings, source, line)
        elif isinstance(block, Entry):
            key = str(block.key or "")
            seen.setdefault(key.lower(), line)
            safe = safe_key(key)
            if key and not safe:
                warn(source, line, f"key {key[:60]!r} is not a safe citation key; not kept")
            fields = _fields(block, strings, source, line)
            out.append(_Entry(safe, str(block.entry_type).lower(), line, fields))
    return out


#: Where an entry starts, and what a ``%`` comment and its scan look at.
_ENTRY_START = re.compile(r"^[ \t]*@", re.M)
_A_COMMENT = re.compile(r"(?<!\\)%")
_COMMENT_TOKENS = re.compile(r'\\.|[{}"%]')


def _without_comments(text: str) -> str:
    """``text`` without the ``%`` comments biber skips: from a ``%`` between entries or between
    an entry's fields (outside any value in braces or quotes) to the line end. bibtexparser
    counted such a line into the next field's name (the field was lost) or stopped at a comma
    in it (the entry was lost). Line ends stay, so the lines keep their numbers; only the
    entries holding a ``%`` are scanned."""
    if not _A_COMMENT.search(text):
        return text
    starts = [m.start() for m in _ENTRY_START.finditer(text)]
    bounds = zip([0, *starts], [*starts, len(text)], strict=True)
    return "".join(
        _chunk_without_comments(text[a:b]) if _A_COMMENT.search(text, a, b) else text[a:b]
        for a, b in bounds
    )


#: An entry opened with a parenthesis, ``@type(``: its fields stand outside any brace.
_PAREN_ENTRY = re.compile(r"[ \t]*@[ \t]*[A-Za-z]+[ \t]*\(")


def _chunk_without_comments(chunk: str) -> str:
    """One entry (from its ``@`` to the next entry's) without its ``%`` comments: those where
    its fields stand, at depth 1 in braces in an ``@type{`` entry, at depth 0 in an ``@type(``
    one, and outside quotes."""
    fields = 0 if _PAREN_ENTRY.match(chunk) else 1
    out, depth, quoted, start, position = [], 0, False, 0, 0
    last = chunk.rfind("%") + 1  # nothing after the last ``%`` changes
    while (token := _COMMENT_TOKENS.search(chunk, position, last)) is not None:
        char, position = token.group(), token.end()
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
            quoted = quoted and depth > 0
        elif char == '"' and depth <= fields:  # a value in quotes
            quoted = not quoted
        elif char == "%" and depth <= fields and not quoted:
            end = chunk.find("\n", position)
            end = len(chunk) if end < 0 else end
            out.append(chunk[start : token.start()])
            start = position = end
    out.append(chunk[start:])
    return "".join(out)


def _blocks(text: str, source: str) -> list[tuple[Any, int]]:
    """bibtexparser's blocks with their first lines (1-based). Should bibtexparser fail on
    the whole text (it raises on states it calls its own bugs), each ``@`` block is read on
    its own, so one such block loses only itself."""
    try:
        return [(b, (b.start_line or 0) + 1) for b in _parse(text)]
    except Exception:
        pass
    import re

    out: list[tuple[Any, int]] = []
    starts = [m.start() for m in re.finditer(r"(?m)^[ \t]*@", text)] or [0]
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        offset = text.count("\n", 0, begin)
        try:
            out += [(b, (b.start_line or 0) + 1 + offset) for b in _parse(text[begin:end])]
        except Exception as error:
            warn(source, offset + 1, f"entry not read ({type(error).__name__}); skipped")
    return out


def _parse(text: str) -> list[Any]:
    from bibtexparser.entrypoint import parse_string

    with _quiet():
        return list(parse_string(text, parse_stack=[]).blocks)


@contextmanager
def _quiet() -> Iterator[None]:
    """bibtexparser logs each block it could not read; the reader warns about them itself."""
    logger = logging.getLogger("bibtexparser.splitter")
    was = logger.disabled
    logger.disabled = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.disabled = was


def _fields(entry: Any, strings: dict[str, str], source: str, line: int) -> Fields:
    fields: Fields = {}
    for item in entry.fields:
        name = str(item.key).lower()
        if name not in fields:
            fields[name] = _value(str(item.value), strings, source, line)
    return fields


def _value(raw: str, strings: dict[str, str], source: str, line: int) -> str:
    """A field's value as written (``{..}``, ``".."``, a number, a macro, or pieces joined
    with ``#``), evaluated; an undefined macro stands for itself, with a warning."""
    out = []
    for piece in _pieces(raw) if "#" in raw else [raw]:
        piece = piece.strip()
        if len(piece) >= 2 and (piece[0], piece[-1]) in (("{", "}"), ('"', '"')):
            out.append(piece[1:-1])
        elif piece.isdigit() or not piece:
            out.append(piece)
        elif piece.lower() in strings:
            out.append(strings[piece.lower()])
        else:
            warn(source, line, f"undefined @string macro {piece[:40]!r}; kept as written")
            out.append(piece)
    return "".join(out)


def _pieces(raw: str, separator: str = "#") -> list[str]:
    """``raw`` cut at each ``separator`` outside braces and quotes."""
    pieces, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(raw):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            quoted = not quoted
        elif char == separator and depth == 0 and not quoted:
            pieces.append(raw[start:i])
            start = i + 1
    return [*pieces, raw[start:]]


def _crossref(fields: Fields, by_key: dict[str, Fields], source: str, line: int) -> Fields:
    """``fields`` with the fields it lacks taken from the entries its ``crossref`` names (a
    chain of at most ``CROSSREF_DEPTH``, each entry once)."""
    merged = dict(fields)
    seen: set[str] = set()
    target = fields["crossref"].strip().lower()
    while target and target not in seen and len(seen) < CROSSREF_DEPTH:
        seen.add(target)
        parent = by_key.get(target)
        if parent is None:
            warn(source, line, f"crossref {target!r} names no entry of this file")
            break
        if "title" in parent and "booktitle" not in merged:
            merged["booktitle"] = parent["title"]
        for name, value in parent.items():
            if name not in ("title", "crossref", "ids"):
                merged.setdefault(name, value)
        target = parent.get("crossref", "").strip().lower()
    return merged


def _record(entry: _Entry, fields: Fields, source: str) -> Record | None:
    line = entry.line
    text = {
        name: bounded(value, MAX_PARAGRAPH, f"{name} field", source, line)
        for name, value in fields.items()
    }
    title = bounded(decode(text.get("title", "")), MAX_TITLE, "title", source, line)
    abstract = decode(text.get("abstract", ""))
    if not title and not abstract:
        warn(source, line, f"@{entry.kind} {entry.key!r} has no title and no abstract; skipped")
        return None
    authors, truncated = _people(text.get("author") or text.get("editor") or "")
    venue = next((text[name] for name in VENUE_FIELDS if text.get(name)), "")
    note, derived = own_notes(decode(text.get("note", "")))
    prefix = (text.get("archiveprefix") or text.get("eprinttype") or "arxiv").lower()
    return Record(
        title=title,
        abstract=abstract,
        authors=authors,
        authors_truncated=truncated,
        year=year_of(text.get("year") or text.get("date"), source, line),
        venue=decode(venue),
        doi=doi_of(text.get("doi")),
        url=" ".join(text.get("url", "").split()),
        arxiv=arxiv_of(
            text.get("url"),
            text.get("doi"),
            venue,
            text.get("note"),
            bare=text.get("eprint") if prefix == "arxiv" else None,
        ),
        tags=keywords_of(decode(text.get("keywords", ""))),
        note=note,
        title_derived=derived,
        key=entry.key,
        kind=entry.kind,
        source=source,
        line=line,
    )


def _people(value: str) -> tuple[tuple[str, ...], bool]:
    """The names of an ``author`` field, each ``First Last`` and decoded, and whether the list
    ends in ``and others``."""
    if not value.strip():
        return (), False
    from bibtexparser.middlewares.names import split_multiple_persons_names

    try:
        names = [n.strip() for n in split_multiple_persons_names(value)]
    except Exception:  # an author field bibtexparser cannot split is one name
        names = [value]
    truncated = bool(names) and names[-1].lower() == "others"
    if truncated:
        names.pop()
    people = (decode(_extended_name(name) or person(name)) for name in names)
    return tuple(name for name in people if name), truncated


#: A name in BibLaTeX's extended format, as Better BibLaTeX writes one with a particle:
#: ``family=Berg, given=Anna, prefix=van der, useprefix=true``.
_EXTENDED_PART = re.compile(r"^\s*([a-z-]+)\s*=\s*(.*?)\s*$", re.I | re.S)


def _extended_name(name: str) -> str:
    """A name in BibLaTeX's extended format as ``given prefix family suffix``; "" for any other
    name."""
    if "=" not in name:
        return ""
    parts = {}
    for piece in _pieces(name, ","):
        found = _EXTENDED_PART.match(piece)
        if found is None:
            return ""
        parts[found.group(1).lower()] = found.group(2)
    if "family" not in parts and "given" not in parts:
        return ""
    return " ".join(parts[p] for p in ("given", "prefix", "family", "suffix") if parts.get(p))
