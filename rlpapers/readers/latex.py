"""LaTeX in BibTeX fields, decoded for search and display.

What a reader sees as a character is decoded: accents (``{\\"u}``, ``\\'e``), escapes (``\\%``,
``\\&``, ``\\_``), symbols (``\\ss``, ``\\textasciitilde{}``), grouping braces (``{QeRL}``) and the
ties ``~``. What the rest of the corpus keeps as written stays as written: math
(``$\\mathcal{O}(n^2)$``), formatting commands with their arguments (``\\emph{...}``, whose
argument is decoded in turn), unknown commands, and the dashes and quotes ``--``, ``````.
So an abstract that rlpapers exported from a ``.txt`` file reads back as the same text, and
the BibTeX exporter writes it out again unchanged.

pylatexenc parses the LaTeX. It reads a character at a time (some milliseconds for an
abstract, tens for a long one) and raised ``IndexError`` on some arXiv abstracts, so it is
handed only each command with its arguments (``\\"{u}``, ``\\emph{...}``), found by a regular
expression outside math, and its answers are cached; a field with only braces loses them by a
translation, and a field with neither is returned as it is. Anything pylatexenc raises leaves
that command as written.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

#: Math as the exporters write it: ``$$..$$``, ``$..$``, ``\\(..\\)``, ``\\[..\\]``.
_MATH = re.compile(r"\$\$.+?\$\$|(?<!\\)\$(?:[^$\\]|\\.)+?\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
#: One-character accent commands and the lettered ones: decoded to the accented letter.
_ACCENTS = frozenset("\"'`^~=.") | {"c", "d", "b", "r", "k", "t", "u", "v", "H"}
#: Commands pylatexenc does not know: those the BibTeX exporter writes, and ``\\relax`` (a
#: two-letter initial, ``{\\relax Ch}ristopher``).
_EXTRA = {
    "textbraceleft": "{",
    "textbraceright": "}",
    "textasciicircum": "^",  # pylatexenc gives the modifier letter U+02C6
    "lbrace": "{",
    "rbrace": "}",
    "relax": "",
}
#: An accent over nothing is the accent itself: ``\\^{}`` is a circumflex, ``\\~{}`` a tilde.
_LONE_ACCENTS = {"^": "^", "~": "~"}
#: Commands whose argument is a link, kept as written: a ``%`` there is part of the link, where
#: pylatexenc would read it as a comment.
_LINKS = ("\\url{", "\\path{")
_BRACES = str.maketrans({"{": None, "}": None, "~": " "})


def decode(text: str) -> str:
    """``text`` (a BibTeX field's value) with its LaTeX decoded as described above, on one
    line (runs of whitespace become one space)."""
    if "\\" not in text and "$" not in text:
        return (
            " ".join(text.translate(_BRACES).split())
            if "{" in text or "~" in text or "}" in text
            else " ".join(text.split())
        )
    out = []
    position = 0
    for match in _MATH.finditer(text):
        out.append(_text(text[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(_text(text[position:]))
    return " ".join("".join(out).split())


#: What a text part changes: a command with its braced arguments, or a brace or tie outside
#: one. An accent takes the next letter (or ``\\i``) as TeX does, inside a word too
#: (``Schr\\"odinger``, ``\\'ecole``), a lettered one after a space (``\\c c``, ``\\v s``).
_TOKEN = re.compile(
    r"\\(?:[\"'`^~=.]\s*(?:\\[ij](?![A-Za-z])|[A-Za-z])?|[cdbrkuvH]\s+(?:\\[ij](?![A-Za-z])|[A-Za-z])"
    r"|[A-Za-z]+\*?|[^A-Za-z])(?:\s*\{(?:[^{}]|\{[^{}]*\})*\})*|[{}~]"
)


def _text(part: str) -> str:
    if "\\" not in part:
        return part.translate(_BRACES)
    return _TOKEN.sub(_token, part)


def _token(match: re.Match[str]) -> str:
    token = match.group(0)
    if len(token) == 1:
        return " " if token == "~" else ""
    if token.startswith(_LINKS):
        return token
    return _command(token)


@lru_cache(maxsize=4096)
def _command(snippet: str) -> str:
    """A command and its arguments, decoded by pylatexenc; as written if it fails."""
    try:
        from pylatexenc.latexwalker import LatexWalker

        walker = LatexWalker(snippet, latex_context=_walker_context(), tolerant_parsing=True)
        nodes = walker.get_latex_nodes()[0]
        return _nodes(nodes or [])
    except Exception:  # pylatexenc's own errors, IndexError, RecursionError: keep the text
        return snippet


def _nodes(nodes: list[Any]) -> str:
    out = []
    keep_next_group = False
    for node in nodes:
        kind = type(node).__name__
        if keep_next_group and kind == "LatexGroupNode":
            out.append(node.latex_verbatim())
            keep_next_group = False
            continue
        keep_next_group = False
        if kind == "LatexCharsNode":
            out.append(node.chars)
        elif kind == "LatexGroupNode":
            out.append(_nodes(node.nodelist or []))
        elif kind == "LatexMacroNode":
            text, keep_next_group = _macro(node)
            out.append(text)
        elif kind == "LatexSpecialsNode":
            chars = node.specials_chars
            out.append(" " if chars == "~" else chars)
        else:  # math, comments, environments: as written
            out.append(node.latex_verbatim())
    return "".join(out)


def _macro(node: Any) -> tuple[str, bool]:
    """A command's text, and whether a group right after it belongs to it (an unknown
    command's argument, kept as written)."""
    name = node.macroname
    if name in _EXTRA:
        return _EXTRA[name], False
    spec = _text_context().get_macro_spec(name)
    if spec is None:
        return node.latex_verbatim(), True
    args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
    if not args or name in _ACCENTS or name in ("i", "j"):
        text = str(_converter().nodelist_to_text([node]))
        return text or _LONE_ACCENTS.get(name, ""), False
    # a formatting command (\emph, \textbf, \url): kept, its arguments decoded
    parts = [
        "{" + _nodes(a.nodelist or []) + "}"
        if type(a).__name__ == "LatexGroupNode"
        else a.latex_verbatim()
        for a in args
    ]
    return "\\" + name + "".join(parts), False


@cache
def _walker_context() -> Any:
    from pylatexenc.latexwalker import get_default_latex_context_db

    return get_default_latex_context_db()


@cache
def _text_context() -> Any:
    from pylatexenc.latex2text import get_default_latex_context_db

    return get_default_latex_context_db()


@cache
def _converter() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="verbatim")
