"""Where an abstract introduces something: "we propose", "this paper presents", "dubbed".

``CUE`` is the pattern (``names`` reads the candidates after each match, ``titles`` the object
of the first cue that has one). ``cue_matches`` finds exactly what ``CUE.finditer`` finds,
about four times faster: the pattern is case-insensitive and has some thirty alternatives, so
running it at every position of an abstract cost more than anything else in parsing. Every
match begins with one of a few words (``we``, ``our``, ``propos…``, ``dubbed``) or with
``the``/``this``/``and``/``then``/a comma standing before one of a few others (``paper``,
``work``, ``proposed``, ``present``); those are found with ``str.find`` in the lower-cased
text, and the pattern is tried only where they stand, left to right as ``finditer`` does.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CUE_VERB = (
    r"(?:propose|introduce|present|develop|design|build|construct|release|contribute|curate|"
    r"create|establish|offer|unveil|devise|formulate|put\s+forward|describe|open-source|"
    r"collect|assemble|leverage|adopt|employ|explore|investigate|train|launch|report|"
    r"benchmark|implement|pioneer|provide|yield)"
)
CUE = re.compile(
    r"\b(?:(?:we|(?:this|the)\s+(?:\w+\s+)?(?:paper|work|study|article|report)|our\s+(?:paper|work))\s+"
    r"(?:\w+ly\s+|first\s+|then\s+|also\s+|further\s+|therefore\s+|thus\s+|hence\s+|now\s+)?"
    + _CUE_VERB
    + r"(?:s|d|ed|es)?|(?:propos|introduc|present|develop|design|buil)ing|"
    r"(?:,|\band|\bthen)\s+(?:propose|introduce|present|develop)s?(?=\s+(?-i:[A-Z0-9]))|"
    r"(?:introduces|presents|proposes|our|the\s+proposed)(?=\s+(?-i:[A-Z0-9][\w\-]*[A-Z0-9]))|"
    r"(?:dubbed|called|named|termed|coined|namely|referred\s+to\s+as|known\s+as|"
    r"which\s+we\s+(?:call|name|term|dub)|we\s+(?:call|name|term|dub)(?:\s+(?:it|this|them|our\s+\w+))?|"
    r"(?:our|the\s+resulting|the\s+final)\s+(?:proposed\s+|trained\s+|resulting\s+|final\s+)?(?:method|model|framework|approach|system|agent|"
    r"benchmark|dataset|algorithm|pipeline)s?))\b"
    r"\s*[:,]?\s*",
    re.I,
)

#: Words a match can begin with.
_OPENING = (
    "we", "our", "which", "propos", "introduc", "present", "develop", "design", "buil",
    "dubbed", "called", "named", "termed", "coined", "namely", "referred", "known",
)  # fmt: skip
#: Words a match can reach after a word of ``_BEFORE`` and spaces ("the proposed", ", present").
_AFTER = ("propos", "introduc", "present", "develop", "resulting", "final")
#: Words a match can reach after ``the``/``this``, spaces and at most one more word.
_WORK = ("paper", "work", "study", "article", "report")
_BEFORE = (",", "and", "then", "the", "this")
#: Characters that ``re.I`` matches to an ASCII letter though ``str.lower`` does not make them
#: one (dotless i, long s); a text holding one is searched with the pattern itself.
_ODD_CASE = ("\u0131", "\u017f")


@lru_cache(maxsize=8)  # a paper's name and its title read the same abstract's cues
def cue_matches(text: str) -> tuple[re.Match[str], ...]:
    """``tuple(CUE.finditer(text))``."""
    low = text.lower()
    if len(low) != len(text) or any(c in text for c in _ODD_CASE):
        return tuple(CUE.finditer(text))
    found = []
    end = 0
    for start in _starts(low):
        if start >= end and (match := CUE.match(text, start)):
            found.append(match)
            end = match.end()
    return tuple(found)


def _starts(low: str) -> list[int]:
    """Every position where a match may begin (and some where none does), in order."""
    starts: list[int] = []
    find = low.find
    for word in _OPENING:
        at = find(word)
        while at >= 0:
            starts.append(at)
            at = find(word, at + 1)
    for word in _AFTER + _WORK:
        at = find(word)
        while at >= 0:
            starts.extend(_words_before(low, at, word in _WORK))
            at = find(word, at + 1)
    return sorted(set(starts))


def _words_before(low: str, at: int, two: bool) -> list[int]:
    """Where a word of ``_BEFORE`` begins that spaces separate from ``at`` (``two``: or spaces,
    a word and spaces, as in "this short paper")."""
    gap = _space_before(low, at)
    if gap == at:
        return []
    found = [gap - len(w) for w in _BEFORE if low.endswith(w, 0, gap)]
    if two:
        word = gap
        while word > 0 and (low[word - 1].isalnum() or low[word - 1] == "_"):  # what \w matches
            word -= 1
        second = _space_before(low, word)
        if word < gap and second < word:
            found += [second - len(w) for w in _BEFORE if low.endswith(w, 0, second)]
    return found


def _space_before(low: str, at: int) -> int:
    """Where the run of spaces (``\\s``) that ends at ``at`` begins."""
    while at > 0 and low[at - 1].isspace():
        at -= 1
    return at
