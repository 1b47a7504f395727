"""Abstract text to valid LaTeX for BibTeX fields, without losing what is already LaTeX.

The abstracts mix three things: valid LaTeX (``$\\tilde{O}(d^2)$``, ``\\%``, ``\\textbf{..}``),
markdown emphasis (``**AlphaSAGE**``, ``*Stratified GRPO*``) and bare characters that LaTeX
treats as special (``35%``, ``R&D``, ``#1``, ``snake_case``, ``~``). The rules:

- math (``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``) is kept as written, except a bare ``%``
  or ``#``, and a bare ``&`` outside an alignment environment;
- a backslash command (``\\emph``) or escape (``\\%``) is kept; any other backslash is spelled out;
- markdown emphasis becomes ``\\textbf{}`` / ``\\emph{}``;
- bare ``% & # _`` are escaped, ``~ ^`` spelled out, a lone ``$`` escaped;
- braces that do not pair up are escaped, so every field is balanced and a bare ``%`` can never
  comment out the rest of an entry.
"""

from __future__ import annotations

import re
from functools import cache

# The patterns are compiled on first use, and each runs only on text that holds the characters
# it needs: most names, titles and abstracts have no math and no markdown.


@cache
def _math() -> re.Pattern[str]:
    return re.compile(r"\$\$.+?\$\$|(?<!\\)\$(?:[^$\\]|\\.)+?\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)


def _math_spans(text: str) -> list[re.Match[str]]:
    """The math in ``text``: ``$..$``, ``$$..$$``, ``\\(..\\)``, ``\\[..\\]``."""
    if "$" not in text and "\\" not in text:
        return []
    return list(_math().finditer(text))


@cache
def _markdown() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Strong and emphasised, strong, emphasised."""
    return (
        re.compile(r"\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*"),
        re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|(?<![\w_])__(?=\S)(.+?)(?<=\S)__(?![\w_])"),
        re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])"),
    )


_TEXT_SPECIALS = {
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "$": r"\$",
}


def to_latex(text: str, ascii_only: bool = False) -> str:
    """``text`` as a LaTeX string that is safe inside a braced BibTeX field."""
    out = []
    position = 0
    for match in _math_spans(text):
        out.append(balance(_text_part(text[position : match.start()], ascii_only)))
        math = _math_specials(match.group(0))
        out.append(balance(_encode_non_ascii(math) if ascii_only else math, math=True))
        position = match.end()
    out.append(balance(_text_part(text[position:], ascii_only)))
    return "".join(out)


def _math_specials(math: str) -> str:
    """Math with what is never valid in it escaped: a bare ``%`` (it comments out the rest), a
    bare ``#``, and a bare ``&`` outside an alignment environment (``$5 & $`` between two dollar
    amounts is no formula)."""
    specials = "%#" if "\\begin" in math else "%#&"
    if not any(char in math for char in specials):
        return math
    # a special is escaped only by an odd run of backslashes: after \\ (a line break) % is bare
    return re.sub(rf"(?<!\\)((?:\\\\)*)([{specials}])", r"\1\\\2", math)


def _text_part(text: str, ascii_only: bool) -> str:
    joined = _markdown_to_latex(text)
    if not _TOKEN_CHARS.isdisjoint(joined):
        joined = _text_token_pattern().sub(_text_token, joined)
    return _encode_non_ascii(joined) if ascii_only else joined


#: Kept after a backslash as a two-character escape (``\%``, ``\,``, ``\'``).
_ESCAPED = "%&#_{}$~^ ,;:!'\"`=.-"
#: The characters a text token starts with.
_TOKEN_CHARS = frozenset("\\" + "".join(_TEXT_SPECIALS))


@cache
def _text_token_pattern() -> re.Pattern[str]:
    """What a text part changes, left to right: a backslash command (kept), a backslash escape
    (kept), any other backslash (spelled out), a special character (escaped)."""
    specials = re.escape("".join(_TEXT_SPECIALS))
    return re.compile(rf"\\[A-Za-z]+\*?|\\[{re.escape(_ESCAPED)}]|\\|[{specials}]")


def _text_token(match: re.Match[str]) -> str:
    token = match.group(0)
    if token == "\\":
        return r"\textbackslash{}"
    return token if token[0] == "\\" else _TEXT_SPECIALS[token]


def _markdown_to_latex(text: str) -> str:
    if "*" not in text and "__" not in text:
        return text
    strong_em, strong, em = _markdown()
    text = strong_em.sub(lambda m: r"\textbf{\emph{" + m.group(1) + "}}", text)
    text = strong.sub(lambda m: r"\textbf{" + (m.group(1) or m.group(2)) + "}", text)
    return em.sub(lambda m: r"\emph{" + m.group(1) + "}", text)


def _encode_non_ascii(text: str) -> str:
    if text.isascii():
        return text
    from pylatexenc.latexencode import UnicodeToLatexEncoder

    encoder = UnicodeToLatexEncoder(
        non_ascii_only=True,
        unknown_char_policy="keep",
        unknown_char_warning=False,
        replacement_latex_protection="braces-all",
    )
    encoded = str(encoder.unicode_to_latex(text))
    return encoded if encoded.isascii() else re.sub(r"[^\x00-\x7f]", _accented, encoded)


#: Combining marks as LaTeX accent commands, for letters pylatexenc has no entry for (``ǎ``):
#: the letter is decomposed (NFD) and written ``{\v{a}}``.
_MARKS = {
    "\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=",
    "\u0306": "u", "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H",
    "\u030c": "v", "\u0323": "d", "\u0327": "c", "\u0328": "k", "\u0331": "b",
}  # fmt: skip


def _accented(match: re.Match[str]) -> str:
    """A letter with accents as LaTeX accent commands, if it decomposes into an ASCII letter
    and marks that have one; otherwise the character as it is (CJK, emoji)."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", match.group(0))
    base, marks = decomposed[0], decomposed[1:]
    if not base.isascii() or not marks or any(m not in _MARKS for m in marks):
        return match.group(0)
    out = base
    for mark in marks:
        command = _MARKS[mark]
        out = f"\\{command}{{{out}}}" if command.isalpha() else f"\\{command}{out}"
    return "{" + out + "}"


_LITERAL = {
    False: {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"},
    True: {"{": r"\lbrace{}", "}": r"\rbrace{}"},
}


def balance(text: str, math: bool = False) -> str:
    """Make every brace pair up, as BibTeX counts them (it ignores backslashes).

    A grouping brace with no partner, and an escaped brace ``\\{`` with no escaped partner,
    become ``\\textbraceleft{}`` (``\\lbrace{}`` in math) and friends. Grouping braces and
    escaped pairs that match are kept as written.
    """
    if "{" not in text and "}" not in text:
        return text  # most text parts: nothing to pair, no scan
    grouping, escaped = _unmatched(text)
    bad = grouping | escaped
    if not bad:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        if i in bad:
            if i in escaped:
                out.pop()  # drop the backslash already copied
            out.append(_LITERAL[math][text[i]])
        else:
            out.append(text[i])
        i += 1
    return "".join(out)


def _unmatched(text: str) -> tuple[set[int], set[int]]:
    """Positions of unmatched grouping braces and of unmatched escaped braces."""
    stacks: dict[bool, list[int]] = {False: [], True: []}
    unmatched: dict[bool, set[int]] = {False: set(), True: set()}
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if text[i + 1] in "{}":
                _match(stacks[True], unmatched[True], text[i + 1], i + 1)
            i += 2
            continue
        if char in "{}":
            _match(stacks[False], unmatched[False], char, i)
        i += 1
    unmatched[False].update(stacks[False])
    unmatched[True].update(stacks[True])
    return unmatched[False], unmatched[True]


def _match(stack: list[int], unmatched: set[int], char: str, position: int) -> None:
    if char == "{":
        stack.append(position)
    elif stack:
        stack.pop()
    else:
        unmatched.add(position)


def url_safe(value: str) -> str:
    """A URL or DOI for a verbatim field: braces and backslashes percent-encoded (bibtexparser
    reads ``\\}`` as an escaped brace, so ``{…\\}`` would never close), nothing else touched."""
    return value.replace("\\", "%5C").replace("{", "%7B").replace("}", "%7D")


def protect_capitals(title: str) -> str:
    """Brace words whose capitals a BibTeX style must not lower-case: ``{QeRL}``, ``{LLMs}``,
    and a capitalised word spelled with accent commands (``--ascii``): in ``R{\\'e}nyi`` a
    style, and pandoc, lower-case the R, so it is written ``{R{\\'e}nyi}``."""

    def guard(match: re.Match[str]) -> str:
        word = match.group(0)
        letters = _letters(word)
        if not letters:
            return word
        capital = letters[0].isupper()
        if (
            any(c.isupper() for c in letters[1:])
            or (capital and any(c.isdigit() for c in word))
            or (capital and "{\\" in word)
        ):
            return "{" + word + "}"
        return word

    parts = []
    position = 0
    for math in _math_spans(title):
        parts.append(re.sub(_TITLE_WORD, guard, title[position : math.start()]))
        parts.append("{" + math.group(0) + "}")
        position = math.end()
    parts.append(re.sub(_TITLE_WORD, guard, title[position:]))
    return "".join(parts)


#: A word of a title outside math (not after a backslash: ``\alpha`` is a command), accent
#: commands (``{\'e}``, as ``--ascii`` writes them) included.
#: An accent or a letter written as a command, braced: ``{\'e}``, ``{\c{c}}``, ``{\H{o}}``,
#: ``{\L}``, ``{\ss}`` (a command of one or two letters, or one mark; ``{\textendash}`` is not).
_ACCENTED = r"\{\\(?:[^A-Za-z{}]|[A-Za-z]{1,2}(?![A-Za-z]))[^{}]*(?:\{[^{}]*\})?\}"
_TITLE_WORD = (
    rf"(?<![\\\w{{])(?:[A-Za-z]|{_ACCENTED})(?:[\w\-]|{_ACCENTED})*(?:[A-Za-z0-9]|{_ACCENTED})"
)
#: Letters written as commands, with the letter each stands for.
_GLYPHS = re.compile(r"\\(AA|AE|OE|aa|ae|oe|ss|L|O|l|o|i|j)(?![A-Za-z])")
_COMMANDS = re.compile(r"\\[A-Za-z]+|\\.")


def _letters(word: str) -> list[str]:
    """A title word's letters as a reader sees them: ``{\\L}ukasiewicz`` starts with L,
    ``Fran{\\c{c}}ois`` is all lower-case after its F (command names and marks are not
    letters)."""
    plain = _COMMANDS.sub("", _GLYPHS.sub(lambda m: m.group(1)[0], word))
    return re.findall(r"[A-Za-z]", plain)
