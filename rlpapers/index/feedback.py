"""Pseudo-relevance feedback for long plain queries: RM3 on terms.

A request of several sentences says what it wants in its own words, which are often not the
papers' words. The best ``DOCS`` papers of a first BM25 pass share the subject's vocabulary.
Each of their terms weighs its share of each paper's terms, the papers weighed by their
first-pass scores (RM1's relevance model, BM25 scores standing for the query likelihood), times
its idf; the best ``TERMS`` of them that the query does not have are added to it. Together the
added terms weigh ``WEIGHT`` times the number of the query's words, shared in proportion to
their weights (RM3's interpolation of the query with the relevance model; a word the query says
once weighs 1), so a long query gets more added weight than a short one, in proportion.

The query is scored again, term at a time (``accumulate``): the first pass's scores are kept and
the added terms' scores summed to them. Only papers the query itself matched are ranked: the
expansion re-orders the query's matches, and never brings in a paper that has none of its words,
so a count and an unlimited search list the same papers as without it, and a limited search is
the start of the unlimited one (the first pass never depends on the limit).

It applies to plain queries of ``MIN_WORDS`` distinct words or more: on the tuning queries,
questions of 6 words or fewer lost with it, and shorter queries keep Whoosh's quick top-k
search. Every setting was chosen on the odd Cranfield and CISI queries pooled
(docs/search-quality.md has the grid, and the evaluation halves, where CISI's lost).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import accumulate

#: Papers of the first pass whose terms are read.
DOCS = 5
#: Terms added to the query.
TERMS = 20
#: The added terms' weight, all together, per word of the query.
WEIGHT = 0.7
#: Distinct query words (abstract terms) from which a plain query is expanded.
MIN_WORDS = 7
#: Fields an added term is looked up in: the prose fields, analysed as the abstract is.
FIELDS = ("title", "abstract")
#: Most abstract postings the added terms read: a fifth of a long query's
#: (``accumulate.POSTINGS_BUDGET``), so the expansion costs at most about a fifth more at 75k
#: papers; the added terms always fit in a library of up to 2,500 papers, and nearly always
#: in one of some 10,000.
BUDGET = accumulate.POSTINGS_BUDGET // 5

#: Papers' texts ("title . abstract") by id, one for each id, "" for one no longer stored.
Texts = Callable[[list[str]], list[str]]


def applies(parsed: Any) -> bool:
    """Whether a plain query (``parsed``) is long enough to be expanded."""
    return DOCS > 0 and TERMS > 0 and len(_query_terms(parsed)) >= max(MIN_WORDS, 1)


def search(searcher: Any, parsed: Any, limit: int | None, texts: Texts) -> accumulate.Results:
    """The best ``limit`` papers (all with None) for ``parsed`` expanded with the terms of its
    first pass's best ``DOCS`` papers, whose texts ``texts`` gives for their ids."""
    totals = accumulate.accumulate(searcher, accumulate.select(searcher, list(parsed.leaves())))
    matched = [docnum for docnum, score in enumerate(totals) if score]
    first = [docnum for docnum, _ in accumulate.best(matched, totals, DOCS)]
    ids = [searcher.stored_fields(docnum)["id"] for docnum in first]
    known = _query_terms(parsed)
    added = expansion(searcher.reader(), texts(ids), known, [totals[d] for d in first])
    if added:
        extra = accumulate.accumulate(searcher, _leaves(_within_budget(searcher.reader(), added)))
        totals = [score + extra[docnum] if score else 0.0 for docnum, score in enumerate(totals)]
    return accumulate.Results(searcher, accumulate.best(matched, totals, limit), len(matched))


def expansion(
    reader: Any, texts: Sequence[str], known: set[str], scores: Sequence[float]
) -> list[tuple[str, float]]:
    """The ``TERMS`` best terms of ``texts`` not in ``known`` (the query's), each with its
    query weight: its share of each text's terms, the texts weighed by their ``scores``, times
    its idf; all together weigh ``WEIGHT`` times the number of ``known`` terms."""
    from .analysis import fast_terms
    from .ranking import idf

    share: dict[str, float] = {}
    whole = sum(scores)
    for text, score in zip(texts, scores, strict=True):
        terms = [term for term, _, _ in fast_terms(text)]
        for term, count in Counter(terms).items():
            share[term] = share.get(term, 0.0) + count / len(terms) * score / whole
    weights = {
        term: value * idf(reader, "abstract", term)
        for term, value in share.items()
        if term not in known
    }
    best = heapq.nsmallest(TERMS, weights, key=lambda term: (-weights[term], term))
    total = sum(weights[term] for term in best)
    if not total > 0:
        return []
    mass = WEIGHT * len(known)
    return [(term, mass * weights[term] / total) for term in best if weights[term] > 0]


def _within_budget(reader: Any, added: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The added terms, best first, whose abstract postings fit in ``BUDGET`` (a term that
    would overflow it is skipped, a later one may still fit)."""
    kept, left = [], BUDGET
    for term, weight in added:
        cost = reader.doc_frequency("abstract", term)
        if cost <= left:
            kept.append((term, weight))
            left -= cost
    return kept


def _leaves(added: list[tuple[str, float]]) -> list[Any]:
    """The added terms as query terms of the prose fields, each with its weight."""
    from .query import CountedTerm

    return [CountedTerm(field, term, weight) for term, weight in added for field in FIELDS]


def _query_terms(parsed: Any) -> set[str]:
    """The abstract terms a plain query looks up (a phrase's words too)."""
    terms: set[str] = set()
    for leaf in parsed.leaves():
        if getattr(leaf, "fieldname", None) == "abstract":
            terms.update(getattr(leaf, "words", None) or [leaf.text])
    return terms
