"""The Library: one corpus, its record store and its search index; what the CLI and notebooks use.

Listing, showing and exporting read the record store alone; only searching opens the Whoosh
index (so ``list``, ``show`` and ``export --ids`` never import Whoosh).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import SEARCH_MODES, SIMILAR_MODES, SORTS, Settings, resolve
from .errors import InputError, QueryError
from .model import Paper

if TYPE_CHECKING:
    from .filters import Filters
    from .hit import Hit
    from .index import Index
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

    def joined_keys(self) -> list[tuple[str, str, str]]:
        """(id, key before, key now) of the papers whose key the team ledger changed when this
        data folder's ledger joined it; each is listed once."""
        return self.store.joined_keys()

    def pin_keys(self) -> list[tuple[Path, int]]:
        """Write every paper's key into a ``keys.yaml`` beside its corpus file or folder, as the
        corpus names it (never into the bundled seeds), keeping what else the file holds;
        returns each file written with its number of keys (``pins``)."""
        from .config import bundled_seeds
        from .parse import paper_id
        from .pins import write_keys
        from .store.files import KEYS_FILE

        seeds = bundled_seeds().resolve()
        given = {str(p.resolve()): p for p in self.files}  # a symlink's folder, not its target's
        by_folder: dict[Path, list[tuple[str, str, tuple[str, ...]]]] = {}
        papers = {p.id: p for p in self.papers}
        for pid, key, file in self.keys():
            folder = given.get(file, Path(file)).parent
            if folder.resolve() == seeds:
                continue
            # the content id: what a fresh ledger will know this paper by, unless it is the id
            # of another paper here (an abstract kept beside its edited version), which wins
            cid = paper_id(papers[pid].abstract) if pid in papers else pid
            theirs = cid != pid and cid in papers  # the content id is another paper's id
            target = pid if theirs else cid
            names = (pid, key) if theirs else (pid, cid, key)  # names an entry may have
            by_folder.setdefault(folder, []).append((target, key, names))
        return [
            (folder / KEYS_FILE, write_keys(folder / KEYS_FILE, pins))
            for folder, pins in by_folder.items()
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
        mode: str | None = None,
        rerank: int | None = None,
    ) -> list[Hit]:
        """Ranked hits; raises ``QueryError`` (with a position) for a malformed query.
        ``snippets=False`` skips building the hits' snippets.

        ``rerank``: how many of the best BM25 candidates of a plain query of several words get
        the proximity bonuses (default: the config's ``search.rerank``, else 10); 0 ranks by
        BM25 alone, faster and a little worse (docs/search-quality.md has both).

        ``mode``: "lexical" (words, the default unless the config says otherwise), "hybrid"
        (words fused with meaning) or "semantic" (meaning only); the last two need the
        ``semantic`` extra (``SemanticUnavailable`` otherwise), see docs/semantic.md.
        """
        mode = mode or self.settings.search_mode
        index = self.index
        if mode == "lexical":
            window = self._rerank_window(rerank)
            return index.healing(
                lambda: index.search(
                    query, limit=limit, filters=filters, sort=sort, snippets=snippets, rerank=window
                )
            )
        _check_mode(mode, SEARCH_MODES)
        if mode == "semantic":
            _check_plain(query)
        vectors = self.vectors
        among = [p.id for p in self.select(filters)] if filters else None
        if mode == "semantic":
            from .index.analysis import fast_terms
            from .semantic import modes

            words = {term for term, _, _ in fast_terms(query)}
            return self._hits(modes.semantic(vectors, query, limit, among), words, sort, limit)
        return self._hybrid(vectors, query, limit, filters, sort, among)

    def _rerank_window(self, rerank: int | None) -> int:
        from .config import MAX_RERANK, RERANK_WINDOW

        window = rerank if rerank is not None else self.settings.search_rerank
        if window is None:
            return RERANK_WINDOW
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_RERANK:
            raise ValueError(
                f"rerank must be a whole number from 0 to {MAX_RERANK}, not {window!r}"
            )
        return window

    def _hybrid(
        self,
        vectors: Vectors,
        query: str,
        limit: int | None,
        filters: Filters | None,
        sort: str,
        among: list[str] | None,
    ) -> list[Hit]:
        from .index.query import check, is_plain, meaning_text
        from .semantic import modes

        index = self.index
        lexemes = check(query)
        plain = is_plain(lexemes)
        # a plain query's words are OR-ed: its lexical side is its top 100; a query with fields
        # or operators allows only its matches, and the dense side re-ranks those alone, by
        # what the query asks for in prose (field names, operators and NOT-ed terms left out)
        depth = modes.DEPTH if plain else None
        pairs, terms = index.healing(lambda: index.matches(query, depth, filters))
        if not plain:
            among = [p.id for p, _ in pairs]
        lexical = [(p.id, s) for p, s in pairs]
        ranked = modes.hybrid(vectors, meaning_text(lexemes), lexical, among)
        return self._hits(ranked, terms, sort, limit)

    def _hits(
        self, ranked: list[tuple[str, float]], terms: set[str], sort: str, limit: int | None
    ) -> list[Hit]:
        from .hit import Hit
        from .index import _sorted
        from .index.snippets import snippet_or_opening

        if sort not in SORTS:
            raise QueryError(f"unknown sort {sort!r} (use one of: {', '.join(SORTS)})")
        found = self.store.fetch(pid for pid, _ in ranked)
        pairs = _sorted([(found[pid], s) for pid, s in ranked if pid in found], sort)[:limit]
        hits = []
        for rank, (paper, score) in enumerate(pairs, 1):
            snippet, spans = snippet_or_opening(paper.abstract, terms)
            hits.append(Hit(paper, score, rank, snippet, spans))
        return hits

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
        query: str,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
        snippets: bool = True,
    ) -> Iterator[Hit]:
        """``search`` made lazily, hit by hit: for streaming every hit of a large corpus."""
        index = self.index
        window = self._rerank_window(None)  # the config's search.rerank, else the default
        return index.healing(
            lambda: index.iter_search(query, limit, filters, sort, snippets, window)
        )

    def search_ids(
        self,
        query: str,
        limit: int | None = 10,
        filters: Filters | None = None,
        sort: str = "score",
    ) -> Iterator[str]:
        """The ids of ``iter_search``'s hits, in its order, without reading records the order
        does not need: for piping ids to another command."""
        index = self.index
        window = self._rerank_window(None)
        return index.healing(lambda: index.iter_ids(query, limit, filters, sort, window))

    def count(self, query: str, filters: Filters | None = None) -> int:
        """How many papers ``query`` matches."""
        index = self.index
        return index.healing(lambda: index.count(query, filters))

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
        modes = _semantic_modes()
        if mode == "semantic":
            return self._hits(modes.similar(self.vectors, paper.id, limit), set(), "score", limit)
        lexical = index.healing(lambda: index.similar(paper, modes.DEPTH))
        ranked = modes.fuse(
            [(h.paper.id, h.score) for h in lexical],
            modes.similar(self.vectors, paper.id, modes.DEPTH),
        )
        return self._hits(ranked, set(), "score", limit)

    def similar_text(self, text: str, limit: int = 10, mode: str = "lexical") -> list[Hit]:
        """Papers most like ``text`` (a paragraph, say the abstract being written), best first.
        The text is plain text: colons, quotes, parentheses and AND/OR/NOT are words, never
        query syntax. ``mode``: "lexical" (its words, ranked as ``search`` ranks them),
        "hybrid" or "semantic" (its meaning; the ``semantic`` extra). Raises ``QueryError``
        for a text with no words or longer than ``index.query.MAX_QUERY`` characters."""
        from .index.query import text_query

        _check_mode(mode, SIMILAR_MODES)
        words = text_query(text)
        if mode == "lexical":
            return self.search(words, limit, mode="lexical")
        modes = _semantic_modes()
        vectors = self.vectors

        if mode == "semantic":
            terms = set(words.lower().split())
            return self._hits(modes.semantic(vectors, text, limit, None), terms, "score", limit)
        index = self.index
        pairs, terms = index.healing(lambda: index.matches(words, modes.DEPTH))
        ranked = modes.hybrid(vectors, text, [(p.id, s) for p, s in pairs], None)
        return self._hits(ranked, terms, "score", limit)

    def stats(self, terms: int = 15) -> dict[str, Any]:
        from .index import count_by

        papers = self.papers
        return {
            "papers": len(papers),
            "files": len(self.files),
            "topics": count_by(papers, "topic"),
            "categories": count_by(papers, "categories"),
            "authors": count_by(papers, "authors"),
            "years": count_by(papers, "year"),
            "venues": count_by(papers, "venue"),
            "tags": count_by(papers, "tags"),
            "terms": _without_latex(
                self.index.healing(lambda: self.index.distinctive_terms(terms * 2)), papers
            )[:terms],
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


def _check_mode(mode: str, known: tuple[str, ...]) -> None:
    if mode not in known:
        raise InputError(f"unknown search mode {mode!r} (use one of: {', '.join(known)})")


def _check_plain(query: str) -> None:
    """Semantic mode ranks by meaning alone: fields and operators would be silently ignored."""
    from .index.query import check, is_plain

    if not is_plain(check(query)):
        raise QueryError(
            'semantic mode takes plain words only; field:value, AND/OR/NOT, "phrases", '
            "wildcards and fuzzy~ work in the lexical and hybrid modes",
            query,
        )


def _without_latex(
    terms: list[tuple[str, float]], papers: Iterable[Paper]
) -> list[tuple[str, Any]]:
    """``terms`` without LaTeX command names (``sigma`` from ``$\\sigma_k$``, ``mathcal``): words
    that stand as ``\\word`` in at least half the abstracts that contain them."""
    import re

    wanted = {word.lower() for word, _ in terms}
    as_command: Counter[str] = Counter()
    with_backslash = [p.abstract for p in papers if "\\" in p.abstract]
    for abstract in with_backslash:
        as_command.update({c.lower() for c in re.findall(r"\\([A-Za-z]+)", abstract)} & wanted)
    if not as_command:
        return terms
    whole = {w: re.compile(rf"(?<![a-z]){w}(?![a-z])") for w in as_command}
    anywhere: Counter[str] = Counter()
    for paper in papers:
        lowered = paper.abstract.lower()
        anywhere.update(w for w in as_command if w in lowered and whole[w].search(lowered))
    return [
        (w, s)
        for w, s in terms
        if not as_command[w.lower()] or as_command[w.lower()] * 2 < anywhere[w.lower()]
    ]


def _semantic_modes() -> Any:
    """``rlpapers.semantic.modes``, or ``SemanticUnavailable`` with the install command when the
    ``semantic`` extra is missing (importing the module first gave a bare ModuleNotFoundError:
    exit 70 for ``similar --mode semantic``)."""
    from .semantic import check_available

    check_available()
    from .semantic import modes

    return modes
