"""Corpus statistics: counts of field values, and the abstracts' most distinctive terms."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from math import log
from operator import mul, truediv
from struct import Struct
from typing import Any

from ..model import Paper


def count_by(papers: Iterable[Paper], attribute: str) -> list[tuple[str, int]]:
    """How many papers have each value of ``attribute`` (each element of a tuple), commonest
    first, then alphabetically."""
    counter: Counter[str] = Counter()
    for paper in papers:
        value = getattr(paper, attribute)
        counter.update(value if isinstance(value, tuple) else [value] if value else [])
    return ranked(counter)


def ranked(counter: Mapping[Any, int], top: int | None = None) -> list[tuple[Any, int]]:
    """A counter's values with their counts, commonest first, then in order of value (sorted
    by value, then stably by count: plain values compare faster than (count, value) keys);
    the first ``top`` of them only, if given: only the values counted at least as often as
    the ``top``-th are sorted (a dozen of 164,000 authors, instead of every one)."""
    if top is not None and top < len(counter):
        from heapq import nlargest

        least = nlargest(top, counter.values())[-1] if top > 0 else max(counter.values()) + 1
        return ranked({v: n for v, n in counter.items() if n >= least})[:top]
    values = sorted(counter)
    values.sort(key=counter.__getitem__, reverse=True)
    return list(zip(values, map(counter.__getitem__, values), strict=True))


#: Each list of a statistics result with the record field it counts.
COUNTS = {
    "topics": "topic",
    "categories": "categories",
    "authors": "authors",
    "years": "year",
    "venues": "venue",
    "tags": "tags",
}


#: The lists of a statistics result: (value, count) pairs, and (term, score) for ``terms``.
COUNTED = ("topics", "categories", "authors", "years", "venues", "tags")


def stats_from_json(value: Any) -> dict[str, Any] | None:
    """A statistics result as it was kept (``memo``), its pairs tuples again; None when the
    value is not one (a damaged or foreign file: computed again)."""
    if not isinstance(value, dict) or set(value) != {"papers", "terms", *COUNTED}:
        return None
    if not isinstance(value["papers"], int):
        return None
    out: dict[str, Any] = {"papers": value["papers"]}
    for name in COUNTED:
        out[name] = _pairs(value[name], (str, int), int)
    out["terms"] = _pairs(value["terms"], str, (int, float))
    if any(out[name] is None for name in (*COUNTED, "terms")):
        return None
    out["terms"] = [(term, float(score)) for term, score in out["terms"]]
    return out


def _pairs(value: Any, first: Any, second: Any) -> list[tuple[Any, Any]] | None:
    if not isinstance(value, list):
        return None
    pairs = [tuple(item) for item in value if isinstance(item, list) and len(item) == 2]
    ok = len(pairs) == len(value) and all(
        isinstance(a, first) and isinstance(b, second) and not isinstance(b, bool) for a, b in pairs
    )
    return pairs if ok else None


def distinctive_terms(
    reader: Any, counts: Sequence[Mapping[str, int]], number: int
) -> list[tuple[str, float]]:
    """The abstracts' ``number`` most distinctive terms (tf-idf, from Whoosh's ``reader``), each
    shown as its commonest spelling in ``counts`` (word -> count maps, such as each file's,
    summed)."""
    stems = most_distinctive(reader, "abstract", number * 3)
    texts = [term.decode("utf-8") if isinstance(term, bytes) else term for _, term in stems]
    spelled = spellings(set(texts), counts)
    out = []
    for (score, _), text in zip(stems, texts, strict=True):
        if len(text) > 2 and not text.isdigit():
            out.append((spelled.get(text, text), float(score)))
    return out[:number]


def spellings(stems: set[str], counts: Sequence[Mapping[str, int]]) -> dict[str, str]:
    """Each of ``stems`` that is the stem of a word ``counts`` count more than once in all
    (summed), with its commonest such word; among equals, the one counted first (in the order
    of ``counts``, then of each map), as when every count was summed. Only the distinct words
    are stemmed, and only the counts of the words of ``stems`` summed (summing all 567,000 word
    counts of the files of 75,000 papers took as long as the rest of the terms)."""
    from .analysis import stemmed_to

    found = stemmed_to(stems, set().union(*counts))
    totals = {word: sum(c.get(word, 0) for c in counts) for word in found}
    most: dict[str, list[str]] = {}  # stem -> its words counted most
    for word, total in totals.items():
        top = most.get(found[word])
        if total < 2 or top is not None and total < totals[top[0]]:
            continue
        if top is None or total > totals[top[0]]:
            most[found[word]] = [word]
        else:
            top.append(word)
    return {stem: _first_counted(words, counts) for stem, words in most.items()}


def _first_counted(words: list[str], counts: Sequence[Mapping[str, int]]) -> str:
    """Which of ``words`` comes first in ``counts`` (the first map with any, then its order)."""
    if len(words) == 1:
        return words[0]
    wanted = set(words)
    first = next(each for each in counts if not wanted.isdisjoint(each))
    return next(filter(wanted.__contains__, first))


def most_distinctive(reader: Any, field: str, number: int) -> list[tuple[float, Any]]:
    """What Whoosh's ``reader.most_distinctive_terms(field, number)`` gives, (score, term)
    pairs: a term's frequency times log(documents / its document frequency), the largest first.
    Whoosh looks every term of a many-segment index up again in each segment (about 100 µs a
    term, 11 s for the 102,000 abstract terms of 75,000 papers); here each segment's terms are
    read once, in order, with their statistics, and summed as Whoosh sums them."""
    from heapq import nlargest

    weights: dict[Any, float] = {}
    counts: dict[Any, int] = {}  # in the order of weights: each term is put in both at once
    for leaf, _ in reader.leaf_readers():
        for text, weight, count in _field_items(leaf, field):
            if text in weights:
                weights[text] += weight
                counts[text] += count
            else:
                weights[text] = weight
                counts[text] = count
    idf = map(log, map(truediv, repeat(float(reader.doc_count())), counts.values()))
    return nlargest(number, zip(map(mul, weights.values(), idf), weights, strict=True))


def _field_items(reader: Any, field: str) -> Iterator[tuple[Any, float, int]]:
    """(term, weight, document frequency) of one segment's ``field``: its part of the terms
    table read at once and its entries unpacked here, where the codec is Whoosh 2.7's (the
    table's entries one by one cost two small reads each, 0.25 s for 13,000 terms); else
    through the reader's public ``iter_field``."""
    from whoosh.filedb.filetables import OrderedHashReader

    terms = getattr(reader, "_terms", None)
    table = getattr(terms, "_tindex", None)
    fieldmap = getattr(terms, "_fieldmap", None)
    if not isinstance(table, OrderedHashReader) or not isinstance(fieldmap, dict):
        for text, info in reader.iter_field(field):
            yield text, info.weight(), info.doc_frequency()
        return
    if field not in fieldmap:
        return
    start, end = (_key_pos(table, fieldmap[field] + n) for n in (0, 1))
    data = table.dbfile.get(start, end - start)
    yield from _entries(data, _KEY.pack(fieldmap[field]))


_KEY = Struct("!H")  # a term's key: its field's number, then the term's bytes
_ENTRY = Struct("!ii")  # an entry of the terms table: key length, value length
_INFO = Struct("!xfI")  # the start of a term's value: flags, total weight, document frequency


def _key_pos(table: Any, number: int) -> int:
    """Where the terms of field ``number`` and after start in the table (its end if none)."""
    pos = table.closest_key_pos(_KEY.pack(number)) if number < 65535 else None
    return int(table.endofdata if pos is None else pos)


def _entries(data: bytes, prefix: bytes) -> Iterator[tuple[bytes, float, int]]:
    """(term, weight, document frequency) of the terms table entries in ``data``, each key
    starting with ``prefix``; ``ValueError`` for entries that cannot be (a damaged file)."""
    pos, end, size = 0, len(data), len(prefix)
    entry, info, least = _ENTRY.unpack_from, _INFO.unpack_from, _INFO.size
    while pos < end:
        keylen, valuelen = entry(data, pos)
        key = pos + _ENTRY.size
        if keylen < size or valuelen < least or key + keylen + valuelen > end:
            raise ValueError("a damaged terms table")
        if not data.startswith(prefix, key):
            raise ValueError("a term of another field in the field's terms")
        weight, count = info(data, key + keylen)
        yield data[key + size : key + keylen], weight, count
        pos = key + keylen + valuelen


def without_latex(
    terms: list[tuple[str, float]], commands: Counter[str], abstracts: Iterable[str]
) -> list[tuple[str, float]]:
    """``terms`` without LaTeX command names (``sigma`` from ``$\\sigma_k$``, ``mathcal``): words
    that stand as ``\\word`` in at least half the abstracts that contain them. ``commands``:
    in how many abstracts each command name (lower-cased) stands; ``abstracts``: all of them,
    read only as far as needed (in any order: the answer is the same)."""
    wanted = {word.lower() for word, _ in terms}
    as_command = Counter({word: commands[word] for word in wanted if commands[word]})
    if not as_command:
        return terms
    anywhere = _counted_until_kept(as_command, abstracts)
    return [
        (w, s)
        for w, s in terms
        if not as_command[w.lower()] or as_command[w.lower()] * 2 < anywhere[w.lower()]
    ]


def _counted_until_kept(as_command: Counter[str], abstracts: Iterable[str]) -> Counter[str]:
    """For each word, the abstracts it stands in as a whole word, counted until it stands in
    more than twice the abstracts it is a command in (it is kept then, whatever the rest say):
    a common word (``text`` of ``\\text{}``) is decided in the first few hundred abstracts."""
    whole = {w: re.compile(rf"(?<![a-z]){w}(?![a-z])") for w in as_command}
    pending = set(as_command)
    anywhere: Counter[str] = Counter()
    for abstract in abstracts:
        lowered = abstract.lower()
        for word in [w for w in pending if w in lowered and whole[w].search(lowered)]:
            anywhere[word] += 1
            if anywhere[word] > 2 * as_command[word]:
                pending.discard(word)
        if not pending:
            break
    return anywhere
