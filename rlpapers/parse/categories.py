"""Category lines: recognised by their separator.

``·`` or ``•`` separates parts of any kind (``Deep Learning · Planning``, ``cs.HC · I.2; K.4``).
`` - ``, ``;``, ``|`` and ``/`` separate codes (arXiv ``cs.RO``, ACM ``I.2.7``, MSC ``68T05``):
they count only in a line that starts with a code, then the separator, and where another part
starts with a code or an MSC class number (``cs.RO - cs.AI``, ``cs.CL; 68; I.2.7``). So
``Reinforcement Learning - a reading list`` and ``cs.LG - Reading list`` stay headings. A line
uses one separator, the one after its first code: ``cs.CV - cs.AI - I.2.10; I.4.8`` has the
parts ``cs.CV``, ``cs.AI`` and ``I.2.10; I.4.8``. Every check here is one pass over the line.
"""

from __future__ import annotations

import re

# An arXiv category code (``cs.LG``, ``quant-ph``, ``physics.soc-ph``): a line that starts with
# one and goes on with ``·`` is a category line however long, with MSC/ACM classes after it.
ARXIV = re.compile(
    r"(?:cs|math|stat|eess|econ|q-bio|q-fin|physics|astro-ph|cond-mat|nlin|gr-qc|hep-ex|hep-lat"
    r"|hep-ph|hep-th|math-ph|nucl-ex|nucl-th|quant-ph)(?:\.[A-Za-z][A-Za-z-]*)?"
)
_ACM = r"[A-K]\.(?:\d{1,2}|m)(?:\.(?:\d{1,2}|m))*"  # ACM 1998: I.2, I.2.7, I.4.m, K.4.1
_MSC = r"\d\d[A-Z-](?:\d\d|xx|XX)"  # MSC 2020: 68T05, 68Txx, 62-08
CODE = re.compile(rf"(?:{ARXIV.pattern}|{_ACM}|{_MSC})\.?")  # ``I.2.7.`` may end a line
# A part that starts with a code, or with an MSC class written short (``68``, ``68T5``)
_CLASS = re.compile(rf"(?:{CODE.pattern}|\d\d(?:[A-Z-]|\b))(?![\w.])|\d\d[A-Z-]")
_LEAD = re.compile(rf"(?:{CODE.pattern})(?:\s*[·•]|\s*$|(\s+[-–—]\s+|\s*[;|/]\s*))")
_SPLIT = {
    "-": re.compile(r"\s+[-–—]\s+"),
    ";": re.compile(r"\s*;\s*"),
    "|": re.compile(r"\s*\|\s*"),
    "/": re.compile(r"\s*/\s*"),
}
_DOT_SEP = re.compile(r"\s*[·•]\s*|\s+>\s+|\s+\|\s+")
_SENTENCE_END = re.compile(r"[.!?。！？]\s*$")


def starts_category_line(text: str) -> bool:
    """Starts with a code, then ``·`` or the end of the line, or a separator of codes (see the
    module's docstring): a category line however long and however it ends."""
    match = _LEAD.match(text)
    return match is not None and (match.group(1) is None or _code_parts(text) is not None)


def is_category_line(text: str) -> bool:
    """Recognised by its separator: codes separated by `` - ``, ``;``, ``|`` or ``/``; parts
    separated by ``·`` (at most 200 characters unless it starts with a code, not a sentence);
    or one arXiv code alone (``cs.CV``)."""
    if starts_category_line(text):
        parts = split_categories(text)
        return len(parts) == 1 and ARXIV.fullmatch(parts[0]) is not None or len(parts) >= 2
    if len(text) > 200 or _SENTENCE_END.search(text) or "·" not in text and "•" not in text:
        return False
    parts = split_categories(text)
    return len(parts) >= 2 and all(len(p.split()) <= 8 for p in parts)


def split_categories(text: str) -> list[str]:
    """The parts of a category line, at its separator (see the module's docstring)."""
    if "·" not in text and "•" not in text:
        parts = _code_parts(text)
        if parts is not None:
            return parts
    return [part.strip() for part in _DOT_SEP.split(text) if part.strip()]


def _code_parts(text: str) -> list[str] | None:
    """The parts of a line of codes separated by `` - ``, ``;``, ``|`` or ``/``, or None."""
    match = _LEAD.match(text)
    if match is None or match.group(1) is None:
        return None
    separator = match.group(1).strip()
    parts = [" ".join(part.split()) for part in _SPLIT.get(separator, _SPLIT["-"]).split(text)]
    parts = [part for part in parts if part]
    return parts if any(_CLASS.match(part) for part in parts[1:]) else None


def _is_code(word: str) -> bool:
    return CODE.fullmatch(word.rstrip(",")) is not None


_CODE_LED = re.compile(rf"(?:{CODE.pattern})\s*[-–—;|/,~:+>=*·•]")
_LETTERS = re.compile(r"[^\W\d_]{2}")


def code_led(text: str) -> bool:
    """Starts with a code and a separator of some kind (``cs.RO ~ cs.AI``, ``cs.IR - Information
    retrieval``): a category line that is not recognised, never prose or names."""
    return _CODE_LED.match(text) is not None


def is_prose(text: str) -> bool:
    """Has a word that is not a code: two letters in a row (``Thanks``, ``本文``). A block of
    codes, numbers and signs (``cs.RO ~ cs.AI ~ 68T05``, ``* * *``) is not prose."""
    return any(
        _LETTERS.search(word) and not _is_code(word.strip(",;:.()[]")) for word in text.split()
    )
