"""Corpus files as the store sees them: which files make a corpus and which metadata files
belong to them, what a stat says, and the bytes when it says "changed"."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ..errors import CorpusError, ParseError, ParseWarning

CORPUS = "corpus"
METADATA = "metadata"
#: The sidecar ``rlpapers keys --pin`` writes: ``id: {key: …}`` lines, read like any metadata.
KEYS_FILE = "keys.yaml"


def corpus_files(paths: Iterable[Path]) -> list[Path]:
    """The corpus's files, in corpus order (``named_corpus_files``)."""
    return list(named_corpus_files(paths))


def named_corpus_files(paths: Iterable[Path]) -> dict[Path, str]:
    """Each corpus file with the name its records show, in corpus order; a missing path is a
    ``CorpusError``.

    A folder stands for every ``*.txt`` file below it (and every bibliography file,
    ``CORPUS_SUFFIXES``), as ripgrep searches a folder: sub-folders
    too, except hidden ones, and without following symlinked folders (a link loop cannot hang
    it); sorted by the path below the folder, which is also the file's name (two sub-folders
    may each hold an ``a.txt``). A file given by itself is named by its file name.

    Only regular files are read, so no command can hang on a FIFO or a device: inside a folder,
    anything else named ``*.txt`` (a FIFO, socket, device, folder, dangling symlink or symlink
    loop) is skipped with a ``ParseWarning``; a path given by itself must be a file or a folder.
    A file whose path is not valid UTF-8 is skipped too: the record store keeps paths as text.
    """
    files: dict[Path, str] = {}
    seen: set[Path] = set()  # resolved: a file reached twice (a symlink to another) is read once

    def add(file: Path, name: str) -> None:
        real = file.resolve()
        if real not in seen:
            seen.add(real)
            files[file] = name

    for path in paths:
        if path.is_dir():
            found = [f for f in _below(path) if _regular_in_folder(f) and _utf8_path(f)]
            if not found:
                warnings.warn(
                    ParseWarning(
                        f"{path}: no *.txt files (nor .bib, .ris, .json, .jsonl) in this "
                        "folder or below it"
                    ),
                    stacklevel=2,
                )
            for file in found:
                add(file, file.relative_to(path).as_posix())
        elif path.is_file():
            if _utf8_path(path):
                add(path, path.name)
        elif path.exists():
            raise CorpusError(f"corpus path is not a regular file or a folder: {path}")
        else:
            raise CorpusError(f"corpus path does not exist: {path}")
    return files


def _below(folder: Path) -> list[Path]:
    """Every entry named ``*.txt`` below ``folder`` (not hidden, not inside a hidden or
    symlinked folder), sorted by its path below it."""
    import os

    found = []
    for root, folders, names in os.walk(folder):  # never follows a symlinked folder
        folders[:] = [name for name in folders if not name.startswith(".")]
        # a folder named *.txt is an entry too: it is skipped with a warning, as before
        entries = names + [name for name in folders if _corpus_name(name)]
        found += [Path(root, n) for n in entries if _corpus_name(n) and not n.startswith(".")]
    return sorted(found, key=lambda file: file.relative_to(folder).parts)


#: The extensions of corpus files in a folder: the text layout, and the bibliography files
#: ``rlpapers.readers`` reads (their names only: no reader is imported to list a folder).
CORPUS_SUFFIXES = (".txt", ".bib", ".ris", ".json", ".jsonl")


def _corpus_name(name: str) -> bool:
    return name.lower().endswith(CORPUS_SUFFIXES)


def _utf8_path(file: Path) -> bool:
    try:
        str(file.resolve()).encode("utf-8")
    except UnicodeEncodeError:
        from ..text import valid_unicode

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
        gone = "a dangling symlink" if file.is_symlink() else "vanished (renamed or removed)"
        reason = {errno.ENOENT: gone, errno.ELOOP: "a symlink loop"}.get(
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


def sidecars(files: list[Path]) -> list[Path]:
    """The metadata files that belong to these corpus files, in a stable order."""
    found: dict[Path, None] = {}
    for file in files:
        for candidate in (
            file.with_suffix(".yaml"),
            file.with_suffix(".yml"),
            file.parent / "metadata.yaml",
            file.parent / KEYS_FILE,
        ):
            if candidate.is_file():
                found[candidate] = None
    return list(found)


class FileState(NamedTuple):
    """One corpus or metadata file: where it is, its place in the corpus, size, mtime, hash.
    (A named tuple, as it is a row of the ``files`` table, and a class made at every start
    costs a tenth of a frozen dataclass.)"""

    path: str  # resolved
    kind: str  # CORPUS or METADATA
    position: int
    size: int
    mtime_ns: int
    sha1: str = ""
    label: str = ""  # the name its records show, where it is not the file name (not stored)

    def same_stat(self, other: FileState | None) -> bool:
        return other is not None and (self.kind, self.position, self.size, self.mtime_ns) == (
            other.kind,
            other.position,
            other.size,
            other.mtime_ns,
        )

    def hashed(self, data: bytes) -> FileState:
        import hashlib  # here: OpenSSL's load is paid only when a file is read

        return self._replace(sha1=hashlib.sha1(data).hexdigest())

    @property
    def name(self) -> str:
        """The file's name in the corpus: its path below the corpus folder, else its name."""
        return self.label or Path(self.path).name


def stat_files(
    files: list[Path], metadata: list[Path], names: dict[str, str] | None = None
) -> list[FileState]:
    """The state of every corpus file then every metadata file, in corpus order; ``names``
    gives a file (by resolved path) the name its records show. A file that vanished since the
    corpus was listed (renamed or removed by another program meanwhile) is skipped with a
    ``ParseWarning``, as if it had not been there: its records go until it is back."""
    names = names or {}
    states = []
    for kind, paths in ((CORPUS, files), (METADATA, metadata)):
        for position, path in enumerate(paths):
            try:
                st = path.stat()
            except FileNotFoundError:
                warnings.warn(
                    ParseWarning(f"{path}: vanished during the run (renamed or removed); skipped"),
                    stacklevel=3,
                )
                continue
            except OSError as error:
                raise ParseError(error.strerror or str(error), str(path)) from None
            where = str(path.resolve())
            label = names.get(where, "") if kind == CORPUS else ""
            states.append(FileState(where, kind, position, st.st_size, st.st_mtime_ns, "", label))
    return states


def read_bytes(path: str) -> bytes:
    """A corpus or metadata file's bytes; a ``ParseError`` naming it if it cannot be read or
    holds more than ``MAX_FILE_BYTES`` (refused before it is read)."""
    from ..parse import read_limited

    try:
        with open(path, "rb") as handle:
            return read_limited(handle, path)
    except OSError as error:
        raise ParseError(error.strerror or str(error), path) from None
