"""Spelling suggestions for a query that found nothing: unknown words replaced by the commonest
corpus word within two edits."""

from __future__ import annotations

import re

from ..querylang import lex

#: Most words of a query that gets a suggestion. Each unknown word is compared with the
#: vocabulary (5,000 took 19 to 52 s over 3,000 papers), and the suggestion is the query again:
#: a pasted paragraph gets none.
MAX_WORDS = 20


def suggest(
    query: str, vocab: dict[str, int], unsearched: frozenset[str] = frozenset()
) -> str | None:
    """``query`` with unknown words replaced by the closest words of ``vocab`` (word -> count)
    that are not ``unsearched`` (stop words: "can" for "cars" found nothing either), or None
    when no word changed or the query has more than ``MAX_WORDS`` words."""
    changed = False
    out = query
    words = [lx for lx in lex(query) if lx.kind == "word"]
    if len(words) > MAX_WORDS:
        return None
    for lexeme in reversed(words):
        word = lexeme.text.lower()
        if not re.fullmatch(r"[a-z][a-z\-']{2,}", word) or word in vocab:
            continue
        best = _closest(vocab, word, unsearched)
        if best:
            out = out[: lexeme.pos] + best + out[lexeme.pos + len(lexeme.text) :]
            changed = True
    return out if changed else None


def _closest(vocab: dict[str, int], word: str, unsearched: frozenset[str]) -> str | None:
    """The commonest corpus word within two edits of ``word`` (same first letter), or None."""
    best: tuple[int, int, str] | None = None
    for candidate, count in vocab.items():
        if candidate[0] != word[0] or abs(len(candidate) - len(word)) > 2:
            continue
        if candidate in unsearched:
            continue
        distance = _distance(word, candidate)
        if distance <= 2 and (best is None or (distance, -count, candidate) < best):
            best = (distance, -count, candidate)
    return best[2] if best else None


def _distance(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
