"""Term-at-a-time BM25 for plain queries of two or more words: the same scores as Whoosh's
matchers, summed posting list by posting list into one table.

Whoosh scores an OR of words document by document through a tree of union matchers, asking each
node for its best possible score to skip what cannot enter the top k. Its bookkeeping is Python
calls per document and node, and common words leave little to skip: at 75,000 papers "large
language models reasoning" (65,000 matches) took 0.42 s that way, and a 50-word request some
200 terms over the six default fields several seconds. Here each term's postings are read block
by block and scored with the same ``ranking`` scorer (its idf, field weight, query-term weight
and length norms), then the best are taken once. A query of one word keeps Whoosh's matchers,
which are quicker there (they skip the blocks of postings that cannot reach the top k).
docs/performance.md has the figures for the benchmark's queries.

A phrase (a hyphenated word, ``off-policy``) adds its words' scores where they stand together:
its words are summed term at a time too, as a bound, and positions are read only for the
documents whose bound can still reach the best ``limit`` (``_with_phrases``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from math import log
from typing import Any

#: Terms (a word in one field is one term) from which a query is a paragraph, held to the
#: postings budget below; a shorter query is always scored whole (exact BM25).
LONG_QUERY = 40
#: Most abstract postings a long query reads. Reading one costs a few microseconds in Python
#: (Whoosh decompresses and decodes its blocks), and a 300-word query over 75k papers has 1.6
#: million: past this budget the query keeps its most informative words (``select``). Below
#: some 10,000 papers every query fits. Keeping the most informative words loses little
#: quality (docs/search-quality.md has the figures).
POSTINGS_BUDGET = 250_000
#: Most words a query over the budget keeps: each costs its lookups and scorers in six fields
#: (about half a millisecond) and, past the most informative 150, adds little time and little
#: quality. A CISI request (330 words at most) has 114 distinct words; a 3,000-word page about
#: 2,900.
MAX_WORDS = 150
#: Most words of a phrase scored with bounds: ``_phrase_bound`` counts a document's words of the
#: phrase in a byte. A longer one (``rl-rl-…`` 256 times) goes through Whoosh's phrase matcher.
MAX_PHRASE_WORDS = 255


def suits(parsed: Any) -> bool:
    """Whether a plain query is scored here: two or more words, or a hyphenated word."""
    from whoosh.query import Phrase, Term

    leaves = list(parsed.leaves())
    if not leaves or not all(isinstance(leaf, Term | Phrase) for leaf in leaves):
        return False  # nothing to look up (a query of function words), or not plain words
    if any(isinstance(leaf, Phrase) for leaf in leaves):
        return True
    fields = [leaf.fieldname for leaf in leaves]  # a word is one leaf in each field
    return any(fields.count(field) > 1 for field in set(fields))


class Hit:
    """One scored document, read like a Whoosh hit: ``hit["id"]``, ``hit.score``, ``hit.docnum``."""

    __slots__ = ("docnum", "score", "_searcher")

    def __init__(self, searcher: Any, docnum: int, score: float) -> None:
        self._searcher = searcher
        self.docnum = docnum
        self.score = score

    def __getitem__(self, name: str) -> Any:
        return self._searcher.stored_fields(self.docnum)[name]


class Results:
    """Hits best first (ties by document number, as Whoosh orders them), like Whoosh's
    ``Results`` where ``Index`` reads them."""

    def __init__(
        self, searcher: Any, ranked: list[tuple[int, float]], total: int | Callable[[], int]
    ) -> None:
        self.searcher = searcher
        self._hits = [Hit(searcher, docnum, score) for docnum, score in ranked]
        self._total = total  # or how to count them, when a count costs more than the best

    @property
    def total(self) -> int:
        if callable(self._total):
            self._total = self._total()
        return self._total

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._hits)

    def __len__(self) -> int:
        return self.total

    def scored_length(self) -> int:
        return len(self._hits)


def search(searcher: Any, parsed: Any, limit: int | None) -> Results:
    """The best ``limit`` documents for the OR of ``parsed``'s leaves (all with None)."""
    leaves = _scored_leaves(searcher, parsed)
    # every match wanted: Whoosh's phrase matchers read each candidate's positions quicker
    phrases = [leaf for leaf in leaves if limit is not None and _is_phrase(leaf, searcher)]
    totals = accumulate(searcher, [leaf for leaf in leaves if leaf not in phrases])
    if phrases:
        return _with_phrases(searcher, totals, phrases, limit)
    matched = [docnum for docnum, score in enumerate(totals) if score]
    return Results(searcher, best(matched, totals, limit), len(matched))


def count(searcher: Any, parsed: Any) -> int:
    """How many documents ``search`` would find (phrases through Whoosh's matchers: every
    candidate's positions are read anyway)."""
    return sum(1 for score in accumulate(searcher, _scored_leaves(searcher, parsed)) if score)


def _scored_leaves(searcher: Any, parsed: Any) -> list[Any]:
    """The query's leaves, a paragraph's held to the postings budget (``select``)."""
    leaves = list(parsed.leaves())
    return select(searcher, leaves) if len(leaves) >= LONG_QUERY else leaves


def _segments(searcher: Any) -> list[tuple[Any, int]]:
    """(searcher, first document number) of each segment."""
    return searcher.subsearchers if not searcher.is_atomic() else [(searcher, 0)]


def best(docnums: list[int], scores: list[float], limit: int | None) -> list[tuple[int, float]]:
    """The ``limit`` best of ``docnums`` by score (all with None), ties by document number.
    With a limit, the ``limit``-th best score is found first (a heap of plain floats) and only
    the documents that reach it are sorted."""
    if limit is not None and len(docnums) > limit:
        kth = heapq.nlargest(limit, [scores[docnum] for docnum in docnums])[-1]
        docnums = [docnum for docnum in docnums if scores[docnum] >= kth]
    order = sorted(docnums, key=lambda docnum: (-scores[docnum], docnum))[:limit]
    return [(docnum, scores[docnum]) for docnum in order]


def _is_phrase(leaf: Any, searcher: Any) -> bool:
    """A phrase whose field keeps positions (``_with_phrases`` scores it); Whoosh's own matcher
    says what a phrase in another field means."""
    from whoosh.query import Phrase

    if not isinstance(leaf, Phrase) or leaf.fieldname not in searcher.schema:
        return False
    form = searcher.schema[leaf.fieldname].format
    plain = leaf.slop == 1 and leaf.boost == 1 and len(leaf.words) <= MAX_PHRASE_WORDS
    return bool(form and form.supports("positions") and plain)


def select(searcher: Any, leaves: list[Any], budget: int | None = None) -> list[Any]:
    """The leaves of the query's most informative words whose abstract postings fit in
    ``budget`` (``POSTINGS_BUDGET``; a word's title and name postings are fewer, and its
    author, category and topic ones rare): words in order of their weight (idf in the
    abstracts times the query-term weight), each with all its fields, skipping a word that
    would overflow the budget, at most ``MAX_WORDS`` of them. Every leaf when they all fit
    (below some 10,000 papers, about always)."""
    from .ranking import query_weight

    budget = POSTINGS_BUDGET if budget is None else budget
    reader = searcher.reader()
    docs = reader.doc_count_all()
    words: dict[tuple[str, ...], list[Any]] = {}
    for leaf in leaves:
        words.setdefault(_stems_of(leaf), []).append(leaf)
    found = {text: reader.doc_frequency("abstract", text) for word in words for text in word}
    cost = {word: sum(found[text] for text in word) for word in words}
    if sum(cost.values()) <= budget:
        return leaves
    weight = {
        word: max(query_weight(getattr(leaf, "times", 1)) for leaf in group)
        * log(
            1
            + (docs - min(found[text] for text in word) + 0.5)
            / (min(found[text] for text in word) + 0.5)
        )
        for word, group in words.items()
    }
    kept: list[Any] = []
    taken = 0
    for word in sorted(words, key=lambda w: (-weight[w], w)):
        if cost[word] <= budget and taken < MAX_WORDS:
            kept += words[word]
            budget -= cost[word]
            taken += 1
    return kept


def _stems_of(leaf: Any) -> tuple[str, ...]:
    """The abstract terms of the word(s) a leaf looks up (a term's text, a phrase's words):
    a word's leaves in every field, stemmed or not, fall in one group."""
    from .analysis import fast_terms

    words = getattr(leaf, "words", None) or [leaf.text]
    return tuple(term for term, _, _ in fast_terms(" ".join(words))) or tuple(words)


def accumulate(searcher: Any, leaves: list[Any]) -> list[float]:
    """Each document's sum of its leaves' scores, by document number (0.0: no leaf matches;
    a match always scores above 0, every idf being positive)."""
    from whoosh.query import Term

    scores = [0.0] * searcher.doc_count_all()
    pieces = _segments(searcher)
    for leaf in leaves:
        for subsearcher, offset in pieces:
            if isinstance(leaf, Term):
                _add_term(subsearcher, offset, leaf, scores)
            else:
                _add_matcher(leaf.matcher(subsearcher), offset, scores)
    return scores


def _add_term(searcher: Any, offset: int, leaf: Any, scores: list[float]) -> None:
    """``leaf``'s scores in one segment, read a block of postings at a time."""
    add_postings(searcher, offset, leaf.fieldname, leaf.text, getattr(leaf, "times", 1), scores)


def add_postings(
    searcher: Any,
    offset: int,
    fieldname: str,
    word: str,
    times: float,
    scores: list[float],
    seen: bytearray | None = None,
) -> None:
    """The scores of ``word`` in ``fieldname`` (said ``times`` times by the query) added to
    ``scores`` in one segment, a block of postings at a time; ``seen``: a count per document
    of the words found there, kept as well (phrases)."""
    from whoosh.matching.wrappers import FilterMatcher

    field = searcher.schema[fieldname]
    text = field.to_bytes(word)
    reader = searcher.reader()
    if (fieldname, text) not in reader:
        return
    scorer = searcher.weighting.scorer(searcher, fieldname, text, qf=times)
    matcher = reader.postings(fieldname, text)
    deleted: frozenset[int] = frozenset()
    if isinstance(matcher, FilterMatcher):
        deleted, matcher = frozenset(matcher._ids), matcher.child
    lengths, norms = getattr(scorer, "lengths", None), getattr(scorer, "norms", None)
    if lengths is None or norms is None or not hasattr(matcher, "_read_ids"):
        matcher.scorer = scorer
        _add_matcher(matcher, offset, scores, deleted, seen)
        return
    _add_blocks(matcher, scorer, offset, scores, deleted, seen)


def _add_blocks(
    matcher: Any,
    scorer: Any,
    offset: int,
    scores: list[float],
    deleted: frozenset[int],
    seen: bytearray | None,
) -> None:
    """A posting list's scores, a block at a time, with the arithmetic of the scorer's
    ``_score_from_bytes`` (its length norms held in memory), in its order."""
    lengths, norms = scorer.lengths, scorer.norms
    idf, k1p, size = scorer.idf, scorer.k1 + 1, len(lengths)
    plain = not deleted and seen is None  # the common case, in a loop of its own
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        pairs = zip(matcher._ids, matcher._weights, strict=True)
        if plain:
            for docnum, weight in pairs:
                lbyte = lengths[docnum] if docnum < size else 0
                if lbyte:
                    scores[docnum + offset] += idf * weight * k1p / (weight + norms[lbyte])
                else:
                    scores[docnum + offset] += scorer._score(weight, scorer.dfl(docnum))
            matcher._next_block()
            continue
        for docnum, weight in pairs:
            if docnum in deleted:
                continue
            lbyte = lengths[docnum] if docnum < size else 0
            if lbyte:
                score = idf * weight * k1p / (weight + norms[lbyte])
            else:
                score = scorer._score(weight, scorer.dfl(docnum))
            scores[docnum + offset] += score
            if seen is not None:
                seen[docnum + offset] += 1
        matcher._next_block()


def _add_matcher(
    matcher: Any,
    offset: int,
    scores: list[float],
    deleted: frozenset[int] = frozenset(),
    seen: bytearray | None = None,
) -> None:
    """A matcher's scores, posting by posting (postings of another layout, other leaves)."""
    while matcher.is_active():
        docnum = matcher.id()
        if docnum not in deleted:
            scores[docnum + offset] += matcher.score()
            if seen is not None:
                seen[docnum + offset] += 1
        matcher.next()


# --- phrases (a hyphenated word: ``model-based`` is the phrase "model based") -------------------
#
# Whoosh scores a phrase as the sum of its words' scores, in the documents where the words
# stand next to each other, and finds those by reading the words' positions in every document
# that has them all (for ``model-based`` at 75,000 papers: some 20,000 documents). Here the
# words' scores are summed term at a time like any other term's, which gives each document
# that has all the words a bound on what the phrase can add; documents are then taken best
# bound first and their positions read only until no bound left can reach the best ``limit``.


def _with_phrases(
    searcher: Any, totals: list[float], phrases: list[Any], limit: int | None
) -> Results:
    """The best ``limit`` for ``totals`` (the other leaves' scores) plus ``phrases``."""
    bounds = [_phrase_bound(searcher, phrase) for phrase in phrases]
    upper = list(totals)
    for bound in bounds:
        for docnum, score in bound.items():
            upper[docnum] += score
    pending = [(-score, docnum) for docnum, score in enumerate(upper) if score]
    heapq.heapify(pending)
    exact: dict[int, float] = {}
    kept: list[tuple[float, int]] = []  # the best exact (-score, docnum) so far, a max-heap
    batch = max(limit or 0, 16) if limit is not None else len(pending)
    while pending and not _settled(kept, pending, limit):
        taken = [heapq.heappop(pending)[1] for _ in range(min(batch, len(pending)))]
        batch *= 2  # the first bounds are the likeliest; more at a time when they fail
        for docnum, score in _exact_scores(searcher, totals, phrases, bounds, taken).items():
            exact[docnum] = score
            if score and limit is not None:
                heapq.heappush(kept, (score, -docnum))  # the worst kept on top
                if len(kept) > limit:
                    heapq.heappop(kept)
    matched = [docnum for docnum, score in exact.items() if score]
    ranked = best(matched, _table(exact, len(totals)), limit)

    def count() -> int:  # every bound read (a count asks for this; a search does not)
        rest = [docnum for _, docnum in pending]
        scores = _exact_scores(searcher, totals, phrases, bounds, rest)
        return len(matched) + sum(1 for score in scores.values() if score)

    return Results(searcher, ranked, count if pending else len(matched))


def _settled(
    kept: list[tuple[float, int]], pending: list[tuple[float, int]], limit: int | None
) -> bool:
    """Whether no document still pending can enter the best ``limit``: the best pending
    bound is not ahead of the worst kept score (ties go to the lower document number)."""
    if limit is None or len(kept) < limit:
        return False
    worst_score, worst_docnum = kept[0]
    bound, docnum = -pending[0][0], pending[0][1]
    return bound < worst_score or (bound == worst_score and docnum > -worst_docnum)


def _table(scores: dict[int, float], size: int) -> list[float]:
    table = [0.0] * size
    for docnum, score in scores.items():
        table[docnum] = score
    return table


def _phrase_bound(searcher: Any, phrase: Any) -> dict[int, float]:
    """The sum of the phrase's words' scores in each document that has every word."""
    texts = _phrase_texts(searcher, phrase)
    if texts is None:
        return {}  # a word no document has in this field (a name's words in ``author``)
    scores = [0.0] * searcher.doc_count_all()
    seen = bytearray(searcher.doc_count_all())
    pieces = _segments(searcher)
    for subsearcher, offset in pieces:
        for word in phrase.words:
            add_postings(subsearcher, offset, phrase.fieldname, word, 1, scores, seen)
    marks = seen.translate(bytes(int(n == len(texts)) for n in range(256)))  # 1: every word
    bound, docnum = {}, marks.find(1)
    while docnum >= 0:
        bound[docnum] = scores[docnum]
        docnum = marks.find(1, docnum + 1)
    return bound


def _exact_scores(
    searcher: Any,
    totals: list[float],
    phrases: list[Any],
    bounds: list[dict[int, float]],
    docnums: list[int],
) -> dict[int, float]:
    """Each document's exact score: ``totals`` plus each phrase whose words stand together."""
    scores = {docnum: totals[docnum] for docnum in docnums}
    for phrase, bound in zip(phrases, bounds, strict=True):
        maybe = sorted(bound.keys() & scores.keys())
        for docnum in _adjacent(searcher, phrase, maybe):
            scores[docnum] += bound[docnum]
    return scores


def _adjacent(searcher: Any, phrase: Any, docnums: list[int]) -> list[int]:
    """Which of ``docnums`` (ascending, each holding every word) have the words in order,
    next to each other: Whoosh's phrase, slop 1."""
    pieces = _segments(searcher)
    found = []
    for (subsearcher, offset), end in zip(pieces, [o for _, o in pieces[1:]] + [None], strict=True):
        inside = [d - offset for d in docnums if d >= offset and (end is None or d < end)]
        if inside:
            found += [d + offset for d in _adjacent_in(subsearcher, phrase, inside)]
    return found


def _adjacent_in(searcher: Any, phrase: Any, docnums: list[int]) -> list[int]:
    texts = _phrase_texts(searcher, phrase)
    if texts is None:
        return []
    matchers = [searcher.reader().postings(phrase.fieldname, text) for text in texts]
    found = []
    for docnum in docnums:
        places = []
        for matcher in matchers:
            matcher.skip_to(docnum)
            if not matcher.is_active() or matcher.id() != docnum:
                break
            places.append(set(matcher.value_as("positions")))
        else:
            if any(all(p + i in places[i] for i in range(1, len(places))) for p in places[0]):
                found.append(docnum)
    return found


def _phrase_texts(searcher: Any, phrase: Any) -> list[bytes] | None:
    """The phrase's words as the index holds them, or None when a word is not in its field
    (in this searcher's documents)."""
    field = searcher.schema[phrase.fieldname]
    reader = searcher.reader()
    texts = [field.to_bytes(word) for word in phrase.words]
    return texts if all((phrase.fieldname, text) in reader for text in texts) else None
