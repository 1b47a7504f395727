"""The full-text index: the only package that imports Whoosh.

``Index`` opens (building or catching up as needed, see ``view``) a Whoosh index over the record
store's records and answers searches, similar-paper queries and statistics: Whoosh gives ids and
scores, the store gives the records.

Ranking is BM25 per field with field weights (``ranking``). For a query of two or more plain
words, the best ``ranking.RERANK_WINDOW`` candidates are re-ordered with a bonus for papers whose
title or abstract has the words as a phrase, or close together (``snippets.proximity_factor``):
done on the few candidates in Python, it costs far less than Whoosh's span queries over every
match (reading the terms' positions from the index cost more than analysing the candidates'
records again, and those records are the first ones shown anyway). The window is fixed, never
derived from the limit, so a limited search is always the first hits of an unlimited one.

A plain query of two or more words is scored term at a time (``accumulate``): the same scores,
without Whoosh's union matchers, whose bookkeeping is most of the cost of a query of common
words and the whole cost of a pasted paragraph. One of 7 distinct words or more (a request) is
expanded with the terms of its best papers and scored again (``feedback``).
"""

from __future__ import annotations

from ._lightimport import import_whoosh

import_whoosh()  # before any other Whoosh import: see _lightimport

import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..config import RERANK_WINDOW as RERANK_WINDOW  # the default re-rank window
from ..errors import IndexNotice, QueryError, RlpapersError
from ..hit import Hit
from ..model import Paper
from ..querylang import Lexeme, is_plain, plain_words
from ..store import Store
from . import accumulate, feedback, memo, stats
from .budget import check_expansions, check_negations, check_phrases
from .hits import make_hit, sort_hits
from .query import parse
from .ranking import rerank
from .schema import BOOSTS
from .snippets import query_terms, snippet_or_opening
from .stats import COUNTS as COUNTS
from .stats import count_by as count_by
from .stats import ranked as ranked
from .stats import stats_from_json as stats_from_json
from .view import Progress, View

if TYPE_CHECKING:
    from ..request import SearchRequest

T = TypeVar("T")

#: An unlimited search (``--all``, a pipe) first takes this many hits from Whoosh's quick top-k
#: search, and ranks every match only if the reader wants more than that.
FIRST_PAGE = 1000
#: ... unless its words are found this many times or fewer in all (an upper bound on its
#: matches): then every match is ranked at once. Whoosh ranks a few thousand matches about as
#: fast as it takes the top 1,000 of them, so paging them would only rank them twice; its top-k
#: search gains on bigger sets (docs/performance.md).
RANK_ALL_UPTO = 10_000


class Index:
    def __init__(self, store: Store, folder: Path, progress: Progress | None = None) -> None:
        self.store = store
        self.view = View(folder, store, progress)
        self._opened: Any = None
        self._searcher: Any = None

    # --- lifecycle ----------------------------------------------------------------------------

    @property
    def opened(self) -> Any:
        if self._opened is None:
            self._opened = self.view.open()
        return self._opened

    @property
    def searcher(self) -> Any:
        if self._searcher is None:
            from .ranking import BM25

            self._searcher = self.opened.ix.searcher(weighting=BM25(BOOSTS))
        return self._searcher

    @property
    def schema(self) -> Any:
        """The index's schema, as the searcher holds it (Whoosh's ``ix.schema`` reads the table
        of contents from disk on every use)."""
        return self.searcher.schema

    def rebuild(self) -> None:
        self.close()
        self._opened = self.view.rebuild()

    def healing(self, action: Callable[[], T]) -> T:
        """Run a read; if the index turns out damaged, rebuild it from the store (with a note)
        and run it once more."""
        try:
            return action()
        except _not_damage():
            raise
        except Exception as error:
            _damaged(error)
        self.rebuild()
        return action()

    def healing_stream(self, start: Callable[[], Iterator[T]]) -> Iterator[T]:
        """``healing`` for a read taken lazily: it starts now (healed as ``healing`` does);
        damage met later, while it is taken (a paper's stored id is read as its hit is
        reached), rebuilds the index with the note and the read goes on past what it gave,
        from the same read started again (the rebuilt index answers as the damaged one would
        have)."""
        items = self.healing(start)
        return self._healed(items, start, self._searcher)

    def _healed(
        self, items: Iterator[T], start: Callable[[], Iterator[T]], searcher: Any
    ) -> Iterator[T]:
        given = 0
        try:
            for item in items:
                yield item
                given += 1
            return
        except _not_damage():
            raise
        except Exception as error:
            if self._searcher is not searcher:  # closed (or healed) meanwhile: not damage
                raise
            _damaged(error)
        self.rebuild()
        yield from islice(start(), given, None)

    def remembered(
        self,
        name: str,
        depends: dict[str, Any],
        compute: Callable[[], T],
        read: Callable[[Any], T | None],
    ) -> T:
        """``compute()``, kept in the live generation for the store state it reflects and
        ``depends`` (``memo``): later calls in that state get ``read`` of what was kept, where
        ``read`` accepts it (it returns None for anything else, which is computed again).
        A view behind the store (the last good one, while another process updates it) keeps
        nothing: its manifest names a state older than the records ``compute`` reads."""
        opened = self.opened
        if not self.view.up_to_date(opened.manifest):
            return compute()
        key = {**opened.manifest, "rlpapers": _version(), **depends}
        kept = memo.recall(opened.path, name, key)
        value = read(kept) if kept is not None else None
        if value is None:
            value = compute()
            memo.keep(opened.path, name, key, value)
        return value

    def close(self) -> None:
        """Close the searcher; the next search opens the view again, caught up with the store."""
        if self._searcher is not None:
            self._searcher.close()
            self._searcher = None
        self._opened = None

    def status(self) -> dict[str, Any]:
        """The search index's state (fresh, stale, damaged or missing), without writing."""
        return self.view.state()

    def papers_of(self, results: Any) -> list[tuple[Paper, float]]:
        """Whoosh results as (record, score) pairs, the records read from the store."""
        return self._records([(r["id"], r.score) for r in results])

    def _records(self, pairs: list[tuple[str, float]]) -> list[tuple[Paper, float]]:
        """(id, score) pairs as (record, score), in one read of the store; ids it no longer
        holds are left out."""
        found = self.store.fetch(pid for pid, _ in pairs)
        return [(found[pid], score) for pid, score in pairs if pid in found]

    # --- search -------------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> list[Hit]:
        """Ranked hits for ``request`` (``limit=None``: all of them); raises ``QueryError``.
        Hits have no snippets with ``request.snippets`` false."""
        return list(self.iter_search(request))

    def iter_search(self, request: SearchRequest) -> Iterator[Hit]:
        """``search`` as an iterator: the query is run now (a ``QueryError`` is raised here),
        but in score order without filters the records are read from the store only as the hits
        are reached, so a reader that stops early (``| head``) pays for what it read."""
        parsed, phrase, results = self._run(request)
        reader = self.searcher.reader()
        terms = query_terms(parsed, reader) if request.snippets else None
        authors = query_terms(parsed, reader, {"author"})
        pairs = self._ranked(results, request, phrase)
        return _while_open(
            make_hit(paper, score, rank, terms, authors)
            for rank, (paper, score) in enumerate(islice(pairs, request.limit), 1)
        )

    def iter_ids(self, request: SearchRequest) -> Iterator[str]:
        """The ids ``iter_search`` gives, in its order, read from the index: records are read
        from the store only where the order needs them (filters, a sort by title or key, a
        phrase query's re-rank window)."""
        parsed, phrase, results = self._run(request)
        if not request.in_index_order:
            pairs = self._ranked(results, request, phrase)
            return _while_open(islice((paper.id for paper, _ in pairs), request.limit))
        rest = iter(results)
        head = [p.id for p, _ in self._window(rest, phrase, request.rerank)] if phrase else []
        return _while_open(islice(chain(head, (hit["id"] for hit in rest)), request.limit))

    def matches(self, request: SearchRequest) -> tuple[list[tuple[Paper, float]], set[str]]:
        """(paper, score) pairs in the request's order (at least ``request.limit`` of them when
        there are that many), and the analysed terms the query looks for (for snippets): the
        lexical side of a hybrid search (``SearchRequest.lexical_side``)."""
        parsed, phrase, results = self._run(request)
        terms = query_terms(parsed, self.searcher.reader())
        return list(self._ranked(results, request, phrase)), terms

    def hits(
        self, ranked: Iterable[tuple[str, float]], terms: set[str], sort: str, limit: int | None
    ) -> list[Hit]:
        """Hits for (id, score) pairs ranked elsewhere (by meaning, or fused), in ``sort``
        order, with snippets for ``terms`` (the abstract's opening when none stands in it)."""
        ranked = list(ranked)
        found = self.store.fetch(pid for pid, _ in ranked)
        pairs = sort_hits([(found[pid], s) for pid, s in ranked if pid in found], sort)[:limit]
        hits = []
        for rank, (paper, score) in enumerate(pairs, 1):
            snippet, spans = snippet_or_opening(paper.abstract, terms)
            hits.append(Hit(paper, score, rank, snippet, spans))
        return hits

    def _run(self, request: SearchRequest) -> tuple[Any, list[str], Any]:
        """Run the request's query: (parsed query, its phrase terms, Whoosh's results). Enough
        results are fetched for the re-rank window, so a limit never changes the order."""
        from whoosh.query.qcore import QueryError as WhooshQueryError

        parsed, lexemes = parse(request.query, self.schema, request.lexemes)
        reader = self.searcher.reader()
        check_expansions(parsed, reader, request.query)
        if not is_plain(lexemes):  # a plain query's phrases are scored within a budget
            check_phrases(parsed, reader, request.query)
            check_negations(parsed, reader, request.query)
        limit, window = request.limit, request.rerank
        phrase = self._phrase_terms(lexemes) if window > 0 else []
        fetch: int | None = None  # every match: filters and other orders need them all
        if request.in_index_order:
            fetch = max(limit or FIRST_PAGE, window) if phrase else limit or FIRST_PAGE
            if limit is None and _found_at_most(parsed, reader, RANK_ALL_UPTO):
                fetch = None
        try:
            results = self._search(parsed, fetch, exact=not is_plain(lexemes))
        except WhooshQueryError as error:  # e.g. a phrase in a field that keeps no positions
            raise QueryError(str(error), request.query, None) from None
        if limit is None and fetch is not None:
            return parsed, phrase, self._pages(parsed, results, fetch)
        return parsed, phrase, results

    def _search(
        self, parsed: Any, limit: int | None, exact: bool = False, searcher: Any = None
    ) -> Any:
        """Whoosh's results for ``parsed``: the best ``limit`` (all with None). With ``exact``
        the top ``limit`` are collected without Whoosh's shortcuts (skipping blocks and dropping
        parts of the query whose best score looks too low to matter): their bounds are wrong for
        AND, NOT, ``+word`` and field queries, which would lose hits or parts of their scores,
        and a limited search would be no prefix of the unlimited one. A plain query (words
        OR-ed) keeps them: they hold there, and they make a search of common words quick.
        ``searcher``: another than the index's current one (a lazy search's own)."""
        searcher = searcher or self.searcher
        if not exact and feedback.applies(parsed):  # a request: see feedback
            return feedback.search(searcher, parsed, limit, self._texts)
        if not exact and accumulate.suits(parsed):  # several words: see accumulate
            return accumulate.search(searcher, parsed, limit)
        if limit is None or not exact:
            return searcher.search(parsed, limit=limit)
        from whoosh.collectors import TopCollector

        collector = TopCollector(limit, usequality=False, replace=0)
        searcher.search_with_collector(parsed, collector)
        return collector.results()

    def _texts(self, ids: list[str]) -> list[str]:
        """Each paper's title and abstract as one text ("" for an id no longer stored)."""
        found = self.store.fetch(ids)
        return [f"{found[i].title} . {found[i].abstract}" if i in found else "" for i in ids]

    def _pages(self, parsed: Any, first: Any, size: int) -> Iterator[Any]:
        """Every match in score order, in two pages: the first ``size`` from a top-k search
        (``_search``), then, only if the reader asks for more, the rest from a ranking of every
        match (``search X | head`` never pays for that one)."""
        yield from first
        if first.scored_length() < size:
            return
        seen = {hit.docnum for hit in first}
        # from the searcher of the first page: if the index was closed meanwhile, that says so
        rest = self._search(parsed, limit=None, searcher=first.searcher)
        yield from (hit for hit in rest if hit.docnum not in seen)

    def _ranked(
        self, results: Any, request: SearchRequest, phrase: list[str]
    ) -> Iterator[tuple[Paper, float]]:
        """(record, score) pairs in the request's order, after its filters, with the re-rank of
        a phrase query's first ``request.rerank`` matches. In score order without filters the
        records are read from the store only as the pairs are taken, so a reader that stops
        early (``| head``) pays for what it read."""
        filters, window = request.filters, request.rerank
        if request.in_index_order and not phrase:
            return self._stream((hit["id"], hit.score) for hit in results)
        if request.in_index_order:  # re-rank the window, stream the rest
            rest = iter(results)
            head = self._window(rest, phrase, window)
            return chain(head, self._stream((hit["id"], hit.score) for hit in rest))
        hits = self.papers_of(results)
        if filters:
            hits = [(p, s) for p, s in hits if filters.matches(p)]
        if phrase:
            hits = rerank(hits, phrase, self.searcher.reader(), window)
        return iter(sort_hits(hits, request.sort))

    def _window(
        self, rest: Iterator[Any], phrase: list[str], window: int
    ) -> list[tuple[Paper, float]]:
        """The first ``window`` of Whoosh's hits taken from ``rest``, re-ranked for ``phrase``
        (``iter_search`` and ``iter_ids`` both stream what ``rest`` holds after them)."""
        best = self.papers_of(islice(rest, window))
        return rerank(best, phrase, self.searcher.reader(), window)

    def _stream(self, matches: Iterable[tuple[str, float]]) -> Iterator[tuple[Paper, float]]:
        """(record, score) for each (id, score), the records read from the store in batches
        that grow (10, then 100, then 1,000), so the first lines cost little and the rest not
        much."""
        matches = iter(matches)
        size = 10
        while batch := list(islice(matches, size)):
            yield from self._records(batch)
            size = min(size * 10, 1000)

    def count(self, request: SearchRequest) -> int:
        """How many papers the request's query matches (after its filters)."""
        parsed, lexemes = parse(request.query, self.schema, request.lexemes)
        exact = not is_plain(lexemes)
        if request.filters:
            results = self._search(parsed, None, exact)
            return sum(request.filters.matches(p) for p, _ in self.papers_of(results))
        if not exact and accumulate.suits(parsed):
            return accumulate.count(self.searcher, parsed)
        return len(self.searcher.search(parsed, limit=1))

    def _phrase_terms(self, lexemes: Sequence[Lexeme]) -> list[str]:
        """The analysed terms of a plain query of two or more words, in order (else empty)."""
        words = plain_words(lexemes)
        if len(words) < 2 or not is_plain(lexemes):
            return []
        terms = [t.text for t in self.schema["abstract"].analyzer(" ".join(words))]
        return terms if len(terms) >= 2 else []

    def suggest(self, query: str) -> str | None:
        """``query`` with unknown words replaced by the closest corpus words that a search
        finds (no stop word: neither the index nor a query keeps them), or None."""
        from whoosh.analysis.filters import STOP_WORDS

        from . import spelling
        from .ranking import QUERY_STOP_WORDS

        unsearched = frozenset(STOP_WORDS) | QUERY_STOP_WORDS
        return spelling.suggest(query, self.store.vocabulary(), unsearched)

    def similar(self, paper: Paper, limit: int = 10) -> list[Hit]:
        """Papers whose abstracts share the most distinctive terms with ``paper``'s, itself excluded."""
        searcher = self.searcher
        docnum = searcher.document_number(id=paper.id)
        from whoosh.classify import KLModel

        # a paper without an abstract (a bibliography entry) is compared by its title; where
        # none of its words is in an abstract, Whoosh's weighting divides by zero: none similar
        text = paper.abstract or f"{paper.title} {paper.name}"
        try:
            results = searcher.more_like(
                docnum, "abstract", text=text, top=limit + 1, numterms=25, model=KLModel
            )
        except ZeroDivisionError:
            return []
        found = self.papers_of(results)
        found = [(p, s) for p, s in found if p.id != paper.id][:limit]
        return [Hit(p, s, rank) for rank, (p, s) in enumerate(found, 1)]

    # --- statistics ---------------------------------------------------------------------------

    def distinctive_terms(
        self, number: int = 20, commands: Counter[str] | None = None
    ) -> list[tuple[str, float]]:
        """The abstracts' ``number`` most distinctive terms (tf-idf), each shown as its
        commonest spelling; given ``commands`` (in how many abstracts each LaTeX command name
        stands), without those names (``stats``: the abstracts are read from the store only as
        far as the filter needs)."""
        if commands is None:
            return self.term_candidates(number)
        return self.without_commands(self.term_candidates(number * 2), commands)[:number]

    def term_candidates(self, number: int) -> list[tuple[str, float]]:
        """The ``number`` most distinctive terms, LaTeX command names among them (``stats``
        asks twice as many as it shows, as some may be such names)."""
        from ..store.db import collector_paused

        reader = self.searcher.reader()
        counts = self.store.word_counts()
        with collector_paused():  # the terms of every segment, none in a cycle
            return stats.distinctive_terms(reader, counts, number)

    def without_commands(
        self, terms: list[tuple[str, float]], commands: Counter[str]
    ) -> list[tuple[str, float]]:
        """``terms`` without the LaTeX command names ``commands`` counts (``stats.without_latex``:
        the abstracts are read from the store only as far as the filter needs)."""
        store = self.store
        return store.reading(lambda: stats.without_latex(terms, commands, store.abstracts()))


def _not_damage() -> tuple[type[Exception], ...]:
    """Errors a read of the index raises that are not damage: a bad query, or rlpapers' own."""
    from whoosh.query.qcore import QueryError as WhooshQueryError

    return (QueryError, WhooshQueryError, RlpapersError)


def _damaged(error: Exception) -> None:
    warnings.warn(
        IndexNotice(f"the search index was damaged ({type(error).__name__}); rebuilding it"),
        stacklevel=4,
    )


def _version() -> str:
    """The running rlpapers' version (a kept result from another release is computed again):
    the package's ``__version__``, read from the package already imported (no import of it
    from here, below it; ``importlib.metadata`` took 10-20 ms to find it)."""
    import sys

    return str(getattr(sys.modules[__name__.partition(".")[0]], "__version__", ""))


def _found_at_most(parsed: Any, reader: Any, most: int) -> bool:
    """Whether the query's words (a phrase's too) occur in at most ``most`` documents in all
    (counting a document once per field and word): never for a query with a prefix, wildcard,
    fuzzy term, range or other part whose words are not known before it runs."""
    from whoosh.query import MultiTerm

    total = 0
    for leaf in parsed.leaves():
        if not leaf.has_terms() or isinstance(leaf, MultiTerm):  # fuzzy terms expand too
            return False
        for field, text in leaf.terms(phrases=True):
            total += reader.doc_frequency(field, text)
            if total > most:
                return False
    return True


def _while_open(items: Iterator[T]) -> Iterator[T]:
    """``items``, read lazily from a searcher: one that was closed meanwhile (``Index.close``,
    ``Library.close``) ends the stream with a ``ValueError`` saying so, not Whoosh's bare
    ``ReaderClosed``."""
    from whoosh.reading import ReaderClosed

    try:
        yield from items
    except ReaderClosed:
        raise ValueError("a search read after its index was closed") from None
