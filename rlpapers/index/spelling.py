"""Spelling suggestions for a query that found nothing: unknown words replaced by the commonest
corpus word within two edits."""

from __future__ import annotations

import re

from ..querylang import lex


def suggest(query: str, vocab: dict[str, int]) -> str | None:
    """``query`` with unknown words replaced by the closest words of ``vocab`` (word -> count),
    or None when no word changed."""
    changed = False
    out = query
    for lexeme in reversed([lx for lx in lex(query) if lx.kind == "word"]):
        word = lexeme.text.lower()
        if not re.fullmatch(r"[a-z][a-z\-']{2,}", word) or word in vocab:
            continue
        best = _closest(vocab, word)
        if best:
            out = out[: lexeme.pos] + best + out[lexeme.pos + len(lexeme.text) :]
            changed = True
    return out if changed else None


def _closest(vocab: dict[str, int], word: str) -> str | None:
    """The commonest corpus word within two edits of ``word`` (same first letter), or None."""
    best: tuple[int, int, str] | None = None
    for candidate, count in vocab.items():
        if candidate[0] != word[0] or abs(len(candidate) - len(word)) > 2:
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
