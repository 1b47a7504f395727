"""Fusion of a lexical and a dense ranked list into one ranking (no numpy needed).

Each input is a list of ``(id, score)`` pairs, best first, usually the top 100 of each side.

- ``minmax``: each side's scores are rescaled to 0..1 over its own list (best 1, worst 0); a
  document's fused score is ``weight * dense + (1 - weight) * lexical``, where a document missing
  from one list gets 0 on that side.
- ``rrf``: reciprocal-rank fusion, ``weight/(k + dense rank) + (1 - weight)/(k + lexical rank)``
  with 1-based ranks, equal scores sharing a rank (Cormack et al. 2009 use k = 60 and equal
  weights).

Ties are broken by the lexical rank, then by the dense rank, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

Ranked = Sequence[tuple[str, float]]

DEPTH = 100
RRF_K = 60


def normalise(ranked: Ranked) -> dict[str, float]:
    """Scores rescaled to 0..1 over the list; all 1.0 when every score is equal."""
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    low, high = min(scores), max(scores)
    span = high - low
    return {doc: (s - low) / span if span > 0 else 1.0 for doc, s in ranked}


def minmax(lexical: Ranked, dense: Ranked, weight: float = 0.5) -> list[tuple[str, float]]:
    """Min-max normalised score fusion; ``weight`` is the dense side's share."""
    lex, den = normalise(lexical), normalise(dense)
    fused = {
        doc: weight * den.get(doc, 0.0) + (1 - weight) * lex.get(doc, 0.0) for doc in {**lex, **den}
    }
    return _ordered(fused, lexical, dense)


def rrf(
    lexical: Ranked, dense: Ranked, weight: float = 0.5, k: int = RRF_K
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion; ``weight`` is the dense side's share."""
    fused: dict[str, float] = {}
    for share, ranked in ((1 - weight, lexical), (weight, dense)):
        for doc, rank in _ranks(ranked):
            fused[doc] = fused.get(doc, 0.0) + share / (k + rank)
    return _ordered(fused, lexical, dense)


def _ranks(ranked: Ranked) -> list[tuple[str, int]]:
    """1-based ranks where equal scores share the better rank (1, 2, 2, 4): a tie on one side
    is left for the other side to break, not broken by list order."""
    out: list[tuple[str, int]] = []
    for position, (doc, score) in enumerate(ranked, start=1):
        tied = out and ranked[position - 2][1] == score
        out.append((doc, out[-1][1] if tied else position))
    return out


def _ordered(fused: dict[str, float], lexical: Ranked, dense: Ranked) -> list[tuple[str, float]]:
    lex_rank = {doc: i for i, (doc, _) in enumerate(lexical)}
    den_rank = {doc: i for i, (doc, _) in enumerate(dense)}
    last = len(lexical) + len(dense)

    def key(doc: str) -> tuple[float, int, int]:
        return (-fused[doc], lex_rank.get(doc, last), den_rank.get(doc, last))

    return [(doc, fused[doc]) for doc in sorted(fused, key=key)]
