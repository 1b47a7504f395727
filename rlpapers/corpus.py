"""A corpus as one value: its files and every finished record (``load_corpus``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .model import Paper


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

    with Library(corpus=list(paths) if paths is not None else None) as library:
        return Corpus(tuple(library.files), library.papers)
