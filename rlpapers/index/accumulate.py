"""Term-at-a-time BM25 for long plain queries: the same scores as Whoosh's matchers, summed
posting list by posting list into one table.

Whoosh scores an OR of words document by document through a tree of union matchers, asking each
node for its best possible score to skip what cannot enter the top k. That pays off for a few
words; for a paragraph (a 50-word request is some 200 terms over the six default fields) the
tree's bookkeeping is the whole cost: 4.7 s for 50 words and 33 s for 300 at 75k papers. Here
each term's postings are read block by block and scored with the same ``ranking`` scorer
(its idf, field weight, query-term weight and length norms), then the best are taken once.
A phrase (a hyphenated word, ``off-policy``) is scored by its Whoosh matcher, as before.

``LONG_QUERY``: the number of terms from which a plain query is scored here; below it Whoosh's
pruning is quicker (short queries, the common case, keep their speed).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

#: Terms (a word in one field is one term) from which a plain query is scored here.
LONG_QUERY = 40


def is_long(parsed: Any) -> bool:
    return sum(1 for _ in parsed.leaves()) >= LONG_QUERY


class Hit:
    """One scored document, read like a Whoosh hit: ``hit["id"]``, ``hit.score``, ``hit.docnum``."""

    __slots__ = ("docnum", "score", "_searcher")

    def __init__(self, searcher: Any, docnum: int, score: float) -> None:
        self._searcher = searcher
        self.docnum = docnum
        self.score = score

    def __getitem__(self, name: str) -> Any:
        return self._searcher.stored_fields(self.docnum)[name]


class Results:
    """Hits best first (ties by document number, as Whoosh orders them), like Whoosh's
    ``Results`` where ``Index`` reads them."""

    def __init__(self, searcher: Any, ranked: list[tuple[int, float]], total: int) -> None:
        self.searcher = searcher
        self._hits = [Hit(searcher, docnum, score) for docnum, score in ranked]
        self.total = total

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._hits)

    def __len__(self) -> int:
        return self.total

    def scored_length(self) -> int:
        return len(self._hits)


def search(searcher: Any, parsed: Any, limit: int | None) -> Results:
    """The best ``limit`` documents for the OR of ``parsed``'s leaves (all with None)."""
    scores = accumulate(searcher, parsed)
    key = _order_key(scores)
    if limit is None:
        ranked = sorted(scores.items(), key=key)
    else:
        ranked = heapq.nsmallest(limit, scores.items(), key=key)
    return Results(searcher, ranked, len(scores))


def _order_key(scores: dict[int, float]) -> Any:
    return lambda item: (-item[1], item[0])


def accumulate(searcher: Any, parsed: Any) -> dict[int, float]:
    """Document number -> the sum of its leaves' scores, for every document a leaf matches."""
    from whoosh.query import Term

    scores: dict[int, float] = {}
    pieces = searcher.subsearchers if not searcher.is_atomic() else [(searcher, 0)]
    for leaf in parsed.leaves():
        for subsearcher, offset in pieces:
            if isinstance(leaf, Term):
                _add_term(subsearcher, offset, leaf, scores)
            else:
                _add_matcher(leaf.matcher(subsearcher), offset, scores)
    return scores


def _add_term(searcher: Any, offset: int, leaf: Any, scores: dict[int, float]) -> None:
    """``leaf``'s scores in one segment, read a block of postings at a time."""
    from whoosh.matching.wrappers import FilterMatcher

    field = searcher.schema[leaf.fieldname]
    text = field.to_bytes(leaf.text)
    reader = searcher.reader()
    if (leaf.fieldname, text) not in reader:
        return
    scorer = searcher.weighting.scorer(searcher, leaf.fieldname, text, qf=getattr(leaf, "times", 1))
    matcher = reader.postings(leaf.fieldname, text)
    deleted: frozenset[int] = frozenset()
    if isinstance(matcher, FilterMatcher):
        deleted, matcher = frozenset(matcher._ids), matcher.child
    lengths, norms = getattr(scorer, "lengths", None), getattr(scorer, "norms", None)
    if lengths is None or not hasattr(matcher, "_read_ids"):
        matcher.scorer = scorer
        _add_matcher(matcher, offset, scores, deleted)
        return
    idf, k1p, size, get = scorer.idf, scorer.k1 + 1, len(lengths), scores.get
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        for docnum, weight in zip(matcher._ids, matcher._weights, strict=True):
            if docnum in deleted:
                continue
            lbyte = lengths[docnum] if docnum < size else 0
            if lbyte:  # the arithmetic of ranking._Scorer._score_from_bytes, in its order
                score = float(idf * weight * k1p / (weight + norms[lbyte]))
            else:
                score = scorer._score(weight, scorer.dfl(docnum))
            key = docnum + offset
            scores[key] = get(key, 0.0) + score
        matcher._next_block()


def _add_matcher(
    matcher: Any, offset: int, scores: dict[int, float], deleted: frozenset[int] = frozenset()
) -> None:
    """A matcher's scores, posting by posting (phrases, and postings of another layout)."""
    while matcher.is_active():
        docnum = matcher.id()
        if docnum not in deleted:
            scores[docnum + offset] = scores.get(docnum + offset, 0.0) + matcher.score()
        matcher.next()
