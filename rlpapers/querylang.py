"""The query language: its words, fields and operators, lexed and checked here (clear errors
with positions, no Whoosh), then parsed by Whoosh in ``index.query``.

Plain words are OR-ed (papers with more of them rank higher); ``-word`` excludes a word and
``+word`` requires it, as in a web search box (``-`` or ``+`` at the start of a word only:
``off-policy`` stays one word); ``x@k`` with a one-letter ``k`` stands for the family
(``pass@k`` finds pass@1, pass@16, pass@$n$); ``field:value``, ``"phrases"``,
``AND``/``OR``/``NOT``, parentheses, wildcards (``quantiz*``) and fuzzy terms (``entropi~``)
work as in Whoosh. Whoosh's parser accepts almost anything and guesses, so malformed input
(an unclosed quote or parenthesis, an operator with nothing on one side, an unknown field) is
rejected here first, with the 1-based character position of the problem.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import NamedTuple

from .errors import QueryError

#: Fields a plain word is looked up in, and every field a query may name.
DEFAULT_FIELDS = ("name", "title", "abstract", "author", "category", "topic")
QUERY_FIELDS = (
    "title",
    "name",
    "author",
    "category",
    "topic",
    "abstract",
    "source",
    "key",
    "id",
    # from metadata overrides
    "year",
    "venue",
    "tag",
    "doi",
    "note",
)
ALIASES = {
    "author": ["authors"],
    "category": ["categories", "cat"],
    "abstract": ["text"],
    "tag": ["tags"],
}

_FIELD = re.compile(r"[+-]?([A-Za-z_]+):(?!//)")
# A sign only at the start of a word (after the start, a space or a parenthesis) and before one.
_SIGN = r"(?<![^\s(]){}(?=[^\s+-])"
_FUZZ = re.compile(r"~(\d*)")
_WORD_END = re.compile(r'[\s()"]')  # a word ends at a space, a parenthesis or a quote

#: Longest query accepted: a pasted paragraph, or a page of one. Plain words are looked up
#: without Whoosh's parser (``plain_query``); a query in the query language is parsed by
#: Whoosh, at about 0.3 ms a character (docs/search-quality.md).
MAX_QUERY = 30_000
#: Longest word of a query: Whoosh's parser is quadratic in a word's length (10,000 characters
#: took 3 s, 100,000 over two minutes); 1,000 parse in milliseconds.
MAX_WORD = 1000
#: Most words the wildcards, ranges and fuzzy terms of one query may stand for: each one is a
#: term to score ("*e*" over 10,000 papers stood for 30,000 and took 15 s).
MAX_EXPANSIONS = 1000
#: Largest edit distance of a fuzzy term: Whoosh's automaton grows exponentially with it.
MAX_FUZZ = 2
#: Most words a phrase's ``~N`` lets stand between its words (``"policy gradient"~3``): a
#: slop only widens how near the words must be, reading no more postings.
MAX_SLOP = 20
#: Deepest nesting of parentheses: Whoosh parses and runs a query recursively (490 levels went
#: past Python's recursion limit). A cap of its own, whatever ``MAX_QUERY`` allows.
MAX_NESTING = 100
_BINARY = {"AND", "OR"}
_KNOWN = set(QUERY_FIELDS) | {alias for names in ALIASES.values() for alias in names}
_PROSE = {alias: field for field, names in ALIASES.items() for alias in names}


class Lexeme(NamedTuple):
    """A piece of a query, where it starts. A named tuple (as ``config.Settings``): every search
    defines it, and a named tuple is defined in a tenth of a frozen dataclass's time (about
    0.4 ms of a search's start)."""

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
    end = _WORD_END.search(query, start)
    i = end.start() if end else len(query)
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
    if len(query) > MAX_QUERY:
        raise QueryError(
            f"the query is {len(query):,} characters long; the most is {MAX_QUERY:,}",
            query[:80],
            MAX_QUERY + 1,
        )
    lexemes = lex(query)
    _check_words(query, lexemes)
    _check_fields(query, lexemes)
    _check_fuzz(query, lexemes)
    _check_ranges(query, lexemes)
    _check_structure(query, lexemes)
    searched = [lx for lx in lexemes if lx.kind in ("word", "phrase")]
    if searched and all(lx.text.startswith("-") for lx in searched):
        raise QueryError("a query needs a word that is not excluded with '-'", query, 1)
    return lexemes


def text_query(text: str) -> str:
    """Plain text as a query of its words alone: punctuation, quotes, parentheses and field
    colons dropped, AND/OR/NOT lower-cased (words, not operators); words longer than
    ``MAX_WORD`` (no word is) left out. Raises ``QueryError`` for a text over ``MAX_QUERY``
    characters or without a word."""
    if len(text) > MAX_QUERY:
        raise QueryError(
            f"the text is {len(text):,} characters long; the most is {MAX_QUERY:,}",
            text[:80],
            MAX_QUERY + 1,
        )
    words = [
        word.lower() if word in _BINARY or word == "NOT" else word
        for word in _text_word().findall(text)
        if len(word) <= MAX_WORD
    ]
    if not words:
        raise QueryError("the text has no words to search for", text[:80], None)
    return " ".join(words)


# The next two are compiled on first use (about 0.25 ms of a start): a query of plain words
# needs neither.
@cache
def _text_word() -> re.Pattern[str]:
    return re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


@cache
def family() -> re.Pattern[str]:
    """``pass@k``: a word, ``@`` and one letter (``index.query`` makes it ``pass@``)."""
    return re.compile(r"^([+-]?(?:[A-Za-z_]+:)?[^\W_]+@)[A-Za-z]$")


def _check_words(query: str, lexemes: Sequence[Lexeme]) -> None:
    for lexeme in lexemes:
        if lexeme.kind == "word" and len(lexeme.text) > MAX_WORD:
            raise QueryError(
                f"a word of the query is {len(lexeme.text):,} characters long; the most is "
                f"{MAX_WORD:,}",
                query[:80],
                lexeme.pos + 1,
            )


def _check_fields(query: str, lexemes: Sequence[Lexeme]) -> None:
    for lexeme in lexemes:
        match = _FIELD.match(lexeme.text) if lexeme.kind == "word" else None
        if match and match.group(1).lower() not in _KNOWN:
            known = ", ".join(QUERY_FIELDS)
            raise QueryError(
                f"unknown field '{match.group(1)}' (known fields: {known})", query, lexeme.pos + 1
            )


def _check_fuzz(query: str, lexemes: Sequence[Lexeme]) -> None:
    previous: Lexeme | None = None
    for lexeme in lexemes:
        fuzz = _FUZZ.search(lexeme.text) if lexeme.kind == "word" else None
        slop = fuzz is not None and fuzz.start() == 0 and _right_after_a_phrase(lexeme, previous)
        most = MAX_SLOP if slop else MAX_FUZZ
        if fuzz and fuzz.group(1) and int(fuzz.group(1)[:4]) > most:
            message = (
                f'a phrase\'s ~N lets at most {MAX_SLOP} words stand between its words ("a b"~{MAX_SLOP})'
                if slop
                else f"fuzzy terms allow at most {MAX_FUZZ} edits (word~{MAX_FUZZ})"
            )
            raise QueryError(message, query, lexeme.pos + fuzz.start() + 1)
        previous = lexeme


def _right_after_a_phrase(lexeme: Lexeme, previous: Lexeme | None) -> bool:
    """Whether ``lexeme`` follows a phrase's closing quote with no space (``"a b"~3``)."""
    return (
        previous is not None
        and previous.kind == "phrase"
        and lexeme.pos == previous.pos + len(previous.text)
    )


def _check_ranges(query: str, lexemes: Sequence[Lexeme]) -> None:
    """A range (``year:[2020 TO 2024]``, ``{a TO m}``) opened, given its ``TO`` and never
    closed is an error at its start (it matched nothing, without a word). A bracket without a
    ``TO`` after it is text, as it was."""
    opened: Lexeme | None = None
    bracket = ""
    ranged = False
    for lexeme in (lx for lx in lexemes if lx.kind in ("word", "op")):
        bare = _FIELD.sub("", lexeme.text, count=1) if lexeme.kind == "word" else ""
        if opened is None and bare[:1] in ("[", "{"):
            opened, bracket, ranged = lexeme, bare[0], False
        ranged = ranged or (opened is not None and lexeme.text == "TO")
        if opened is not None and lexeme.text[-1:] in ("]", "}"):
            opened = None
    if opened is not None and ranged:
        closing = "]" if bracket == "[" else "}"
        raise QueryError(f"a range is never closed: add a '{closing}'", query, opened.pos + 1)


def _check_structure(query: str, lexemes: Sequence[Lexeme]) -> None:
    depth: list[Lexeme] = []
    previous: Lexeme | None = None
    for lexeme in lexemes:
        if lexeme.kind == "open":
            depth.append(lexeme)
            if len(depth) > MAX_NESTING:
                raise QueryError(
                    f"parentheses nest more than {MAX_NESTING} deep", query, lexeme.pos + 1
                )
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
    if lexeme.text == "NOT" and previous is not None and previous.text == "NOT":
        raise QueryError("'NOT NOT' cancels out: write the term alone", query, previous.pos + 1)


def _needs(op: Lexeme) -> str:
    if op.text == "NOT":
        return "'NOT' needs a search term after it"
    return f"'{op.text}' needs a search term on both sides"


def plain_words(lexemes: Sequence[Lexeme]) -> list[str]:
    """The bare words of a query (no fields, operators, wildcards or fuzz): for phrases and hints."""
    return [
        lx.text
        for lx in lexemes
        if lx.kind == "word"
        and not _FIELD.match(lx.text)
        and not _MARKS.search(lx.text)
        and lx.text[0] not in "+-"
    ]


_MARKS = re.compile(r"[*?~^@]")


def meaning_text(lexemes: Sequence[Lexeme]) -> str:
    """What a query asks for in prose, for ranking by meaning: its words and phrases, field
    values of the prose fields (title, name, abstract), without operators, wildcard or fuzzy
    marks, and without what NOT excludes. ``topic:finance cars`` -> ``cars``."""
    out: list[str] = []
    skip_depth = 0  # > 0 inside what a NOT excludes
    negate = False
    for lx in lexemes:
        if lx.kind == "op":
            negate = lx.text == "NOT"
            continue
        if skip_depth or negate:
            skip_depth += {"open": 1, "close": -1}.get(lx.kind, 0)
            negate = False
            continue
        if lx.kind == "phrase":
            out.append(lx.text.strip('"'))
        elif lx.kind == "word":
            field = _FIELD.match(lx.text)
            name = field.group(1).lower() if field else ""
            if not field or _PROSE.get(name, name) in ("title", "name", "abstract"):
                value = lx.text[field.end() :] if field else lx.text
                out.append(re.sub(r"[*?]|[~^][\d.]*$", "", value).strip('"'))
    return " ".join(w for w in out if w)


def is_plain(lexemes: Sequence[Lexeme]) -> bool:
    return all(lx.kind == "word" for lx in lexemes) and len(plain_words(lexemes)) == len(lexemes)
