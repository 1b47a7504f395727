"""Hybrid and semantic ranking over the store's vectors (the Library wires them to a query).

- **hybrid**: the lexical top 100 and the dense top 100 at or above ``SIMILARITY_FLOOR``
  fused by reciprocal rank
  (``fusion.rrf``, k 30, dense weight 0.3: chosen on the odd-numbered Cranfield and CISI
  queries pooled, with rlpapers' own lexical side, among min-max, z-score and RRF k 10/30/60
  with dense weights 0.1-0.9; docs/search-quality.md). For a query with fields or operators the
  dense side ranks only the papers the query matches, so the query keeps its meaning.
- **semantic**: papers by cosine similarity to the query alone, those at or above
  ``SIMILARITY_FLOOR`` only.

A search embeds missing papers itself only when that takes less than about a minute
(``INLINE_SECONDS`` at ``EMBED_RATE``); otherwise it raises ``EmbeddingsMissing``, which says how
long ``rlpapers embed`` will take.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..errors import EmbeddingsMissing
from . import fusion
from .encoder import PAPER_CPU_SECONDS, cores
from .vectors import Vectors

DEPTH = 100
DENSE_WEIGHT = 0.3
RRF_K = 30
#: Cosine similarity a paper needs to be a semantic hit. On
#: the bundled judgments (tests/relevance.yaml) it keeps 84% of the judged query-paper pairs
#: (95% of those graded 3) and 27% of the unjudged ones, all papers being about RL
#: (docs/semantic.md).
SIMILARITY_FLOOR = 0.25
#: Papers embedded per second on this machine's cores, for time estimates.
EMBED_RATE = cores() / PAPER_CPU_SECONDS
INLINE_SECONDS = 60.0


def ensure(vectors: Vectors, progress: Callable[[int, int], None] | None = None) -> None:
    """Embed the papers that lack vectors if that is quick; else raise ``EmbeddingsMissing``."""
    missing = vectors.missing()
    if not missing:
        return
    seconds = len(missing) / EMBED_RATE
    if seconds > INLINE_SECONDS:
        raise EmbeddingsMissing(len(missing), seconds)
    vectors.embed_missing(progress)


def hybrid(
    vectors: Vectors,
    query: str,
    lexical: Sequence[tuple[str, float]],
    among: Iterable[str] | None,
) -> list[tuple[str, float]]:
    """The fused ranking of the lexical hits (best first) and the papers closest to ``query``
    (among ``among`` only, when given) at or above the similarity floor: a paper the words do
    not match is a hit only if it is close enough in meaning to be a semantic one. (Without
    the floor, the dense top 100 made every paper of a small library a hit of any query, and
    "nothing found" never happened.)"""
    dense = vectors.rank(vectors.query(query), DEPTH, among) if query.strip() else []
    return fuse(lexical, _close_enough(dense))


def fuse(
    lexical: Sequence[tuple[str, float]], dense: Sequence[tuple[str, float]]
) -> list[tuple[str, float]]:
    """The two rankings' top ``DEPTH`` fused as hybrid search fuses them."""
    return fusion.rrf(list(lexical[:DEPTH]), list(dense[:DEPTH]), DENSE_WEIGHT, RRF_K)


def semantic(
    vectors: Vectors, query: str, limit: int | None, among: Iterable[str] | None
) -> list[tuple[str, float]]:
    """Papers at or above the similarity floor, closest first."""
    return _close_enough(vectors.rank(vectors.query(query), limit, among))


def _close_enough(ranked: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """The papers of ``ranked`` at or above the similarity floor: a semantic hit, and a hybrid
    one the words do not match."""
    return [(pid, score) for pid, score in ranked if score >= SIMILARITY_FLOOR]


def similar(vectors: Vectors, paper_id: str, limit: int) -> list[tuple[str, float]]:
    """Papers closest to ``paper_id``'s vector, itself excluded (no floor: it is a ranking)."""
    vector = vectors.vector_of(paper_id)
    if vector is None:
        return []
    ranked = vectors.rank(vector, limit + 1)
    return [(pid, score) for pid, score in ranked if pid != paper_id][:limit]
