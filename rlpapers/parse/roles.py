"""Blocks to roles: header, category line, author line or abstract, decided by content.

Position only matters for the header, which can only be a file's first block.
"""

from __future__ import annotations

import re
from enum import StrEnum

from .text import PARTICLES


class Role(StrEnum):
    HEADER = "header"
    CATEGORY = "category"
    AUTHORS = "authors"
    ABSTRACT = "abstract"


_CATEGORY_SEP = re.compile(r"\s*[·•]\s*|\s+>\s+|\s+\|\s+")
_ET_AL = re.compile(r"(?:[,，、]?\s*(?:等(?:人)?|et\.?\s+al\.?|and\s+others|…|\.\.\.))\s*$", re.I)
_NAME_SPLIT = re.compile(r"\s*[,，、;；]\s*|\s+and\s+|\s*&\s*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")
_MARKS = re.compile(r"(?<=\w)[†‡§¶*∗#\d,]+(?=\s|$)|^\s*[†‡§¶*∗#]+")
_NAME_WORD = re.compile(r"^(?:[A-Z]\.?(?:-[A-Z]\.?)?|[^\W\d_][\w'’.\-]*)$")


def classify(text: str, first: bool, last: bool = False) -> Role:
    """The role of one block, given its joined text and whether it opens or ends the file.

    A lone short label (``cs.LG``, ``Planning``) between blocks is a one-item category line: an
    abstract is longer and ends like a sentence.
    """
    if len(text) > 400 and _SENTENCE_END.search(text) and not text.endswith("al."):
        return Role.ABSTRACT  # the common case, decided without splitting names
    if is_category_line(text):
        return Role.CATEGORY
    if first and _is_header(text) and len(split_authors(text)[0]) < 2:
        return Role.HEADER
    if is_author_line(text):
        return Role.AUTHORS
    if not first and not last and _is_label(text):
        return Role.CATEGORY
    return Role.ABSTRACT


def _is_label(text: str) -> bool:
    return (
        len(text) <= 60
        and len(text.split()) <= 6
        and not _SENTENCE_END.search(text)
        and "," not in text
    )


def _is_header(text: str) -> bool:
    return len(text) <= 80 and "\n" not in text and not _SENTENCE_END.search(text)


def is_category_line(text: str) -> bool:
    if len(text) > 200 or _SENTENCE_END.search(text) or "·" not in text and "•" not in text:
        return False
    parts = split_categories(text)
    return len(parts) >= 2 and all(len(p.split()) <= 8 for p in parts)


def split_categories(text: str) -> list[str]:
    return [part.strip() for part in _CATEGORY_SEP.split(text) if part.strip()]


def split_authors(text: str) -> tuple[list[str], bool]:
    """Names in an author line, and whether it ended in 等 / et al. (a truncated list).

    Affiliation marks (``Zhang†``, ``Li*``, ``Wang1``) are dropped from the names.
    """
    body, truncated = _strip_et_al(text)
    names = [_clean_name(name) for name in _NAME_SPLIT.split(body)]
    return [name for name in names if name], truncated


def _clean_name(name: str) -> str:
    name = _MARKS.sub("", name).strip()
    return name.strip(" .:") if _CJK.search(name) else name.strip(" :")


def _strip_et_al(text: str) -> tuple[str, bool]:
    match = _ET_AL.search(text)
    if not match:
        return text.strip(), False
    return text[: match.start()].strip(), True


def is_author_line(text: str) -> bool:
    """Comma-separated names: three in four items must look like a name, and no sentence ends.

    Real author lines are messy (``Zhihan zhang``, ``NVIDIA``, ``Zhaoqin "Richie" Li``), so a
    few odd items are allowed; an abstract fails on its long clauses and its final full stop.
    """
    if len(text) > 3000:
        return False
    names, truncated = split_authors(text)
    if not names:
        return False
    if len(names) == 1 and not truncated:
        # A lone name is accepted only when it clearly is one: "Yoshua Bengio", "王小明".
        name = names[0]
        if _CJK.search(name):
            return len(name) <= 4 and bool(_CJK.fullmatch(name[0]))
        return (
            _SENTENCE_END.search(text) is None
            and 2 <= len(name.split()) <= 4
            and _is_name(name, strict=True)
        )
    if _SENTENCE_END.search(_strip_et_al(text)[0]) and not re.search(r"\b[A-Z]\.$", text.strip()):
        return False
    good = sum(_is_name(name) for name in names)
    return good >= 0.75 * len(names) and _is_name(names[0])


def _is_name(name: str, strict: bool = False) -> bool:
    if _CJK.search(name):
        return len(name) <= 12 and not re.search(r"[。，：；]", name)
    words = name.split()
    if not 1 <= len(words) <= 6:
        return False
    capitalised = 0
    for word in words:
        if word.lower() in PARTICLES:
            continue
        if not _NAME_WORD.match(word.strip('"“”')):
            return False
        if word.strip('"“”')[0].isupper():
            capitalised += 1
        elif strict:
            return False
    return capitalised >= 1


def could_be_name(text: str) -> bool:
    """A single person's name, loosely: for a block whose position says it is the author line."""
    return "·" not in text and _is_name(_clean_name(text))
