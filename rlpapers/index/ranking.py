"""Ranking: how matches are scored, and the re-ranking of the best of them.

Scores are BM25 as Lucene and bm25s compute it, per field: ``idf = ln(1 + (N - df + 0.5) /
(df + 0.5))`` (never negative, unlike classic BM25's), term frequency saturated by ``K1`` and
normalised by the field's length against its average (``B``). A field's weight multiplies its
score. Whoosh's own BM25F differs: its idf is ``ln(N / (df + 1)) + 1``, which lifts common words,
and its field boosts multiply the term frequency before saturation, where they count for little.
"""

from __future__ import annotations

from math import log
from typing import Any

from whoosh.scoring import WeightingModel, WeightLengthScorer, WeightScorer

from ..model import Paper
from .snippets import proximity_factor

K1 = 1.2
B = 0.75
#: How many of the best BM25 candidates the proximity bonus re-orders: a constant, so the order
#: never depends on how many hits are asked for.
RERANK_WINDOW = 100


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


def rerank(hits: list[tuple[Paper, float]], terms: list[str]) -> list[tuple[Paper, float]]:
    """The first ``RERANK_WINDOW`` hits re-ordered by score times proximity bonus (stable for
    ties), then the rest as they were: every score in the window stays at or above theirs."""
    window = [
        (paper, score * proximity_factor(paper, terms)) for paper, score in hits[:RERANK_WINDOW]
    ]
    return sorted(window, key=lambda hit: -hit[1]) + hits[RERANK_WINDOW:]
