"""Telling an edited paper from a new one.

A paper's content id is a hash of its abstract, so fixing a typo gives a new content id. When a
refresh finds abstracts the ledger has never seen while papers of the last refresh are gone, each
newcomer is compared with the vanished papers, and takes over a vanished paper's id and key when

- their word sets overlap by at least ``SMALL_EDIT`` (Jaccard similarity: a typo, a sentence
  added or dropped, a reworded clause), or
- it stands in the same file at the same position (the n-th paper of that file) and they
  overlap by at least ``IN_PLACE``.

Words are compared in lower case, and only words of three letters or more.

Pairs are taken best first, each paper at most once. Candidates come from each newcomer's rarest
words, so comparing stays near linear when whole files come and go.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

SMALL_EDIT = 0.8
IN_PLACE = 0.6
_RARE_WORDS = 8  # how many of a newcomer's rarest words propose candidates
_WORD = re.compile(r"\w{3,}")  # words of three letters or more: "a", "we", "it" prove nothing


@dataclass(frozen=True)
class Version:
    """One abstract as it stands (or stood): which paper, where, and its text."""

    ref: str  # a content id (newcomer) or a paper id (vanished)
    file: str
    ordinal: int
    abstract: str


def match_edits(newcomers: Iterable[Version], vanished: Iterable[Version]) -> dict[str, str]:
    """Newcomer content id -> the vanished paper id it continues."""
    old = list(vanished)
    new = list(newcomers)
    if not old or not new:
        return {}
    old_words = [_words(v.abstract) for v in old]
    postings: dict[str, list[int]] = {}
    for i, words in enumerate(old_words):
        for word in words:
            postings.setdefault(word, []).append(i)
    place = {(v.file, v.ordinal): i for i, v in enumerate(old)}
    pairs: list[tuple[float, int, int]] = []
    for j, version in enumerate(new):
        words = _words(version.abstract)
        rare = sorted((w for w in words if w in postings), key=lambda w: len(postings[w]))
        candidates = {i for w in rare[:_RARE_WORDS] for i in postings[w]}
        same_place = place.get((version.file, version.ordinal))
        if same_place is not None:
            candidates.add(same_place)
        for i in candidates:
            score = _jaccard(words, old_words[i])
            needed = IN_PLACE if i == same_place else SMALL_EDIT
            if score >= needed:
                pairs.append((score, j, i))
    taken_new: set[int] = set()
    taken_old: set[int] = set()
    out: dict[str, str] = {}
    for _, j, i in sorted(pairs, key=lambda p: (-p[0], p[1], p[2])):
        if j in taken_new or i in taken_old:
            continue
        taken_new.add(j)
        taken_old.add(i)
        out[new[j].ref] = old[i].ref
    return out


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)
