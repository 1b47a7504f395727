"""Corpus statistics: counts of field values, and the abstracts' most distinctive terms."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from ..model import Paper


def count_by(papers: Iterable[Paper], attribute: str) -> list[tuple[str, int]]:
    """How many papers have each value of ``attribute`` (each element of a tuple), commonest
    first, then alphabetically."""
    counter: Counter[str] = Counter()
    for paper in papers:
        value = getattr(paper, attribute)
        counter.update(value if isinstance(value, tuple) else [value] if value else [])
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def distinctive_terms(reader: Any, vocab: dict[str, int], number: int) -> list[tuple[str, float]]:
    """The abstracts' ``number`` most distinctive terms (tf-idf, from Whoosh's ``reader``), each
    shown as its commonest spelling in ``vocab`` (word -> count)."""
    from .analysis import stem_words

    stems = reader.most_distinctive_terms("abstract", number=number * 3)
    spelled: dict[str, tuple[int, str]] = {}
    words = [w for w, c in vocab.items() if c > 1]
    for word, stem in zip(words, stem_words(words), strict=True):
        if vocab[word] > spelled.get(stem, (0, ""))[0]:
            spelled[stem] = (vocab[word], word)
    out = []
    for score, term in stems:
        text = term.decode("utf-8") if isinstance(term, bytes) else term
        if len(text) > 2 and not text.isdigit():
            out.append((spelled.get(text, (0, text))[1], float(score)))
    return out[:number]


def without_latex(
    terms: list[tuple[str, float]], papers: Sequence[Paper]
) -> list[tuple[str, float]]:
    """``terms`` without LaTeX command names (``sigma`` from ``$\\sigma_k$``, ``mathcal``): words
    that stand as ``\\word`` in at least half the abstracts that contain them."""
    wanted = {word.lower() for word, _ in terms}
    as_command: Counter[str] = Counter()
    with_backslash = [p.abstract for p in papers if "\\" in p.abstract]
    for abstract in with_backslash:
        as_command.update({c.lower() for c in re.findall(r"\\([A-Za-z]+)", abstract)} & wanted)
    if not as_command:
        return terms
    whole = {w: re.compile(rf"(?<![a-z]){w}(?![a-z])") for w in as_command}
    anywhere: Counter[str] = Counter()
    for paper in papers:
        lowered = paper.abstract.lower()
        anywhere.update(w for w in as_command if w in lowered and whole[w].search(lowered))
    return [
        (w, s)
        for w, s in terms
        if not as_command[w.lower()] or as_command[w.lower()] * 2 < anywhere[w.lower()]
    ]
