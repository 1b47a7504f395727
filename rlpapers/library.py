"""The Library: one corpus and its always-fresh index, the object the CLI and notebooks use."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings, resolve
from .corpus import Filters, corpus_files
from .model import Hit, Paper

if TYPE_CHECKING:
    from .index import Index


class Library:
    """A corpus of papers. ``Library()`` uses the configured corpus (the bundled seeds by default).

    >>> lib = Library()
    >>> [hit.paper.key for hit in lib.search("entropy", limit=2)]  # doctest: +SKIP
    """

    def __init__(
        self,
        corpus: list[Path | str] | None = None,
        index_dir: Path | str | None = None,
        settings: Settings | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if settings is None:
            paths = [Path(p) for p in corpus] if corpus else None
            settings = resolve(paths, Path(index_dir) if index_dir else None)
        self.settings = settings
        self.progress = progress

    @cached_property
    def files(self) -> list[Path]:
        return corpus_files(self.settings.corpus)

    @cached_property
    def index(self) -> Index:
        from .index import Index

        return Index(self.settings.index_dir, self.files, self.progress)

    @cached_property
    def papers(self) -> tuple[Paper, ...]:
        """Every paper, in corpus order (file order, then line)."""
        return tuple(self.index.all_papers())

    def get(self, ref: str) -> Paper:
        """The paper with this key or id (or unique id prefix); ``NotFoundError`` otherwise."""
        return self.index.get(ref)

    def select(self, filters: Filters | None = None) -> list[Paper]:
        papers = list(self.papers)
        return filters.apply(papers) if filters else papers

    def search(
        self,
        query: str,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
    ) -> list[Hit]:
        """Ranked hits; raises ``QueryError`` (with a position) for a malformed query."""
        return self.index.search(query, limit=limit, filters=filters, sort=sort)

    def suggest(self, query: str) -> str | None:
        """A spelling suggestion for a query that found nothing, or None."""
        return self.index.suggest(query)

    def similar(self, ref: str, limit: int = 10) -> list[Hit]:
        return self.index.similar(ref, limit)

    def stats(self, terms: int = 15) -> dict[str, Any]:
        from .index import count_by

        papers = self.papers
        return {
            "papers": len(papers),
            "files": len(self.files),
            "topics": count_by(papers, "topic"),
            "categories": count_by(papers, "categories"),
            "authors": count_by(papers, "authors"),
            "terms": self.index.distinctive_terms(terms),
        }

    def status(self) -> dict[str, Any]:
        return self.index.status()
