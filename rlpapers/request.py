"""One search, asked once: ``SearchRequest`` carries the query with its lexemes and every
option of the search, checked when it is made.

A malformed query, an unknown mode or sort, or a re-rank window out of range fails here, before
an index is opened (perhaps built) or a vector read; whatever runs the search later (``Index``,
the hybrid and semantic modes in ``semantic.search``) takes the lexemes from the request and never
lexes the query again. Importing this module is cheap: the query language (``index.query``,
which brings Whoosh) is imported only when a request is made.
"""

from __future__ import annotations

import sys
from copy import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .config import MAX_RERANK, RERANK_WINDOW, SEARCH_MODES, SORTS
from .errors import InputError, QueryError

if TYPE_CHECKING:
    from .filters import Filters
    from .querylang import Lexeme


@dataclass(frozen=True)
class SearchRequest:
    """A search: ``query`` in the query language (docs/guide.md), at most ``limit`` hits (None:
    all), kept by ``filters``, in ``sort`` order ("score", "title", "key"), by ``mode``
    ("lexical", "hybrid", "semantic"), with or without ``snippets``, the best ``rerank`` BM25
    candidates of a plain query of several words getting the proximity bonuses (0: none).

    Raises ``QueryError`` (with the 1-based position) for a malformed query or an unknown sort,
    ``InputError`` for an unknown mode, ``ValueError`` for a ``rerank`` out of range or a
    negative ``limit``.
    ``lexemes`` is the query as the query language reads it, made once.

    >>> SearchRequest("entropy", limit=5).plain  # doctest: +SKIP
    True
    """

    query: str
    limit: int | None = 10
    filters: Filters | None = None
    sort: str = "score"
    mode: str = "lexical"
    snippets: bool = True
    rerank: int = RERANK_WINDOW
    lexemes: tuple[Lexeme, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_rerank(self.rerank)
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"limit must be None or at least 0, not {self.limit}")
        if self.limit is not None and self.limit >= sys.maxsize:  # past any count: all of them
            object.__setattr__(self, "limit", None)
        if self.mode not in SEARCH_MODES:
            raise InputError(
                f"unknown search mode {self.mode!r} (use one of: {', '.join(SEARCH_MODES)})"
            )
        if self.sort not in SORTS:
            raise QueryError(f"unknown sort {self.sort!r} (use one of: {', '.join(SORTS)})")
        from .querylang import check

        object.__setattr__(self, "lexemes", tuple(check(self.query)))
        if self.mode == "semantic" and not self.plain:
            # semantic mode ranks by meaning alone: fields and operators would be ignored
            raise QueryError(
                'semantic mode takes plain words only; field:value, AND/OR/NOT, "phrases", '
                "wildcards and fuzzy~ work in the lexical and hybrid modes",
                self.query,
            )

    @property
    def plain(self) -> bool:
        """Whether the query is plain words (OR-ed), without fields, operators or marks."""
        from .querylang import is_plain

        return is_plain(self.lexemes)

    def lexical_side(self, depth: int | None) -> SearchRequest:
        """This request for the lexical side of a hybrid search: its best ``depth`` matches
        (None: all) in score order, for the fusion to rank; the lexemes are kept, not made
        again."""
        side = copy(self)
        object.__setattr__(side, "limit", depth)
        object.__setattr__(side, "sort", "score")
        return side

    @property
    def in_index_order(self) -> bool:
        """Whether the hits come in Whoosh's score order as they are (no filters, no sort)."""
        return not self.filters and self.sort == "score"


def text_words(text: str) -> str:
    """Plain text as a query of its words alone (``index.query.text_query``): punctuation,
    quotes, parentheses and field colons dropped, AND/OR/NOT as words. Raises ``QueryError``
    for a text without words or over ``querylang.MAX_QUERY`` characters."""
    from .querylang import text_query

    return text_query(text)


def check_rerank(window: object) -> None:
    """Raise ``ValueError`` unless ``window`` is a whole number from 0 to ``MAX_RERANK``."""
    if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_RERANK:
        raise ValueError(f"rerank must be a whole number from 0 to {MAX_RERANK}, not {window!r}")
