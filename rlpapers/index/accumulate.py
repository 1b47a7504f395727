"""Term-at-a-time BM25 for long plain queries: the same scores as Whoosh's matchers, summed
posting list by posting list into one table.

Whoosh scores an OR of words document by document through a tree of union matchers, asking each
node for its best possible score to skip what cannot enter the top k. That pays off for a few
words; for a paragraph (a 50-word request is some 200 terms over the six default fields) the
tree's bookkeeping is the whole cost, growing with the words (docs/performance.md). Here
each term's postings are read block by block and scored with the same ``ranking`` scorer
(its idf, field weight, query-term weight and length norms), then the best are taken once.
A phrase (a hyphenated word, ``off-policy``) is scored by its Whoosh matcher.

``LONG_QUERY``: the number of terms from which a plain query is scored here; below it Whoosh's
pruning is quicker (short queries, the common case, keep their speed).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from math import log
from typing import Any

#: Terms (a word in one field is one term) from which a plain query is scored here.
LONG_QUERY = 40
#: Most abstract postings a long query reads. Reading one costs a few microseconds in Python
#: (Whoosh unpickles and decompresses its blocks), and a 300-word query over 75k papers has 1.6
#: million: past this budget the query keeps its most informative words (``select``). Below
#: some 10,000 papers every query fits. Keeping the most informative words loses little
#: quality (docs/search-quality.md has the figures).
POSTINGS_BUDGET = 250_000
#: Most words a query over the budget keeps: each costs its lookups and scorers in six fields
#: (about half a millisecond) and, past the most informative 150, adds little time and little
#: quality. A CISI request (330 words at most) has 114 distinct words; a 3,000-word page about
#: 2,900.
MAX_WORDS = 150


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
    totals = accumulate(searcher, select(searcher, list(parsed.leaves())))
    matched = [docnum for docnum, score in enumerate(totals) if score]
    key = totals.__getitem__
    if limit is None:
        order = sorted(matched, key=lambda docnum: (-key(docnum), docnum))
    else:
        order = heapq.nsmallest(limit, matched, key=lambda docnum: (-key(docnum), docnum))
    return Results(searcher, [(docnum, totals[docnum]) for docnum in order], len(matched))


def select(searcher: Any, leaves: list[Any], budget: int | None = None) -> list[Any]:
    """The leaves of the query's most informative words whose abstract postings fit in
    ``budget`` (``POSTINGS_BUDGET``; a word's title and name postings are fewer, and its
    author, category and topic ones rare): words in order of their weight (idf in the
    abstracts times the query-term weight), each with all its fields, skipping a word that
    would overflow the budget, at most ``MAX_WORDS`` of them. Every leaf when they all fit
    (below some 10,000 papers, about always)."""
    from .ranking import query_weight

    budget = POSTINGS_BUDGET if budget is None else budget
    reader = searcher.reader()
    docs = reader.doc_count_all()
    words: dict[tuple[str, ...], list[Any]] = {}
    for leaf in leaves:
        words.setdefault(_stems_of(leaf), []).append(leaf)
    found = {text: reader.doc_frequency("abstract", text) for word in words for text in word}
    cost = {word: sum(found[text] for text in word) for word in words}
    if sum(cost.values()) <= budget:
        return leaves
    weight = {
        word: max(query_weight(getattr(leaf, "times", 1)) for leaf in group)
        * log(
            1
            + (docs - min(found[text] for text in word) + 0.5)
            / (min(found[text] for text in word) + 0.5)
        )
        for word, group in words.items()
    }
    kept: list[Any] = []
    taken = 0
    for word in sorted(words, key=lambda w: (-weight[w], w)):
        if cost[word] <= budget and taken < MAX_WORDS:
            kept += words[word]
            budget -= cost[word]
            taken += 1
    return kept


def _stems_of(leaf: Any) -> tuple[str, ...]:
    """The abstract terms of the word(s) a leaf looks up (a term's text, a phrase's words):
    a word's leaves in every field, stemmed or not, fall in one group."""
    from .analysis import fast_terms

    words = getattr(leaf, "words", None) or [leaf.text]
    return tuple(term for term, _, _ in fast_terms(" ".join(words))) or tuple(words)


def accumulate(searcher: Any, leaves: list[Any]) -> list[float]:
    """Each document's sum of its leaves' scores, by document number (0.0: no leaf matches;
    a match always scores above 0, every idf being positive)."""
    from whoosh.query import Term

    scores = [0.0] * searcher.doc_count_all()
    pieces = searcher.subsearchers if not searcher.is_atomic() else [(searcher, 0)]
    for leaf in leaves:
        for subsearcher, offset in pieces:
            if isinstance(leaf, Term):
                _add_term(subsearcher, offset, leaf, scores)
            else:
                _add_matcher(leaf.matcher(subsearcher), offset, scores)
    return scores


def _add_term(searcher: Any, offset: int, leaf: Any, scores: list[float]) -> None:
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
    if lengths is None or norms is None or not hasattr(matcher, "_read_ids"):
        matcher.scorer = scorer
        _add_matcher(matcher, offset, scores, deleted)
        return
    idf, k1p, size = scorer.idf, scorer.k1 + 1, len(lengths)
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
            scores[docnum + offset] += score
        matcher._next_block()


def _add_matcher(
    matcher: Any, offset: int, scores: list[float], deleted: frozenset[int] = frozenset()
) -> None:
    """A matcher's scores, posting by posting (phrases, and postings of another layout)."""
    while matcher.is_active():
        docnum = matcher.id()
        if docnum not in deleted:
            scores[docnum + offset] += matcher.score()
        matcher.next()
