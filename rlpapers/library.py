"""The Library: one corpus, its record store and its search index; what the CLI and notebooks use.

Listing, showing and exporting read the record store alone; only searching opens the Whoosh
index (so ``list``, ``show`` and ``export --ids`` never import Whoosh).
"""

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
    from .store import Found, Store


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
    def store(self) -> Store:
        from .metadata import sidecars
        from .store import Store

        return Store(
            self.settings.index_dir,
            self.files,
            sidecars(self.files),
            self.settings.data_dir,
            self.progress,
            self.settings.encoding,
        )

    @cached_property
    def index(self) -> Index:
        from .index import Index

        return Index(self.store, self.settings.index_dir / "view", self.progress)

    @cached_property
    def papers(self) -> tuple[Paper, ...]:
        """Every paper, in corpus order (file order, then place in the file)."""
        return tuple(self.store.papers())

    def get(self, ref: str) -> Paper:
        """The paper with this id, key, unique id prefix (≥ 4 characters), or former id or key;
        ``NotFoundError`` (with a did-you-mean) otherwise."""
        return self.store.get(ref)

    def find(self, refs: list[str]) -> Found:
        """Many references at once: the papers found (each once, in order) and the unknown ones."""
        return self.store.find(refs)

    def keys(self) -> list[tuple[str, str, str]]:
        """(id, key, corpus file) of every paper."""
        return self.store.keys()

    def pin_keys(self) -> list[tuple[Path, int]]:
        """Write every paper's key into a ``keys.yaml`` beside its corpus file or folder (never
        into the bundled seeds); returns each file written with its number of keys."""
        from .config import bundled_seeds
        from .metadata import KEYS_FILE, write_keys
        from .parse import paper_id

        seeds = bundled_seeds().resolve()
        by_folder: dict[Path, dict[str, str]] = {}
        papers = {p.id: p for p in self.papers}
        for pid, key, file in self.keys():
            folder = Path(file).parent
            if folder == seeds:
                continue
            # the content id: what a fresh ledger will know this paper by
            target = paper_id(papers[pid].abstract) if pid in papers else pid
            by_folder.setdefault(folder, {})[target] = key
        return [
            (folder / KEYS_FILE, write_keys(folder / KEYS_FILE, entries))
            for folder, entries in by_folder.items()
        ]

    def select(self, filters: Filters | None = None) -> list[Paper]:
        papers = list(self.papers)
        return filters.apply(papers) if filters else papers

    def search(
        self,
        query: str,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
        snippets: bool = True,
    ) -> list[Hit]:
        """Ranked hits; raises ``QueryError`` (with a position) for a malformed query.
        ``snippets=False`` skips building the hits' snippets."""
        index = self.index
        return index.healing(
            lambda: index.search(query, limit=limit, filters=filters, sort=sort, snippets=snippets)
        )

    def suggest(self, query: str) -> str | None:
        """A spelling suggestion for a query that found nothing, or None."""
        return self.index.suggest(query)

    def similar(self, ref: str, limit: int = 10) -> list[Hit]:
        paper = self.get(ref)
        index = self.index
        return index.healing(lambda: index.similar(paper, limit))

    def stats(self, terms: int = 15) -> dict[str, Any]:
        from .index import count_by

        papers = self.papers
        return {
            "papers": len(papers),
            "files": len(self.files),
            "topics": count_by(papers, "topic"),
            "categories": count_by(papers, "categories"),
            "authors": count_by(papers, "authors"),
            "terms": self.index.healing(lambda: self.index.distinctive_terms(terms)),
        }

    def status(self) -> dict[str, Any]:
        """Where the store and the index are and whether they are fresh; writes nothing."""
        report = self.store.state()
        if report["state"] != "missing" and "damaged" not in report["state"]:
            report["index"] = self.index.view.state()
        return report

    def rebuild(self) -> None:
        """Rebuild the search index from the record store now."""
        self.index.rebuild()
