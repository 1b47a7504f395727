"""The query language: checked by us (clear errors with positions), then parsed by Whoosh.

Plain words are OR-ed (papers with more of them rank higher); ``field:value``, ``"phrases"``,
``AND``/``OR``/``NOT``, parentheses, wildcards (``quantiz*``) and fuzzy terms (``entropi~``)
work as in Whoosh. Whoosh's parser accepts almost anything and guesses, so malformed input
(an unclosed quote or parenthesis, an operator with nothing on one side, an unknown field) is
rejected here first, with the 1-based character position of the problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import QueryError
from .schema import ALIASES, DEFAULT_FIELDS, QUERY_FIELDS

_FIELD = re.compile(r"([A-Za-z_]+):(?!//)")
_BINARY = {"AND", "OR"}
_KNOWN = set(QUERY_FIELDS) | {alias for names in ALIASES.values() for alias in names}


@dataclass(frozen=True)
class Lexeme:
    kind: str  # "word", "phrase", "open", "close", "op"
    text: str
    pos: int  # 0-based


def lex(query: str) -> list[Lexeme]:
    """Split a query into words, phrases, parentheses and operators; raise on unbalanced input."""
    out: list[Lexeme] = []
    i = 0
    while i < len(query):
        char = query[i]
        if char.isspace():
            i += 1
        elif char in "()":
            out.append(Lexeme("open" if char == "(" else "close", char, i))
            i += 1
        elif char == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise QueryError('unclosed quote: add a closing "', query, i + 1)
            out.append(Lexeme("phrase", query[i : end + 1], i))
            i = end + 1
        else:
            i = _word(query, i, out)
    return out


def _word(query: str, start: int, out: list[Lexeme]) -> int:
    i = start
    while i < len(query) and not query[i].isspace() and query[i] not in '()"':
        i += 1
    text = query[start:i]
    field = _FIELD.match(text)
    if field and field.end() == len(text) and (i >= len(query) or query[i] not in '("'):
        raise QueryError(f"field '{field.group(1)}:' needs a value after the colon", query, i)
    kind = "op" if text in _BINARY or text == "NOT" else "word"
    out.append(Lexeme(kind, text, start))
    return i


def check(query: str) -> list[Lexeme]:
    """Validate ``query``; returns its lexemes. Raises ``QueryError`` with a position."""
    if not query.strip():
        raise QueryError("the query is empty", query, None)
    lexemes = lex(query)
    _check_fields(query, lexemes)
    _check_structure(query, lexemes)
    return lexemes


def _check_fields(query: str, lexemes: list[Lexeme]) -> None:
    for lexeme in lexemes:
        match = _FIELD.match(lexeme.text) if lexeme.kind == "word" else None
        if match and match.group(1).lower() not in _KNOWN:
            known = ", ".join(QUERY_FIELDS)
            raise QueryError(
                f"unknown field '{match.group(1)}' (known fields: {known})", query, lexeme.pos + 1
            )


def _check_structure(query: str, lexemes: list[Lexeme]) -> None:
    depth: list[Lexeme] = []
    previous: Lexeme | None = None
    for lexeme in lexemes:
        if lexeme.kind == "open":
            depth.append(lexeme)
        elif lexeme.kind == "close":
            if not depth:
                raise QueryError("')' has no matching '('", query, lexeme.pos + 1)
            if previous is not None and previous.kind == "open":
                raise QueryError("empty parentheses", query, previous.pos + 1)
            depth.pop()
        _check_operator(query, previous, lexeme)
        previous = lexeme
    if previous is not None and previous.kind == "op":
        raise QueryError(_needs(previous), query, previous.pos + 1)
    if depth:
        raise QueryError("'(' is never closed: add a ')'", query, depth[-1].pos + 1)


def _check_operator(query: str, previous: Lexeme | None, lexeme: Lexeme) -> None:
    after_nothing = (
        previous is None or previous.kind in ("open", "op") or previous.text.endswith(":(")
    )
    if lexeme.kind == "op" and lexeme.text in _BINARY and after_nothing:
        raise QueryError(
            f"'{lexeme.text}' needs a search term on both sides", query, lexeme.pos + 1
        )
    if lexeme.kind == "close" and previous is not None and previous.kind == "op":
        raise QueryError(_needs(previous), query, previous.pos + 1)


def _needs(op: Lexeme) -> str:
    if op.text == "NOT":
        return "'NOT' needs a search term after it"
    return f"'{op.text}' needs a search term on both sides"


def plain_words(lexemes: list[Lexeme]) -> list[str]:
    """The bare words of a query (no fields, operators, wildcards or fuzz): for phrases and hints."""
    return [
        lx.text
        for lx in lexemes
        if lx.kind == "word" and not _FIELD.match(lx.text) and not re.search(r"[*?~^]", lx.text)
    ]


def is_plain(lexemes: list[Lexeme]) -> bool:
    return all(lx.kind == "word" for lx in lexemes) and len(plain_words(lexemes)) == len(lexemes)


def parse(query: str, schema: Any) -> Any:
    """A Whoosh query object for ``query``, plain words OR-ed.

    Not ``OrGroup.factory(...)``: its scaled scores break Whoosh's top-k collection (a limited
    search then misses hits that an unlimited one ranks higher).
    """
    from whoosh import qparser

    lexemes = check(query)
    parser = qparser.MultifieldParser(list(DEFAULT_FIELDS), schema, group=qparser.OrGroup)
    parser.add_plugin(qparser.FuzzyTermPlugin())
    parser.add_plugin(qparser.FieldAliasPlugin(ALIASES))
    parser.remove_plugin_class(qparser.BoostPlugin)
    try:
        parsed = parser.parse(_lowercase_fields(query))
    except Exception as error:  # Whoosh's own complaint, kept short
        raise QueryError(str(error) or type(error).__name__, query, None) from None
    return parsed, lexemes


def _lowercase_fields(query: str) -> str:
    return _FIELD.sub(lambda m: m.group(1).lower() + ":", query)
