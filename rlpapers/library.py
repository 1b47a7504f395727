"""The Library: one corpus, its record store and its search index; what the CLI and notebooks use.

Listing, showing and exporting read the record store alone; only searching opens the Whoosh
index (so ``list``, ``show`` and ``export --ids`` never import Whoosh).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import RERANK_WINDOW, SIMILAR_MODES, Settings, resolve
from .errors import InputError
from .model import Paper
from .request import SearchRequest, text_words

if TYPE_CHECKING:
    from .filters import Filters
    from .hit import Hit
    from .index import Index
    from .old_keys import Rekey
    from .semantic.vectors import Vectors
    from .store import Store
    from .store.find import Found


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

    def close(self) -> None:
        """Close the record store, the ledger and the search index, if they were opened
        (``with Library() as lib:`` does it on leaving). The library stays usable: a later call
        opens them again. A search being read lazily (``iter_search``, ``search_ids``) ends with
        a ``ValueError``, as reading a closed file does."""
        if "index" in self.__dict__:
            self.index.close()
        if "store" in self.__dict__:
            self.store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @cached_property
    def files(self) -> list[Path]:
        return list(self._named_files)

    @cached_property
    def _named_files(self) -> dict[Path, str]:
        from .store.files import named_corpus_files

        return named_corpus_files(self.settings.corpus)

    @cached_property
    def store(self) -> Store:
        from .store import Store
        from .store.files import sidecars

        return Store(
            self.settings.index_dir,
            self.files,
            sidecars(self.files),
            self.settings.data_dir,
            self.progress,
            self.settings.encoding,
            names={str(f.resolve()): name for f, name in self._named_files.items()},
            ledger=self.settings.ledger,
            key_format=self.settings.key_format,
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

    def ids(self) -> list[str]:
        """Every paper's id, in corpus order (no record is read)."""
        return [pid for pid, _, _ in self.store.keys()]

    def joined_keys(self) -> list[tuple[str, str, str]]:
        """(id, key before, key now) of the papers whose key the team ledger changed when this
        data folder's ledger joined it; each is listed once."""
        return self.store.joined_keys()

    def rederive_keys(self, apply: bool = False) -> list[Rekey]:
        """Old -> new key of every paper whose key no metadata pins, by today's rule or key
        format (``old_keys``); with ``apply``, those keys are given and the old ones keep
        finding their papers."""
        from .old_keys import rederive

        found = rederive(self.store, apply)
        if apply and found:
            self.__dict__.pop("papers", None)
        return found

    def pin_keys(self) -> list[tuple[Path, int]]:
        """Write every paper's key into a ``keys.yaml`` beside its corpus file or folder, as the
        corpus names it (never into the bundled seeds), keeping what else the file holds;
        returns each file written with its number of keys (``pins``)."""
        from .pins import pin_corpus

        return pin_corpus(self.files, self.keys(), self.papers, self.store.ledger.old_keys())

    def select(self, filters: Filters | None = None) -> list[Paper]:
        papers = list(self.papers)
        return filters.apply(papers) if filters else papers

    def request(
        self,
        query: str,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
        snippets: bool = True,
        mode: str | None = None,
        rerank: int | None = None,
    ) -> SearchRequest:
        """A ``SearchRequest`` with this library's defaults: the config's ``search.mode`` and
        ``search.rerank`` when ``mode`` or ``rerank`` is None. A ``key:`` naming an old key
        (``keys --rederive --apply``) searches for the paper's current key."""
        window = rerank if rerank is not None else self.settings.search_rerank
        options = (mode or self.settings.search_mode, snippets)
        window = RERANK_WINDOW if window is None else window
        request = SearchRequest(query, limit, filters, sort, *options, window)  # checked as typed
        if "key:" in query.lower():
            from .old_keys import current_keys_in

            current = current_keys_in(query, request.lexemes, self.store.ledger)
            if current != query:
                request = SearchRequest(current, limit, filters, sort, *options, window)
        return request

    def search(
        self,
        query: str | SearchRequest,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
        snippets: bool = True,
        mode: str | None = None,
        rerank: int | None = None,
    ) -> list[Hit]:
        """Ranked hits; raises ``QueryError`` (with a position) for a malformed query.
        ``query`` is the query text with the options below, or a ``SearchRequest`` that carries
        its own (the keywords are then not used). ``snippets=False`` skips the hits' snippets.

        ``rerank``: how many of the best BM25 candidates of a plain query of several words get
        the proximity bonuses (default: the config's ``search.rerank``, else 10); 0 ranks by
        BM25 alone, faster and a little worse (docs/search-quality.md has both).

        ``mode``: "lexical" (words, the default unless the config says otherwise), "hybrid"
        (words fused with meaning) or "semantic" (meaning only); the last two need the
        ``semantic`` extra (``SemanticUnavailable`` otherwise), see docs/semantic.md.
        """
        request = _request(self, query, limit, filters, sort, snippets, mode, rerank)
        index = self.index
        if request.mode == "lexical":
            return index.healing(lambda: index.search(request))
        vectors = self.vectors
        from .semantic import search

        return search.search(index, vectors, request)

    @cached_property
    def vectors(self) -> Vectors:
        """The papers' sentence vectors, embedded now if that takes under a minute (else
        ``EmbeddingsMissing`` says how long ``embed`` takes). Needs the ``semantic`` extra."""
        from .semantic import check_available

        check_available()
        from .semantic import modes
        from .semantic.vectors import Vectors

        vectors = Vectors(self.store)
        modes.ensure(vectors, self.progress)
        return vectors

    def embed(self, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        """Embed every paper that has no current vector, however long it takes; committed in
        batches, so an interrupted run keeps its work. Returns counts of embedded and stored."""
        from .semantic import check_available

        check_available()
        from .semantic.vectors import Vectors

        vectors = Vectors(self.store)
        embedded = vectors.embed_missing(progress or self.progress)
        return {"embedded": embedded, "stored": self.store.embeddings.count(vectors.model)}

    def iter_search(
        self,
        query: str | SearchRequest,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
        snippets: bool = True,
    ) -> Iterator[Hit]:
        """``search`` made lazily, hit by hit: for streaming every hit of a large corpus (by
        words: a query text is searched in the lexical mode)."""
        request = _request(self, query, limit, filters, sort, snippets, "lexical", None)
        if request.mode != "lexical":
            return iter(self.search(request))
        index = self.index
        return index.healing_stream(lambda: index.iter_search(request))

    def search_ids(
        self,
        query: str | SearchRequest,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
    ) -> Iterator[str]:
        """The ids of ``iter_search``'s hits, in its order, without reading records the order
        does not need: for piping ids to another command."""
        request = _request(self, query, limit, filters, sort, False, "lexical", None)
        if request.mode != "lexical":
            return iter([hit.paper.id for hit in self.search(request)])
        index = self.index
        return index.healing_stream(lambda: index.iter_ids(request))

    def count(self, query: str | SearchRequest, filters: Filters | None = None) -> int:
        """How many papers ``query`` matches (after ``filters``; a request's own filters)."""
        if not isinstance(query, SearchRequest):
            query = self.request(query, None, filters, mode="lexical")
        request = query
        index = self.index
        return index.healing(lambda: index.count(request))

    def suggest(self, query: str) -> str | None:
        """A spelling suggestion for a query that found nothing, or None."""
        return self.index.suggest(query)

    def similar(self, ref: str, limit: int = 10, mode: str = "lexical") -> list[Hit]:
        """Papers most like ``ref``: by shared distinctive words ("lexical") or by meaning
        ("semantic", needs the ``semantic`` extra)."""
        _check_mode(mode, SIMILAR_MODES)
        paper = self.get(ref)
        index = self.index
        if mode == "lexical":
            return index.healing(lambda: index.similar(paper, limit))
        vectors = self.vectors
        from .semantic import search

        return search.similar(index, vectors, paper, limit, mode)

    def similar_text(self, text: str, limit: int = 10, mode: str = "lexical") -> list[Hit]:
        """Papers most like ``text`` (a paragraph, say the abstract being written), best first.
        The text is plain text: colons, quotes, parentheses and AND/OR/NOT are words, never
        query syntax. ``mode``: "lexical" (its words, ranked as ``search`` ranks them),
        "hybrid" or "semantic" (its meaning; the ``semantic`` extra). Raises ``QueryError``
        for a text with no words or longer than ``querylang.MAX_QUERY`` characters."""
        _check_mode(mode, SIMILAR_MODES)
        words = self.request(text_words(text), limit, mode="lexical")
        if mode == "lexical":
            return self.search(words)
        index, vectors = self.index, self.vectors
        from .semantic import search

        return search.similar_text(index, vectors, text, words, mode)

    def stats(self, terms: int = 15, top: int | None = None) -> dict[str, Any]:
        """Counts of papers, files, topics, categories, authors, years, venues and tags, and the
        abstracts' ``terms`` most distinctive terms; ``top``: the commonest so many values of
        each count only (None: all). Kept in the search view until the records change
        (computing it reads every record's head and every abstract term of the view: about a
        second at 75,000 papers; the kept result is one file)."""
        from .index import stats_from_json

        counts = self.index.remembered(
            "stats",
            {"terms": terms, "top": top},
            lambda: self._stats(terms, top),
            stats_from_json,
        )
        return {"papers": counts["papers"], "files": len(self.files), **counts}

    def _stats(self, terms: int, top: int | None) -> dict[str, Any]:
        """The statistics computed: the fields counted from the records' heads (no abstract
        decoded), the terms from the search view, less the LaTeX command names the heads
        name. In a big corpus the heads are counted in a process beside this one, while this
        one reads the view's terms (each about half of the time; ``workers.beside``)."""
        from collections import Counter

        from .workers import beside

        index = self.index
        big = self.store.count() >= STATS_BESIDE
        with beside(lambda: self._counted(top, apart=True), wanted=big) as counted:
            found = index.healing(lambda: index.term_candidates(terms * 2))
            papers, lists, commands = counted() or self._counted(top)
        shown = index.healing(lambda: index.without_commands(found, Counter(commands)))
        return {"papers": papers, **lists, "terms": shown[:terms]}

    def _counted(
        self, top: int | None, apart: bool = False
    ) -> tuple[int, dict[str, list[tuple[Any, int]]], dict[str, int]]:
        """The number of records, the ranked values of each counted field and the LaTeX command
        names' counts, from the records' heads; ``apart``: through a connection of the
        store's own (``Store.head_counts_apart``), in a process forked beside this one."""
        from .index import COUNTS, ranked
        from .store.db import collector_paused

        store = self.store
        papers, counts = store.head_counts_apart() if apart else store.head_counts()
        with collector_paused():  # every value ranked: 300,000 pairs at 75,000 papers, acyclic
            lists = {name: ranked(counts[field], top) for name, field in COUNTS.items()}
        return papers, lists, dict(counts["commands"])

    def status(self) -> dict[str, Any]:
        """Where the store and the index are and whether they are fresh; writes nothing."""
        report = self.store.state()
        if report["state"] != "missing" and "damaged" not in report["state"]:
            report["index"] = self.index.view.state()
        return report

    def rebuild(self) -> None:
        """Rebuild the search index from the record store now."""
        self.index.rebuild()


#: From this many records ``stats`` counts the records' heads in a process beside the one that
#: reads the view's terms: at 75,000 each takes about 0.4 s; at a few thousand, a fork costs
#: more than it saves.
STATS_BESIDE = 20_000


def _check_mode(mode: str, known: tuple[str, ...]) -> None:
    if mode not in known:
        raise InputError(f"unknown search mode {mode!r} (use one of: {', '.join(known)})")


def _request(
    library: Library,
    query: str | SearchRequest,
    limit: int | None,
    filters: Filters | None,
    sort: str,
    snippets: bool,
    mode: str | None,
    rerank: int | None,
) -> SearchRequest:
    """``query`` if it is a request, else the library's request for the query and options."""
    if isinstance(query, SearchRequest):
        return query
    return library.request(query, limit, filters, sort, snippets, mode, rerank)
