"""Small text helpers every layer shares: CJK detection, accent folding, surnames, ASCII words.

Each rule lives here once, so the parser, the citation keys, the exporters and the terminal
output agree (``van Gool`` is the surname ``van Gool`` everywhere, and ``vangool`` in a key).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

#: CJK ideographs: the unified block, extension A, the compatibility block and extensions B–F.
CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"

#: The scripts the index cuts into character bigrams: CJK ideographs (without extensions B–F),
#: kana and hangul. Held as code-point ranges and checked with comparisons, since the tokenizer
#: asks for every character of a non-ASCII text and a regex class over them costs milliseconds
#: to compile at every start.
CJK_SCRIPT_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
)

#: Lower-case name particles that belong to a surname ("van der Berg", "de la Cruz").
PARTICLES = {
    "van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "dos", "das", "le",
    "la", "bin", "ibn", "al", "el", "y", "zu", "ter", "ten", "st",
}  # fmt: skip


@cache
def _cjk() -> re.Pattern[str]:
    """The class of ``CJK_CHARS``, compiled at first use: compiling it takes milliseconds, which
    a run that meets no name or key to make would pay at every start."""
    return re.compile(f"[{CJK_CHARS}]")


def has_cjk(text: str) -> bool:
    return _cjk().search(text) is not None


def starts_cjk(text: str) -> bool:
    return _cjk().match(text) is not None


def in_cjk_script(char: str) -> bool:
    """True for a character of ``CJK_SCRIPT_RANGES`` (ideograph, kana or hangul)."""
    code = ord(char)
    return any(low <= code <= high for low, high in CJK_SCRIPT_RANGES)


def strip_accents(text: str) -> str:
    """``text`` without its accents, case kept: ``Aichmüller`` -> ``Aichmuller``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fold(text: str) -> str:
    """Case- and accent-insensitive form for matching: ``Aichmüller`` -> ``aichmuller``."""
    return strip_accents(text.casefold())


#: Generational suffixes that may end a name written given names first (``Robert W. Heath Jr.``,
#: ``Donald C. Wunsch II``): they follow the surname and are not it.
SUFFIXES = frozenset({"Jr", "Jr.", "JR", "JR.", "jr", "jr.", "Sr", "Sr.", "II", "III", "IV"})


def name_suffix(author: str) -> str:
    """The generational suffix ending ``author`` (``Jr.``, ``III``), or "": only in a name of
    three words or more without a comma (``Heath, Jr., Robert`` is BibTeX's own order)."""
    words = author.split()
    return words[-1] if len(words) >= 3 and "," not in author and words[-1] in SUFFIXES else ""


def surname(author: str) -> str:
    """The family name as printed: ``Luc van Gool`` -> ``van Gool``; ``王小明`` -> ``王``;
    ``Robert W. Heath Jr.`` -> ``Heath`` (``name_suffix``).

    A name with a comma is written family name first (``van Gool, Luc``).
    """
    if "," in author:
        family = author.split(",", 1)[0].strip()
        if family:
            return family
    words = _name_words(author)
    if not words:
        return ""
    if len(words) == 1 and starts_cjk(words[0]):
        return words[0][0]  # Chinese names are written surname first
    initials = _initials_at_end(words)
    if initials:  # surname first, as Scopus and Web of Science write names: Sutton R.S.
        return " ".join(words[:-initials])
    tail = [words[-1]]
    for word in reversed(words[:-1]):
        if word.lower() not in PARTICLES:
            break
        tail.insert(0, word)
    return " ".join(tail)


def _name_words(author: str) -> list[str]:
    """The words of a name written without a comma, less its suffix (``name_suffix``)."""
    words = author.split()
    return words[:-1] if name_suffix(author) else words


#: A word of initials only: ``R.``, ``R.S.``, ``J.-H.``.
_INITIALS = re.compile(r"[A-Z]\.(?:-?[A-Z]\.)*")


def _initials_at_end(words: list[str]) -> int:
    """How many of ``words`` at the end are initials only, where a word that is not stands
    before them (``Sutton R.S.``, ``Van Gool L.``); 0 otherwise."""
    count = 0
    while count < len(words) and _INITIALS.fullmatch(words[-1 - count]):
        count += 1
    return count if 0 < count < len(words) else 0


def given_names(author: str) -> str:
    """What precedes the surname: ``Luc van Gool`` -> ``Luc``."""
    if "," in author:
        return author.split(",", 1)[1].strip()
    family = surname(author)
    words = _name_words(author)
    initials = _initials_at_end(words)
    if initials:
        return " ".join(words[-initials:])
    return " ".join(words[: len(words) - len(family.split())]) if family else ""


def ascii_word(text: str, limit: int = 24) -> str:
    """Lower-case ASCII letters and digits only (``van Gool`` -> ``vangool``), at most ``limit``."""
    from anyascii import anyascii

    return re.sub(r"[^a-z0-9]", "", anyascii(text).lower())[:limit]


def valid_unicode(text: str) -> str:
    """``text`` with lone surrogates (the undecodable bytes of a file name, as Python reads
    them) replaced by U+FFFD, so it always encodes to valid UTF-8."""
    return _surrogates().sub("\ufffd", text)


# These two are compiled on first use: about 0.3 ms of a start, and a search never needs them.
@cache
def _surrogates() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


@cache
def _controls() -> re.Pattern[str]:
    """Every C0 and C1 control character, tabs and line breaks too."""
    return re.compile(r"[\x00-\x1f\x7f-\x9f]")


def one_line(text: str) -> str:
    """``text`` fit for a one-line field: valid UTF-8 (``valid_unicode``), and every control
    character (an escape sequence a terminal would obey, a NUL, a line break) a space."""
    return _controls().sub(" ", valid_unicode(text))


def shown(text: str) -> str:
    """``text`` safe to print in a message: valid UTF-8, and every control character (an
    escape sequence in a file name, say) written out visibly as ``\\x1b``, so a terminal never
    obeys it and the reader can still tell which file is meant."""
    return _controls().sub(lambda m: f"\\x{ord(m.group()):02x}", valid_unicode(text))
