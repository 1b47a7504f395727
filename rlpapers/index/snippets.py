"""Snippets: the stretch of an abstract with the most distinct query words, and where they are.

The abstract is analysed with the same analyser as the index, so a query for ``quantized``
highlights ``quantization``. The snippet is plain text plus (start, end) spans, so it reads the
same without colour and any renderer can emphasise the spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .analysis import fast_terms

WIDTH = 240
LEAD = 60
_TEXT_FIELDS = {"name", "title", "abstract"}


def query_terms(query: Any, reader: Any, fields: set[str] = _TEXT_FIELDS) -> set[str]:
    """Terms the query looks for in ``fields`` (the prose fields by default), with wildcards and
    fuzzy terms expanded."""
    from whoosh.query import Phrase
    from whoosh.query.terms import MultiTerm

    terms: set[str] = set()
    for leaf in query.leaves():
        if leaf.field() not in fields:
            continue
        if isinstance(leaf, Phrase):
            terms.update(leaf.words)
        elif isinstance(leaf, MultiTerm):
            terms.update(_text(t) for t in leaf._btexts(reader))
        elif isinstance(getattr(leaf, "text", None), str | bytes):
            terms.add(_text(leaf.text))
    return terms


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def make_snippet(text: str, terms: set[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    matches = _matches(text, terms) if terms else []
    if not matches:
        return _clip(text, 0, WIDTH)
    start = _best_start(matches)
    snippet, offset = _window(text, start)
    spans = tuple(
        (s - offset, e - offset)
        for s, e, _ in matches
        if s >= offset and e - offset <= len(snippet)
    )
    return snippet, spans


def snippet_or_opening(text: str, terms: set[str]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The snippet around the query's words where the text has any, else its opening sentence
    (for hits that semantic search found without a shared word)."""
    snippet, spans = make_snippet(text, terms)
    return (snippet, spans) if spans else opening_sentence(text)


def opening_sentence(text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    match = re.search(r"[.!?](\s|$)", text)
    end = match.end() if match else len(text)
    return _clip(text[:end].strip(), 0, WIDTH)


def _matches(text: str, terms: set[str]) -> list[tuple[int, int, str]]:
    return [(start, end, term) for term, start, end in fast_terms(text) if term in terms]


def _best_start(matches: list[tuple[int, int, str]]) -> int:
    """Start of the window of WIDTH characters covering the most distinct matched terms.

    One pass with two pointers over the matches (in text order): linear in their number. It was
    quadratic, and an abstract of 8,000 repeated phrases took 2.7 s.
    """
    best, best_count = matches[0][0], 0
    counts: dict[str, int] = {}
    right = 0
    for start, _, term in matches:
        while right < len(matches) and matches[right][0] < start + WIDTH - LEAD:
            counts[matches[right][2]] = counts.get(matches[right][2], 0) + 1
            right += 1
        if len(counts) > best_count:
            best, best_count = start, len(counts)
        counts[term] -= 1  # the window moves past this match
        if not counts[term]:
            del counts[term]
    return best


def _window(text: str, anchor: int) -> tuple[str, int]:
    start = max(0, anchor - LEAD)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < anchor else start
    snippet, _ = _clip(text, start, WIDTH)
    prefix = "…" if start > 0 else ""
    return prefix + snippet, start - len(prefix)


def _clip(text: str, start: int, width: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    end = start + width
    if end >= len(text):
        return text[start:], ()
    cut = text.rfind(" ", start, end)
    end = cut if cut > start else end
    return text[start:end].rstrip(" ,;:") + "…", ()


PHRASE_BONUS = 1.0  # the query's words side by side, in order (tuned on tests/relevance.yaml)
NEAR_BONUS = 0.4  # all of them within a few words of each other
NEAR_SLOP = 8


def proximity_factor(
    paper: Any,
    terms: list[str],
    positions_of: Callable[[str, set[str]], dict[str, list[int]]] | None = None,
) -> float:
    """1 plus a bonus when ``terms`` (analysed, in query order) stand together in the paper.
    ``positions_of(text, wanted)`` is ``term_positions`` or a cache of it."""
    best = 1.0
    prefixes = [term[:4] for term in terms if term.isascii()]  # folded letters may differ
    for text in (paper.title, paper.abstract):
        lowered = text.lower()
        if not all(prefix in lowered for prefix in prefixes):
            continue  # a term is missing: no need to tokenise
        positions = (positions_of or term_positions)(text, set(terms))
        if _has_phrase(positions, terms):
            return 1.0 + PHRASE_BONUS
        if _within(positions, terms, len(terms) + NEAR_SLOP):
            best = 1.0 + NEAR_BONUS
    return best


def term_positions(text: str, wanted: set[str]) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for pos, (term, _, _) in enumerate(fast_terms(text)):
        if term in wanted:
            positions.setdefault(term, []).append(pos)
    return positions


def _has_phrase(positions: dict[str, list[int]], terms: list[str]) -> bool:
    if any(term not in positions for term in terms):
        return False
    following = [set(positions[t]) for t in terms[1:]]
    return any(
        all(start + i + 1 in later for i, later in enumerate(following))
        for start in positions[terms[0]]
    )


def _within(positions: dict[str, list[int]], terms: list[str], width: int) -> bool:
    """Whether one occurrence of every term falls inside some window of ``width`` positions."""
    if any(term not in positions for term in terms):
        return False
    events = sorted((pos, term) for term in set(terms) for pos in positions[term])
    need = len(set(terms))
    counts: dict[str, int] = {}
    left = 0
    for pos, term in events:
        counts[term] = counts.get(term, 0) + 1
        while events[left][0] < pos - width + 1:
            gone = events[left][1]
            counts[gone] -= 1
            if not counts[gone]:
                del counts[gone]
            left += 1
        if len(counts) == need:
            return True
    return False
