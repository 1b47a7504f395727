"""The expansion budget: a query's wildcards, ranges and fuzzy terms may stand for at most
``querylang.MAX_EXPANSIONS`` words in all, each one a term to score."""

from __future__ import annotations

from typing import Any

from ..errors import QueryError
from ..querylang import MAX_EXPANSIONS


def check_expansions(parsed: Any, reader: Any, query: str) -> None:
    """Refuse a query whose wildcards, ranges and fuzzy terms stand for more than
    ``MAX_EXPANSIONS`` words in all, naming the terms and the budget (counting stops past the
    budget, so checking is cheap too). A term counts the words it stands for in every field."""
    from itertools import islice

    from whoosh.query import Every
    from whoosh.query.terms import MultiTerm

    used = 0
    counted: dict[str, int] = {}  # each term as written: its words, summed over its fields
    for leaf in parsed.leaves():
        if isinstance(leaf, Every):
            raise QueryError("'*' alone matches every word: give it some letters", query)
        if not isinstance(leaf, MultiTerm):
            continue
        words = sum(1 for _ in islice(leaf._btexts(reader), MAX_EXPANSIONS - used + 1))
        used += words
        counted[_shown(leaf)] = counted.get(_shown(leaf), 0) + words
        if used > MAX_EXPANSIONS:
            raise QueryError(
                _over_budget([t for t, n in counted.items() if n]), query, _position(query, leaf)
            )


def _over_budget(terms: list[str]) -> str:
    """The message for terms over the budget: it names them all, and the budget."""
    budget = (
        f"more than {MAX_EXPANSIONS:,} words, the most the wildcards, ranges and fuzzy terms "
        "of a query may stand for"
    )
    if len(terms) == 1:
        return f"{terms[0]} matches {budget}: make it more specific"
    named = ", ".join(terms[:-1]) + f" and {terms[-1]}"
    return f"{named} together match {budget}: make them more specific"


def _shown(leaf: Any) -> str:
    from whoosh.query import Prefix

    text = getattr(leaf, "text", None)
    if isinstance(text, str):
        return f"'{text}*'" if isinstance(leaf, Prefix) else f"'{text}'"
    return f"the range [{getattr(leaf, 'start', '')} TO {getattr(leaf, 'end', '')}]"


def _position(query: str, leaf: Any) -> int | None:
    text = getattr(leaf, "text", None)
    found = query.lower().find(text.lower()) if isinstance(text, str) else query.find("[")
    return found + 1 if found >= 0 else None
