"""A key format users can set: ``keys: {format: "{auth}{year}{title:1}"}`` in the config.

The language is small, on purpose: literal text and fields in braces.

==============  ==============================================================================
``{auth}``      the first author's surname with its particles (``van Gool`` -> ``vangool``)
``{year}``      the paper's year (from metadata), or nothing
``{title:N}``   the first N distinctive words of the title (N from 1 to 9; ``{title}`` is one)
``{name}``      the paper's introduced name (``TECRL``), or nothing
``{word}``      the default rule's word: the name, else the title's first distinctive word
literal text    letters, digits and ``_ - : . / +``, kept as written (lower-cased)
==============  ==============================================================================

The output is lower-case ASCII and BibTeX-safe (``keys.SAFE_KEY``): a field's text is folded
to ASCII letters and digits; a key that would not start with a letter or digit loses what
comes before its first one; an empty key falls back to the default rule. A format is checked
when it is read: anything else is a ``KeyFormatError`` naming the character where it goes
wrong (exit 2 at the command line). A format applies to papers first seen after it is set;
existing keys never move (``rlpapers keys --rederive`` shows what re-keying would do).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import InputError

if TYPE_CHECKING:
    from .model import Paper

FIELDS = ("auth", "year", "title", "name", "word")
#: What literal text may hold: what a BibTeX key may (``keys.SAFE_KEY``), braces aside.
LITERAL = re.compile(r"[A-Za-z0-9_\-:./+]")
MAX_WORDS = 9
#: The Better BibTeX-like format the docs suggest.
DEFAULT_EXAMPLE = "{auth}{year}{title:1}"


class KeyFormatError(InputError):
    """A key format that cannot be read; ``position`` is the 1-based character where it fails."""

    def __init__(self, message: str, format: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.format = format
        self.position = position

    def __str__(self) -> str:
        return f"invalid key format {self.format!r} at character {self.position}: {self.message}"


@dataclass(frozen=True)
class Field:
    name: str
    words: int = 1  # ``{title:N}``


@dataclass(frozen=True)
class KeyFormat:
    """A parsed key format: literal strings and ``Field`` values, in order."""

    text: str
    parts: tuple[str | Field, ...]

    def render(self, paper: Paper, derived: str = "") -> str:
        """The key this format gives ``paper`` (``derived``: the title derived from its
        abstract, where ``paper.title`` is a real one that may offer no distinctive word)."""
        from .keys import BASE_LIMIT, base_key

        text = "".join(
            part.lower() if isinstance(part, str) else _value(part, paper, derived)
            for part in self.parts
        )
        text = re.sub(r"^[^a-z0-9]+", "", text)[:BASE_LIMIT]
        return text or base_key(paper, None, derived)


def parse_format(text: str) -> KeyFormat:
    """``text`` as a ``KeyFormat``; ``KeyFormatError`` (with the position) if it is not one."""
    parts: list[str | Field] = []
    literal = ""
    at = 0
    while at < len(text):
        char = text[at]
        if char == "{":
            close = text.find("}", at)
            if close < 0:
                raise KeyFormatError("'{' is never closed", text, at + 1)
            if literal:
                parts.append(literal)
                literal = ""
            parts.append(_field(text, at, close))
            at = close + 1
            continue
        if char == "}":
            raise KeyFormatError("'}' closes nothing", text, at + 1)
        if not LITERAL.fullmatch(char):
            raise KeyFormatError(
                f"{char!r} cannot be in a citation key (literal text may hold letters, "
                "digits and _ - : . / +)",
                text,
                at + 1,
            )
        literal += char
        at += 1
    if literal:
        parts.append(literal)
    if not any(isinstance(part, Field) for part in parts):
        raise KeyFormatError(
            "a format needs at least one field ({auth}, {year}, {title:N}, {name}, {word}); "
            "literal text alone would give every paper the same key",
            text,
            max(len(text), 1),
        )
    return KeyFormat(text, tuple(parts))


def _field(text: str, start: int, close: int) -> Field:
    inside = text[start + 1 : close]
    name, colon, argument = inside.partition(":")
    if "{" in inside:
        raise KeyFormatError("'{' inside a field", text, start + 2 + inside.index("{"))
    if name not in FIELDS:
        known = ", ".join("{" + f + ("" if f != "title" else ":N") + "}" for f in FIELDS)
        raise KeyFormatError(f"unknown field {{{inside}}} (known: {known})", text, start + 1)
    if not colon:
        return Field(name)
    at = start + 2 + len(name)  # the position of the argument, 1-based
    if name != "title":
        raise KeyFormatError(f"{{{name}}} takes no ':' argument", text, at)
    if not argument.isdigit() or not 1 <= int(argument) <= MAX_WORDS:
        raise KeyFormatError(
            f"{{title:N}} needs a number of words from 1 to {MAX_WORDS}, not {argument!r}",
            text,
            at + 1,
        )
    return Field(name, int(argument))


def _value(field: Field, paper: Paper, derived: str) -> str:
    from .keys import LONGEST_WORD, key_word, name_word, title_words
    from .text import ascii_word, surname

    if field.name == "auth":
        return ascii_word(surname(paper.authors[0]), LONGEST_WORD) if paper.authors else ""
    if field.name == "year":
        return str(paper.year) if paper.year else ""
    if field.name == "name":
        return name_word(paper.name)
    if field.name == "word":
        return key_word(paper, derived)
    words = title_words(paper.title, field.words, paper.title_derived)
    return "".join(words or title_words(derived, field.words))
