"""Dense retrieval: the k rows of a matrix of unit vectors closest to a query vector.

Vectors are L2-normalised, so the dot product is the cosine similarity. A full matrix-vector
product over 75k x 384 float32 takes a few milliseconds; ``argpartition`` then picks the k best
without sorting the rest.
"""

from __future__ import annotations

import numpy as np


def top_k(
    matrix: np.ndarray, query: np.ndarray, k: int, rows: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """``(row, cosine)`` pairs, best first; ``rows`` restricts the search to those row numbers."""
    if rows is not None:
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows):
            return []
        scores = matrix[rows] @ query
    else:
        scores = matrix @ query
    k = min(k, len(scores))
    if k <= 0:
        return []
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    picked = rows[best] if rows is not None else best
    return [(int(r), float(scores[b])) for r, b in zip(picked, best, strict=True)]
