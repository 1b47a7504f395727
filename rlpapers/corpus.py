"""A corpus: which files, their records merged and deduplicated, citation keys, YAML overrides."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import CorpusError, ParseWarning
from .model import Paper


def corpus_files(paths: Iterable[Path]) -> list[Path]:
    """Expand folders to their ``*.txt`` files (sorted); a missing path is a ``CorpusError``.

    Only regular files are read, so no command can hang on a FIFO or a device: inside a folder,
    anything else named ``*.txt`` (a FIFO, socket, device, folder, dangling symlink or symlink
    loop) is skipped with a ``ParseWarning``; a path given by itself must be a file or a folder.
    A file whose path is not valid UTF-8 is skipped too: the record store keeps paths as text.
    """
    files: dict[Path, None] = {}
    for path in paths:
        if path.is_dir():
            found = [
                file
                for file in sorted(path.glob("*.txt"))
                if _regular_in_folder(file) and _utf8_path(file)
            ]
            if not found:
                warnings.warn(ParseWarning(f"{path}: no *.txt files in this folder"), stacklevel=2)
            for file in found:
                files[file] = None
        elif path.is_file():
            if _utf8_path(path):
                files[path] = None
        elif path.exists():
            raise CorpusError(f"corpus path is not a regular file or a folder: {path}")
        else:
            raise CorpusError(f"corpus path does not exist: {path}")
    return list(files)


def _utf8_path(file: Path) -> bool:
    try:
        str(file.resolve()).encode("utf-8")
    except UnicodeEncodeError:
        from .text import valid_unicode

        shown = valid_unicode(str(file))
        warnings.warn(ParseWarning(f"{shown}: the path is not valid UTF-8; skipped"), stacklevel=3)
        return False
    return True


def _regular_in_folder(file: Path) -> bool:
    """Whether a folder's ``*.txt`` entry is a regular file; anything else is warned about."""
    import errno
    import stat

    try:
        mode = file.stat().st_mode  # follows symlinks: a link to a regular file is fine
    except OSError as error:
        reason = {errno.ENOENT: "a dangling symlink", errno.ELOOP: "a symlink loop"}.get(
            error.errno or 0, error.strerror or str(error)
        )
        warnings.warn(ParseWarning(f"{file}: {reason}, skipped"), stacklevel=3)
        return False
    if stat.S_ISREG(mode):
        return True
    kinds = {stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket"}
    kind = next((name for test, name in kinds.items() if test(mode)), "a device")
    warnings.warn(ParseWarning(f"{file}: {kind}, not a regular file; skipped"), stacklevel=3)
    return False


@dataclass(frozen=True)
class Corpus:
    files: tuple[Path, ...]
    papers: tuple[Paper, ...]

    def get(self, ref: str) -> Paper:
        """A paper by the one lookup rule (``rlpapers.lookup``)."""
        from .lookup import MemoryLookup

        return MemoryLookup(self.papers).get(ref)


def load_corpus(paths: Iterable[Path | str] | None = None) -> Corpus:
    """Every finished record of a corpus (the bundled seeds by default), with the ids and keys
    the identity ledger gives them: the same records ``rlpapers list`` prints."""
    from .library import Library

    library = Library(corpus=list(paths) if paths is not None else None)
    return Corpus(tuple(library.files), library.papers)


def finish(papers: list[Paper]) -> list[Paper]:
    """Merge copies and give keys to papers seen on their own, with no ledger (``rlpapers
    parse``): a preview of what the store will give them, not a promise."""
    from .keys import base_key, keys_from_bases

    groups: dict[str, list[Paper]] = {}
    for paper in papers:
        groups.setdefault(paper.id, []).append(paper)
    merged = {pid: merge_copies(copies) for pid, copies in groups.items() if len(copies) > 1}
    bases = {pid: base_key(merged.get(pid, copies[0])) for pid, copies in groups.items()}
    finisher = Finisher(keys_from_bases(bases), merged, {}, {})
    return [done for paper in papers if (done := finisher(paper)) is not None]


@dataclass
class Finisher:
    """Finishes records one at a time, in corpus order.

    Called with each parsed paper (by content id), it returns the finished record — its paper
    id (``ids``, default: the content id), key, merged copies and metadata changes — or None for
    a later copy of an abstract already returned (copies merge into the first).
    """

    keys: dict[str, str]
    merged: dict[str, Paper]
    changes: dict[str, dict[str, Any]]
    ids: dict[str, str]
    emitted: set[str] = field(default_factory=set)

    def __call__(self, paper: Paper) -> Paper | None:
        cid = paper.id
        if cid in self.merged:
            if cid in self.emitted:
                return None
            self.emitted.add(cid)
            paper = self.merged[cid]
        changes = self.changes.get(cid, {})
        if "title" in changes:
            changes = {**changes, "title_derived": False}  # the user gave it: no longer a guess
        return paper.with_changes(id=self.ids.get(cid, cid), key=self.keys[cid], **changes)


def merge_copies(copies: list[Paper]) -> Paper:
    """Copies of one abstract in several places, as one record listing every place."""
    first = copies[0]
    for other in copies[1:]:
        first = first.with_changes(
            authors=first.authors or other.authors,
            authors_truncated=first.authors_truncated if first.authors else other.authors_truncated,
            categories=first.categories or other.categories,
            topic=first.topic or other.topic,
            sources=first.sources + tuple(s for s in other.sources if s not in first.sources),
        )
    return first


# --- filters -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """Field filters shared by ``list``, ``search`` and ``export``.

    Text filters are case- and accent-insensitive substrings. Repeating ``category``, ``author``,
    ``topic``, ``source`` or ``venue`` ORs its values (``--category RL --category NLP``); every
    ``tag`` is required (tags are matched whole, ignoring case); ``years`` is an inclusive
    (first, last) range, either end open (None). Different filters AND.
    """

    category: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    venue: tuple[str, ...] = ()
    tag: tuple[str, ...] = ()
    years: tuple[int | None, int | None] | None = None
    derived_titles: bool = False

    def __bool__(self) -> bool:
        return any((self.category, self.author, self.topic, self.source, self.venue, self.tag)) or (
            self.years is not None or self.derived_titles
        )

    def matches(self, paper: Paper) -> bool:
        checks = (
            (self.category, paper.categories),
            (self.author, paper.authors),
            (self.topic, (paper.topic,)),
            (self.source, paper.sources or (paper.source,)),
            (self.venue, (paper.venue,)),
        )
        if not all(_any_contains(wanted, values) for wanted, values in checks if wanted):
            return False
        if self.tag and not {t.casefold() for t in self.tag} <= {t.casefold() for t in paper.tags}:
            return False
        if self.derived_titles and not paper.title_derived:
            return False
        return self.years is None or _in_years(paper.year, self.years)

    def apply(self, papers: Iterable[Paper]) -> list[Paper]:
        return [paper for paper in papers if self.matches(paper)]


def parse_years(text: str) -> tuple[int | None, int | None]:
    """``2024``, ``2020..2024``, ``2020..`` or ``..2024`` as an inclusive (first, last) range."""
    match = re.fullmatch(r"\s*(\d{4})?\s*(\.\.)?\s*(\d{4})?\s*", text)
    if (
        not match
        or not (match.group(1) or match.group(3))
        or (not match.group(2) and match.group(1) and match.group(3))
    ):
        raise ValueError(f"{text!r} is not a year or a range such as 2020..2024")
    first = int(match.group(1)) if match.group(1) else None
    last = int(match.group(3)) if match.group(3) else None
    if not match.group(2):
        return first, first
    if first is not None and last is not None and first > last:
        raise ValueError(f"{text!r}: the first year comes after the last")
    return first, last


def _in_years(year: int | None, years: tuple[int | None, int | None]) -> bool:
    first, last = years
    return year is not None and (first is None or year >= first) and (last is None or year <= last)


def _any_contains(wanted: tuple[str, ...], values: Iterable[str]) -> bool:
    from .text import fold

    folded = [fold(v) for v in values]
    return any(fold(w) in v for w in wanted for v in folded)
