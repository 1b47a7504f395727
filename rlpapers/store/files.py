"""Corpus files as the store sees them: what a stat says, and the bytes when it says "changed"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import ParseError

CORPUS = "corpus"
METADATA = "metadata"


@dataclass(frozen=True)
class FileState:
    """One corpus or metadata file: where it is, its place in the corpus, size, mtime, hash."""

    path: str  # resolved
    kind: str  # CORPUS or METADATA
    position: int
    size: int
    mtime_ns: int
    sha1: str = ""

    def same_stat(self, other: FileState | None) -> bool:
        return other is not None and (self.kind, self.position, self.size, self.mtime_ns) == (
            other.kind,
            other.position,
            other.size,
            other.mtime_ns,
        )

    def hashed(self, data: bytes) -> FileState:
        import hashlib  # here: OpenSSL's load is paid only when a file is read

        return replace(self, sha1=hashlib.sha1(data).hexdigest())

    @property
    def name(self) -> str:
        return Path(self.path).name


def stat_files(files: list[Path], metadata: list[Path]) -> list[FileState]:
    """The state of every corpus file then every metadata file, in corpus order."""
    states = []
    for kind, paths in ((CORPUS, files), (METADATA, metadata)):
        for position, path in enumerate(paths):
            try:
                st = path.stat()
            except OSError as error:
                raise ParseError(error.strerror or str(error), str(path)) from None
            states.append(
                FileState(str(path.resolve()), kind, position, st.st_size, st.st_mtime_ns)
            )
    return states


def read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ParseError(error.strerror or str(error), path) from None
