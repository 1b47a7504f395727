"""Searches by meaning: the hybrid and semantic modes of a ``SearchRequest``, and papers like
another or like a text by meaning (``Library`` hands them the index and the vectors).

- **hybrid**: a plain query's words are OR-ed, so its lexical side is its top ``modes.DEPTH``;
  a query with fields or operators allows only its matches, and the dense side re-ranks those
  alone, by what the query asks for in prose (``index.query.meaning_text``: field names,
  operators and NOT-ed terms left out).
- **semantic**: papers by meaning alone; the request refused fields and operators.

The query's lexemes come from the request; the query is not lexed again here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..index import Index
from ..index.analysis import fast_terms
from ..querylang import meaning_text
from . import modes
from .vectors import Vectors

if TYPE_CHECKING:
    from ..hit import Hit
    from ..model import Paper
    from ..request import SearchRequest


def search(index: Index, vectors: Vectors, request: SearchRequest) -> list[Hit]:
    """The hits of a hybrid or semantic ``request``."""
    among = None
    if request.filters:
        among = [p.id for p in request.filters.apply(list(index.store.papers()))]
    if request.mode == "semantic":
        words = {term for term, _, _ in fast_terms(request.query)}
        ranked = modes.semantic(vectors, request.query, request.limit, among)
        return index.hits(ranked, words, request.sort, request.limit)
    plain = request.plain
    depth = modes.DEPTH if plain else None
    pairs, terms = index.healing(lambda: index.matches(request.lexical_side(depth)))
    if not plain:
        among = [p.id for p, _ in pairs]
    lexical = [(p.id, s) for p, s in pairs]
    ranked = modes.hybrid(vectors, meaning_text(request.lexemes), lexical, among)
    return index.hits(ranked, terms, request.sort, request.limit)


def similar(index: Index, vectors: Vectors, paper: Paper, limit: int, mode: str) -> list[Hit]:
    """Papers most like ``paper`` by meaning ("semantic"), or by its words and its meaning
    fused ("hybrid"), itself excluded."""
    if mode == "semantic":
        return index.hits(modes.similar(vectors, paper.id, limit), set(), "score", limit)
    lexical = index.healing(lambda: index.similar(paper, modes.DEPTH))
    ranked = modes.fuse(
        [(h.paper.id, h.score) for h in lexical], modes.similar(vectors, paper.id, modes.DEPTH)
    )
    return index.hits(ranked, set(), "score", limit)


def similar_text(
    index: Index, vectors: Vectors, text: str, words: SearchRequest, mode: str
) -> list[Hit]:
    """Papers most like ``text`` by meaning ("semantic"), or by ``words`` (a request for the
    text's words) and its meaning fused ("hybrid")."""
    limit = words.limit
    if mode == "semantic":
        terms = set(words.query.lower().split())
        return index.hits(modes.semantic(vectors, text, limit, None), terms, "score", limit)
    pairs, terms = index.healing(lambda: index.matches(words.lexical_side(modes.DEPTH)))
    ranked = modes.hybrid(vectors, text, [(p.id, s) for p, s in pairs], None)
    return index.hits(ranked, terms, "score", limit)
