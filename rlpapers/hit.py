"""Search results: a Paper found by a search, with its score, rank and snippet.

A record of its own module: only searches make hits, so ``list``, ``show`` and ``export --ids``
do not pay for making the class at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import Paper


@dataclass(frozen=True)
class Hit:
    """A paper found by a search, with its score and a plain-text snippet.

    ``highlights`` are (start, end) character spans of matched words inside ``snippet``, so any
    renderer can emphasise them without parsing markup.
    """

    paper: Paper
    score: float
    rank: int
    snippet: str = ""
    highlights: tuple[tuple[int, int], ...] = ()
    #: The paper's authors that the query matched, in author order.
    matched_authors: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The paper's record with score and rank, and the snippet when one was made (searches
        for formats that do not print snippets make none)."""
        data = self.paper.to_dict()
        data["score"] = round(self.score, 4)
        data["rank"] = self.rank
        if self.snippet:
            data["snippet"] = self.snippet
        return data
