"""Field filters shared by ``list``, ``search`` and ``export``, and the ``--year`` range syntax."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .model import Paper


@dataclass(frozen=True)
class Filters:
    """Field filters shared by ``list``, ``search`` and ``export``.

    Text filters are case- and accent-insensitive substrings. Repeating ``category``, ``author``,
    ``topic``, ``source`` or ``venue`` ORs its values (``--category RL --category NLP``); every
    ``tag`` is required (tags are matched whole, ignoring case); ``years`` is an inclusive
    (first, last) range, either end open (None). Different filters AND.
    """

    category: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    topic: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    venue: tuple[str, ...] = ()
    tag: tuple[str, ...] = ()
    years: tuple[int | None, int | None] | None = None
    derived_titles: bool = False

    def __bool__(self) -> bool:
        return any((self.category, self.author, self.topic, self.source, self.venue, self.tag)) or (
            self.years is not None or self.derived_titles
        )

    def matches(self, paper: Paper) -> bool:
        checks = (
            (self.category, paper.categories),
            (self.author, paper.authors),
            (self.topic, (paper.topic,)),
            (self.source, paper.sources or (paper.source,)),
            (self.venue, (paper.venue,)),
        )
        if not all(_any_contains(wanted, values) for wanted, values in checks if wanted):
            return False
        if self.tag and not {t.casefold() for t in self.tag} <= {t.casefold() for t in paper.tags}:
            return False
        if self.derived_titles and not paper.title_derived:
            return False
        return self.years is None or _in_years(paper.year, self.years)

    def apply(self, papers: Iterable[Paper]) -> list[Paper]:
        return [paper for paper in papers if self.matches(paper)]


def parse_years(text: str) -> tuple[int | None, int | None]:
    """``2024``, ``2020..2024``, ``2020..`` or ``..2024`` as an inclusive (first, last) range."""
    match = re.fullmatch(r"\s*(\d{4})?\s*(\.\.)?\s*(\d{4})?\s*", text)
    if (
        not match
        or not (match.group(1) or match.group(3))
        or (not match.group(2) and match.group(1) and match.group(3))
    ):
        raise ValueError(f"{text!r} is not a year or a range such as 2020..2024")
    first = int(match.group(1)) if match.group(1) else None
    last = int(match.group(3)) if match.group(3) else None
    if not match.group(2):
        return first, first
    if first is not None and last is not None and first > last:
        raise ValueError(f"{text!r}: the first year comes after the last")
    return first, last


def _in_years(year: int | None, years: tuple[int | None, int | None]) -> bool:
    first, last = years
    return year is not None and (first is None or year >= first) and (last is None or year <= last)


def _any_contains(wanted: tuple[str, ...], values: Iterable[str]) -> bool:
    from .text import fold

    folded = [fold(v) for v in values]
    return any(fold(w) in v for w in wanted for v in folded)
