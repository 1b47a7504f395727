"""Ranking: how matches are scored, and the re-ranking of the best of them.

Scores are BM25 as Lucene and bm25s compute it, per field: ``idf = ln(1 + (N - df + 0.5) /
(df + 0.5))`` (never negative, unlike classic BM25's), term frequency saturated by ``K1`` and
normalised by the field's length against its average (``B``). A field's weight multiplies its
score. Whoosh's own BM25F differs: its idf is ``ln(N / (df + 1)) + 1``, which lifts common words,
and its field boosts multiply the term frequency before saturation, where they count for little.

Field weights (``schema.BOOSTS``) keep the title and the name low: a derived title or name is a
copy of abstract words, so weighting it high counts the same evidence twice (a title ending "for
large language models" ranked high for any query about language models).

A plain query loses its function words first (``QUERY_STOP_WORDS``: "what", "must", "which"…):
a question-like query otherwise ranks papers by how many of them they share. Then the best
``RERANK_WINDOW`` candidates get two proximity bonuses: the query's words as a phrase or all close
together (``snippets.proximity_factor``), and a smaller one for each pair of consecutive query
words that stand within ``PAIR_WIDTH`` words of each other, weighted by the pair's idf.
benchmarks/relevance.py measures each of these; docs/search-quality.md has the figures.
"""

from __future__ import annotations

from math import log
from typing import Any

from whoosh.scoring import WeightingModel, WeightLengthScorer, WeightScorer

from ..model import Paper
from .snippets import proximity_factor, term_positions

K1 = 1.5
B = 0.75
PAIR_BONUS = 0.5
PAIR_WIDTH = 3

#: Words dropped from a plain query (while another word remains): pronouns, question words,
#: auxiliaries and prepositions. (Request words such as "papers", "available", "exist" were tried
#: too: no change on either judged set, so they are not here.)
QUERY_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves i'm i'd
    what which who whom whose when where why how whether this that these those
    am is are was were be been being have has had having do does did doing
    can could may might must shall should will would
    a an the and but if or because as until while than so also any such there here then
    of at by for with about against between into through during before after above below to
    from in on upon within without among
    """.split()
)
#: How many of the best BM25 candidates the proximity bonuses re-order: a constant, so the order
#: never depends on how many hits are asked for. 100 ranked exactly as well on both judged sets
#: and cost more (Whoosh prunes less when it must keep more candidates).
RERANK_WINDOW = 30


class BM25(WeightingModel):
    """Lucene's BM25 per field, each field's score multiplied by its weight."""

    def __init__(self, weights: dict[str, float], k1: float = K1, b: float = B) -> None:
        self.weights = weights
        self.k1 = k1
        self.b = b

    def supports_block_quality(self) -> bool:
        return True

    def scorer(self, searcher: Any, fieldname: str, text: Any, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return WeightScorer.for_(searcher, fieldname, text)
        weight = self.weights.get(fieldname, 1.0)
        return _Scorer(searcher, fieldname, text, weight, self.k1, self.b)


class _Scorer(WeightLengthScorer):  # type: ignore[misc]
    def __init__(  # noqa: PLR0913 - Whoosh's scorer protocol plus the model's settings
        self, searcher: Any, fieldname: str, text: Any, weight: float, k1: float, b: float
    ) -> None:
        parent = searcher.get_parent()  # collection statistics come from the top searcher
        docs = parent.doc_count_all()
        found = parent.doc_frequency(fieldname, text)
        self.idf = weight * log(1 + (docs - found + 0.5) / (found + 0.5))
        self.avgfl = parent.avg_field_length(fieldname) or 1.0
        self.k1 = k1
        self.b = b
        self.setup(searcher, fieldname, text)

    def _score(self, weight: float, length: float) -> float:
        norm = self.k1 * (1 - self.b + self.b * length / self.avgfl)
        return float(self.idf * weight * (self.k1 + 1) / (weight + norm))


def rerank(
    hits: list[tuple[Paper, float]], terms: list[str], reader: Any
) -> list[tuple[Paper, float]]:
    """The first ``RERANK_WINDOW`` hits re-ordered by score times proximity bonuses (stable for
    ties), then the rest as they were: every score in the window stays at or above theirs."""
    pairs = _pairs(terms, reader)
    window = [
        (paper, score * proximity_factor(paper, terms) * _pair_factor(paper, terms, pairs))
        for paper, score in hits[:RERANK_WINDOW]
    ]
    return sorted(window, key=lambda hit: -hit[1]) + hits[RERANK_WINDOW:]


def idf(reader: Any, fieldname: str, text: str) -> float:
    docs, found = reader.doc_count_all(), reader.doc_frequency(fieldname, text)
    return log(1 + (docs - found + 0.5) / (found + 0.5))


def _pairs(terms: list[str], reader: Any) -> list[tuple[str, str, float]]:
    """Consecutive pairs of query terms, each with its share of the pairs' idf."""
    weights = {term: idf(reader, "abstract", term) for term in set(terms)}
    pairs = [(a, b, weights[a] + weights[b]) for a, b in zip(terms, terms[1:], strict=False)]
    pairs = [pair for pair in pairs if pair[0] != pair[1]]
    total = sum(weight for _, _, weight in pairs) or 1.0
    return [(a, b, weight / total) for a, b, weight in pairs]


def _pair_factor(paper: Paper, terms: list[str], pairs: list[tuple[str, str, float]]) -> float:
    """1 plus ``PAIR_BONUS`` times the idf share of the pairs standing within ``PAIR_WIDTH``."""
    if not pairs:
        return 1.0
    text = f"{paper.title} . {paper.abstract}"
    lowered = text.lower()
    if sum(not term.isascii() or term[:4] in lowered for term in set(terms)) < 2:
        return 1.0  # no pair can stand close: no need to tokenise
    positions = term_positions(text, set(terms))
    near = sum(
        share
        for a, b, share in pairs
        if a in positions and b in positions and _close(positions[a], positions[b])
    )
    return 1.0 + PAIR_BONUS * near


def _close(first: list[int], second: list[int]) -> bool:
    return any(abs(x - y) <= PAIR_WIDTH for x in first for y in second)
