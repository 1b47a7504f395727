"""The Library: one corpus and its index, the object the CLI and notebooks talk to."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from .config import Settings, resolve
from .corpus import Corpus, Filters, corpus_files, load_corpus
from .model import Paper


class Library:
    """A corpus of papers. ``Library()`` uses the configured corpus (the bundled seeds by default).

    >>> lib = Library()
    >>> len(lib.papers)
    40
    """

    def __init__(
        self,
        corpus: list[Path | str] | None = None,
        index_dir: Path | str | None = None,
        settings: Settings | None = None,
    ) -> None:
        if settings is None:
            paths = [Path(p) for p in corpus] if corpus else None
            settings = resolve(paths, Path(index_dir) if index_dir else None)
        self.settings = settings

    @cached_property
    def files(self) -> list[Path]:
        return corpus_files(self.settings.corpus)

    @cached_property
    def corpus(self) -> Corpus:
        return load_corpus(self.files)

    @property
    def papers(self) -> tuple[Paper, ...]:
        return self.corpus.papers

    def get(self, ref: str) -> Paper:
        """The paper with this key or id (or unique id prefix); ``NotFoundError`` otherwise."""
        return self.corpus.get(ref)

    def select(self, filters: Filters | None = None) -> list[Paper]:
        papers = list(self.papers)
        return filters.apply(papers) if filters else papers
