"""Telling an edited paper from a new one, from what the identity ledger keeps.

A paper's content id is a hash of its abstract, so fixing a typo gives a new content id. The
ledger keeps, for every paper it ever gave an id, a fingerprint of the latest text it saw for
it (``fingerprint``: at most ``PRINT_WORDS`` word hashes, about 0.5 KiB) and where that text
stood (file and position). When a refresh finds abstracts the ledger has never seen, each
newcomer is compared with the papers that are absent from the corpus now, and takes over an
absent paper's id and key when

- their word sets overlap by at least ``SMALL_EDIT`` (Jaccard similarity: a typo, a sentence
  added or dropped, a reworded clause), or
- it stands where that paper last stood (the same file, the n-th paper of it) and they overlap
  by at least ``IN_PLACE``.

Everything compared lives in the ledger, so the outcome never depends on state that can be
rebuilt: clearing the index folder, or a run over another corpus in between, matches an edit
the same way.

Words are compared in lower case, and only words of three letters or more. A fingerprint is
the ``PRINT_WORDS`` smallest CRC-32 values of a text's distinct words (a bottom-k sketch): for
texts with fewer distinct words it is the whole set and the overlap is exact; for longer ones
it is the standard estimate from the smallest values of the union.

Pairs are taken best first, each paper at most once. A newcomer is compared only with the
absent papers that share several of their smallest hashes with it (a common word proposes
nothing), and with the one that stood in its place: an edit shares most of them, an unrelated
paper almost none, so comparing stays near linear when whole files come and go.
"""

from __future__ import annotations

import re
import zlib
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

SMALL_EDIT = 0.8
IN_PLACE = 0.6
PRINT_WORDS = 128  # word hashes kept per paper: 512 bytes at most
_INDEXED = 16  # an absent paper's smallest hashes that propose it as a candidate
_HITS = 3  # of those, how many a newcomer must share to be compared with it (fewer if it has few)
_COMMON = 20  # a word in more than one in this many absent papers proposes nothing
_WORD = re.compile(r"\w{3,}")  # words of three letters or more: "a", "we", "it" prove nothing


def fingerprint(text: str) -> bytes:
    """The smallest ``PRINT_WORDS`` CRC-32 values of ``text``'s distinct words, ascending, as
    little-endian 32-bit integers. CRC-32 is fixed by its standard, so a fingerprint written
    by one run (or one machine) compares with one made by any other."""
    words = set(_WORD.findall(text.lower()))
    hashes = sorted(map(zlib.crc32, map(str.encode, words)))[:PRINT_WORDS]
    return _little(array("I", hashes)).tobytes()


def hashes(print_: bytes) -> frozenset[int]:
    """The word hashes of a fingerprint."""
    values = array("I")
    values.frombytes(print_[: len(print_) - len(print_) % 4])
    return frozenset(_little(values))


def _little(values: array[int]) -> array[int]:
    import sys

    if sys.byteorder == "big":  # pragma: no cover - stored little-endian everywhere
        values.byteswap()
    return values


def similarity(a: frozenset[int], b: frozenset[int]) -> float:
    """The Jaccard similarity of the word sets behind two fingerprints (exact when both hold
    fewer than ``PRINT_WORDS`` words, the bottom-k estimate otherwise)."""
    if not a and not b:
        return 1.0
    union = sorted(a | b)[:PRINT_WORDS]
    shared = sum(1 for h in union if h in a and h in b)
    return shared / len(union)


@dataclass(frozen=True)
class Version:
    """One text as it stands (a newcomer) or last stood (an absent paper)."""

    ref: str  # a content id (newcomer) or a paper id (absent)
    file: str
    ordinal: int
    words: frozenset[int]  # ``hashes`` of its fingerprint


def match_edits(newcomers: Iterable[Version], absent: Iterable[Version]) -> dict[str, str]:
    """Newcomer content id -> the absent paper id it continues."""
    old = list(absent)
    new = list(newcomers)
    if not old or not new:
        return {}
    postings: dict[int, list[int]] = {}
    hits_needed = []
    for i, version in enumerate(old):
        indexed = sorted(version.words)[:_INDEXED]
        hits_needed.append(max(1, min(_HITS, len(indexed) // 4)))
        for h in indexed:
            postings.setdefault(h, []).append(i)
    common = max(50, len(old) // _COMMON)
    place = {(v.file, v.ordinal): i for i, v in enumerate(old)}
    pairs: list[tuple[float, int, int]] = []
    for j, version in enumerate(new):
        same_place = place.get((version.file, version.ordinal))
        for i in _candidates(version.words, postings, hits_needed, common, same_place):
            score = similarity(version.words, old[i].words)
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


def _candidates(
    words: frozenset[int],
    postings: dict[int, list[int]],
    needed: list[int],
    common: int,
    same: int | None,
) -> set[int]:
    """Absent papers that share at least ``needed`` of their smallest hashes with ``words``,
    counting only hashes fewer than ``common`` absent papers have; and the one that stood in
    the same place."""
    from collections import Counter

    tally: Counter[int] = Counter()
    for h in words:
        found = postings.get(h)
        if found is not None and len(found) <= common:
            tally.update(found)
    out = {i for i, hits in tally.items() if hits >= needed[i]}
    if same is not None:
        out.add(same)
    return out
