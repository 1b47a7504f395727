"""Blocks to roles: header, category line, author line, abstract, or none of them.

``classify`` decides one block by what it contains; position only matters for the header, which
can only be a file's first block. ``assign`` then reads the whole file: where a block's content
is ambiguous, the layout the file follows elsewhere decides (docs/parsing.md has the rules).
"""

from __future__ import annotations

import re
from collections import Counter
from enum import StrEnum
from functools import lru_cache

from ..text import PARTICLES, has_cjk, starts_cjk
from .categories import code_led, is_category_line, is_prose, split_categories, starts_category_line

__all__ = ["Role", "assign", "classify", "is_category_line", "split_authors", "split_categories"]


class Role(StrEnum):
    HEADER = "header"
    CATEGORY = "category"
    AUTHORS = "authors"
    ABSTRACT = "abstract"
    OTHER = "other"  # neither a category line, an author line nor prose: warned about, not a paper


_ET_AL = re.compile(r"(?:[,，、]?\s*(?:等(?:人)?|et\.?\s+al\.?|and\s+others|…|\.\.\.))\s*$", re.I)
# A group before the names, set off by a colon: ``NVIDIA, :, Aaron Blakeman``, ``Kimi Team: …``.
_GROUP = re.compile(r"\s*([^,，、;；:：]{1,80}?)\s*[,，]?\s*[:：]\s*[,，]?\s*")
# Ends like a name, not a sentence: an initial, ``Jr.``, ``et al.``.
_NAME_END = re.compile(r"(?:\b[A-Z][a-z]?|\bal)\.\s*$")
_NAME_SPLIT = re.compile(r"\s*[,，、;；]\s*|\s+and\s+|\s*&\s*")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")
_MARKS = re.compile(r"(?<=\w)[†‡§¶*∗#\d,]+(?=\s|$)|^\s*[†‡§¶*∗#]+")
# A word of a name: an initial (``D.``, ``-F.``, ``P.-W.``), a stray ``.`` or dash
# (``L. A . Clarke``, ``Marcelo Fernandez - TraslaIA``), or letters with apostrophes, dots, hyphens.
_NAME_WORD = re.compile(r"^(?:-?[A-Z]\.?(?:-[A-Z]\.?)?|[.\-–]|[^\W\d_][\w'’.\-]*)$")
_QUOTES = "\"“”'‘’"
_TIE = re.compile(r"(?<=\w)~(?=\w)")  # LaTeX's unbreakable space: ``Nikin~Matharaarachchi``


def classify(text: str, first: bool, last: bool = False) -> Role:
    """The role of one block, given its joined text and whether it opens or ends the file.

    A lone short label (``cs.LG``, ``Planning``) between blocks is a one-item category line: an
    abstract is longer and ends like a sentence.
    """
    if starts_category_line(text) and is_category_line(text):
        return Role.CATEGORY
    if len(text) > 400 and _SENTENCE_END.search(text) and not _ends_like_a_name(text):
        return Role.ABSTRACT  # the common case, decided without splitting names
    if is_category_line(text):
        return Role.CATEGORY
    if first and _is_header(text) and (len(split_authors(text)[0]) < 2 or not is_author_line(text)):
        return Role.HEADER  # one part, or parts that are not names (Reading list, March 2025)
    if is_author_line(text):
        return Role.AUTHORS
    if not first and not last and _is_label(text) and not code_led(text):
        return Role.CATEGORY
    return Role.OTHER if code_led(text) or not is_prose(text) else Role.ABSTRACT


def _ends_like_a_name(text: str) -> bool:
    """Ends in an initial, ``Jr.`` or ``et al.``: only the last characters are looked at."""
    return _NAME_END.search(text, max(0, len(text) - 8)) is not None


def _is_label(text: str) -> bool:
    return (
        len(text) <= 60
        and len(text.split()) <= 6
        and not _SENTENCE_END.search(text)
        and "," not in text
    )


def _is_header(text: str) -> bool:
    return len(text) <= 80 and "\n" not in text and not _SENTENCE_END.search(text)


def split_authors(text: str) -> tuple[list[str], bool]:
    """Names in an author line, and whether it ended in 等 / et al. (a truncated list).

    A group set off by a colon (``NVIDIA, :, Aaron Blakeman``) is the first name; affiliation
    marks (``Zhang†``, ``Li*``, ``Wang1``) are dropped from the names.
    """
    names, truncated = _split_authors(text)
    return list(names), truncated


@lru_cache(maxsize=1 << 16)  # split when classified and again when read; ``forget`` per file
def _split_authors(text: str) -> tuple[tuple[str, ...], bool]:
    body, truncated = _strip_et_al(text)
    group = _GROUP.match(body)
    names = [group.group(1)] if group else []
    names += [_clean_name(name) for name in _NAME_SPLIT.split(body[group.end() if group else 0 :])]
    return tuple(name for name in names if name), truncated


def _has_group(text: str) -> bool:
    return _GROUP.match(text) is not None


def forget() -> None:
    """Empty the cache of split author lines (at the end of each file)."""
    _split_authors.cache_clear()


def _clean_name(name: str) -> str:
    name = _MARKS.sub("", _TIE.sub(" ", name)).strip()
    return name.strip(" .:") if has_cjk(name) else name.strip(" :")


def _strip_et_al(text: str) -> tuple[str, bool]:
    match = _ET_AL.search(text)
    if not match:
        return text.strip(), False
    return text[: match.start()].strip(), True


def is_author_line(text: str) -> bool:
    """Comma-separated names: three in four items must look like a name, and no sentence ends.

    Real author lines are messy (``Zhihan zhang``, ``NVIDIA``, ``Zhaoqin "Richie" Li``), so a
    few odd items are allowed; an abstract fails on its long clauses and its final full stop.
    A line of any length is read (the 3,303 names of a real paper take about 25 ms: each
    step is one pass over the line); a group before a colon (``GLM-4.5 Team:``) need not look
    like a name.
    """
    if code_led(text):
        return False
    names, truncated = split_authors(text)
    if _has_group(text) and len(names) >= 2:
        names = names[1:]
    if not names:
        return False
    if len(names) == 1 and not truncated:
        # A lone name is accepted only when it clearly is one: "Yoshua Bengio", "王小明".
        name = names[0]
        if has_cjk(name):
            return len(name) <= 4 and starts_cjk(name)
        return (
            _SENTENCE_END.search(text) is None
            and 2 <= len(name.split()) <= 4
            and _is_name(name, strict=True)
        )
    if _SENTENCE_END.search(_strip_et_al(text)[0]) and not _ends_like_a_name(text):
        return False
    good = sum(_is_name(name) for name in names)
    return good >= 0.75 * len(names) and _is_name(names[0])


def _is_name(name: str, strict: bool = False, loose: bool = False) -> bool:
    if has_cjk(name):
        return len(name) <= 12 and not re.search(r"[。，：；]", name)
    words = name.split()
    if not 1 <= len(words) <= (30 if loose else 6):  # loose: "Tom Devynck Bilal Faye …"
        return False
    capitalised = 0
    for word in words:
        if word.lower() in PARTICLES:
            continue
        word = word.strip(_QUOTES) or word  # a nickname: Ho Yin 'Sam' Ng
        if not _NAME_WORD.match(word):
            return False
        if word.lstrip("-.")[:1].isupper():
            capitalised += 1
        elif strict and word not in ".-–":
            return False
    return capitalised >= 1 or loose


# --- the file's own evidence --------------------------------------------------------------------

_FUNCTION_WORD = re.compile(r"\b(?:the|of|we|is|are|to|for|with|this|that|our|in|on|by|an|from)\b")
_NAME_STOP = re.compile(r"(?<=[^\W\d_]{2})\.\s+")  # "Ko Watanabe. Stanislav Frolov"


def assign(texts: list[str]) -> list[Role]:
    """The role of every block of a file, in order.

    Each block is first classified by its content. Then the layout the file follows settles the
    blocks whose content is ambiguous, each rule looking at the block's neighbours:

    - a block right before an abstract is the author line when it reads as a list of names at all
      (``Nikin~Matharaarachchi, …``, ``Naomi Omeonga wa Kayembe``, ``Mingxiao LI, mang ning``,
      ``Tom Devynck Bilal Faye …``)
      and it follows a category line, or the file has author lines right before abstracts
      elsewhere;
    - of two author-like blocks before an abstract, the first is a one-part category line when the
      file puts category lines before author lines (``Reinforcement Learning``, then the names);
    - a lone label before an abstract that reads as a name is a one-part category line when the
      file has category lines and no other author lines.
    """
    last = len(texts) - 1
    roles = [classify(text, first=i == 0, last=i == last) for i, text in enumerate(texts)]
    if _categories_first(roles):
        for i in range(last - 1):
            if roles[i : i + 3] == [Role.AUTHORS, Role.AUTHORS, Role.ABSTRACT] and _is_label(
                texts[i]
            ):
                roles[i] = Role.CATEGORY
    authors_before_abstracts = _authors_before_abstracts(roles)
    for i in range(1, last):
        if (
            roles[i + 1] is Role.ABSTRACT
            and roles[i] is not Role.AUTHORS
            and (roles[i - 1] is Role.CATEGORY or authors_before_abstracts)
            and could_be_authors(texts[i])
        ):
            roles[i] = Role.AUTHORS
    if Role.CATEGORY in roles:
        _lone_labels_are_categories(texts, roles)
    return roles


def _categories_first(roles: list[Role]) -> bool:
    pairs = Counter(zip(roles, roles[1:], strict=False))
    return pairs[Role.CATEGORY, Role.AUTHORS] >= pairs[Role.AUTHORS, Role.CATEGORY]


def _authors_before_abstracts(roles: list[Role]) -> bool:
    return any(
        role is Role.AUTHORS and after is Role.ABSTRACT
        for role, after in zip(roles, roles[1:], strict=False)
    )


def _lone_labels_are_categories(texts: list[str], roles: list[Role]) -> None:
    lone = [
        i
        for i in range(1, len(roles) - 1)
        if roles[i] is Role.AUTHORS
        and roles[i - 1] is not Role.CATEGORY
        and roles[i + 1] is Role.ABSTRACT
        and _is_label(texts[i])
    ]
    if lone and roles.count(Role.AUTHORS) == len(lone):
        for i in lone:
            roles[i] = Role.CATEGORY


def could_be_authors(text: str) -> bool:
    """Names at all, loosely (lower-case surnames, odd shapes, names run together or separated
    by full stops): for a block that stands where the file's layout puts its author line. Prose
    (a final full stop after a word, or words such as "the", "of", "we") and category lines are
    not."""
    if "·" in text or starts_category_line(text) or code_led(text):
        return False
    if _ends_like_prose(text) or _FUNCTION_WORD.search(text):
        return False
    names = [part for name in split_authors(text)[0] for part in _NAME_STOP.split(name)]
    return bool(names) and sum(_is_name(name, loose=True) for name in names) * 2 >= len(names)


def _ends_like_prose(text: str) -> bool:
    """Ends with a word and a full stop: "… it is tight.", "… aa." but not "et al." or "Jr."."""
    last = text.rsplit(None, 1)[-1] if text.strip() else ""
    word = last[:-1]
    if not last or last[-1] not in ".!?。！？" or word == "al" or not word.isalpha():
        return False
    return word[0].islower() or len(word) >= 3
