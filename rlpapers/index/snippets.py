"""Snippets: the stretch of an abstract with the most distinct query words, and where they are.

The abstract is analysed with the same analyser as the index, so a query for ``quantized``
highlights ``quantization``. The snippet is plain text plus (start, end) spans, so it reads the
same without colour and any renderer can emphasise the spans.
"""

from __future__ import annotations

from typing import Any

from .analysis import text_analyzer

WIDTH = 240
LEAD = 60
_TEXT_FIELDS = {"name", "title", "abstract"}


def query_terms(query: Any, reader: Any) -> set[str]:
    """Terms the query looks for in the prose fields, with wildcards and fuzzy terms expanded."""
    from whoosh.query import Phrase
    from whoosh.query.terms import MultiTerm

    terms: set[str] = set()
    for leaf in query.leaves():
        if leaf.field() not in _TEXT_FIELDS:
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
        (s - offset, e - offset) for s, e, _ in matches if s >= offset and e - offset <= len(snippet)
    )
    return snippet, spans


def _matches(text: str, terms: set[str]) -> list[tuple[int, int, str]]:
    analyzer = text_analyzer()
    return [
        (token.startchar, token.endchar, token.text)
        for token in analyzer(text, chars=True)
        if token.text in terms
    ]


def _best_start(matches: list[tuple[int, int, str]]) -> int:
    """Start of the window of WIDTH characters covering the most distinct matched terms."""
    best, best_count = matches[0][0], 0
    for i, (start, _, _) in enumerate(matches):
        distinct = {term for s, _, term in matches[i:] if s < start + WIDTH - LEAD}
        if len(distinct) > best_count:
            best, best_count = start, len(distinct)
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
