"""Hits as a search gives them: a paper with its score, rank, snippet and the authors the
query matched; and hits in the order a search asks for."""

from __future__ import annotations

from functools import cache
from typing import Any

from ..hit import Hit
from ..model import Paper
from .snippets import make_snippet


def sort_hits(hits: list[tuple[Paper, float]], sort: str) -> list[tuple[Paper, float]]:
    """``hits`` (in score order) in ``sort`` order: by score (as they are), title or key."""
    if sort == "title":
        return sorted(hits, key=lambda h: (h[0].title.casefold(), h[0].key))
    if sort == "key":
        return sorted(hits, key=lambda h: h[0].key)
    return hits


def make_hit(
    paper: Paper, score: float, rank: int, terms: set[str] | None, authors: set[str]
) -> Hit:
    # a paper without an abstract (a bibliography entry) has its snippet from its title
    text = paper.abstract or paper.title
    snippet, spans = make_snippet(text, terms) if terms is not None else ("", ())
    return Hit(paper, score, rank, snippet, spans, matched_authors(paper, authors))


def matched_authors(paper: Paper, terms: set[str]) -> tuple[str, ...]:
    """The authors with a word the query looked for in the author field. An ASCII name is
    analysed only if one of the words stands in it (a plain query looks for its words in the
    author field too, so most hits have no matched author, and analysing every name of every hit
    would cost as much as printing the hits)."""
    if not terms or not paper.authors:
        return ()
    analyse = _name_analyzer()
    return tuple(
        a
        for a in paper.authors
        if (not a.isascii() or any(t in a.lower() for t in terms))
        and terms & {t.text for t in analyse(a)}
    )


@cache
def _name_analyzer() -> Any:
    from .analysis import name_analyzer

    return name_analyzer()
