"""Ranking: how matches are scored, and the re-ranking of the best of them.

Scores are BM25 as Lucene and bm25s compute it, per field: ``idf = ln(1 + (N - df + 0.5) /
(df + 0.5))`` (never negative, unlike classic BM25's), term frequency saturated by ``K1`` and
normalised by the field's length against its average (``B``). A field's weight multiplies its
score. Whoosh's own BM25F differs: its idf is ``ln(N / (df + 1)) + 1``, which lifts common words,
and its field boosts multiply the term frequency before saturation, where they count for little.

A title's and a name's words are weighed with the abstract's idf (``SHARED_IDF``), as BM25F
gives a word one idf and lets the fields weigh only how often it occurs: with an idf of its own,
a word common in abstracts but rare in titles ("language" in "... for large language models")
made a title match count many times an abstract match, and a derived title, a copy of abstract
words, counted the same evidence twice. With one idf, the field weights (``schema.BOOSTS``)
say what a match is worth: the title's 0.75 of the abstract's (its words are most often in the
abstract too, and each field adds its own score), the name's half.

A word the query repeats weighs more, with BM25's query-term saturation (``K3``): a request
of several sentences names its subject more than once, its passing words once.

A plain query loses its function words first (``QUERY_STOP_WORDS``: "what", "must", "which"…):
a question-like query otherwise ranks papers by how many of them they share. Then the best
``RERANK_WINDOW`` candidates get two proximity bonuses: the query's words as a phrase or all close
together (``snippets.proximity_factor``), and a smaller one for each pair of consecutive query
words that stand within ``PAIR_WIDTH`` words of each other, weighted by the pair's idf.
benchmarks/relevance.py measures each of these; docs/search-quality.md has the figures.
"""

from __future__ import annotations

from math import log
from typing import Any

from whoosh.scoring import WeightingModel, WeightLengthScorer, WeightScorer

from ..config import RERANK_WINDOW
from ..model import Paper
from .analysis import fast_terms
from .snippets import proximity_factor

K1 = 1.5
B = 0.75
#: How a word that a query repeats weighs: ``(K3 + 1) * qf / (K3 + qf)`` times a word said once
#: (BM25's query-term saturation; 0 counts every word once, a large value as often as said).
#: 8, Robertson's usual value, did as well as any on the odd Cranfield and CISI queries pooled
#: (``benchmarks/relevance.py --set ranking.K3=VALUE`` compares another).
K3 = 8.0
#: Fields whose words take the idf of another field's: the larger of the two document frequencies.
SHARED_IDF = {"title": "abstract", "name": "abstract"}
PAIR_BONUS = 0.4
PAIR_WIDTH = 4

#: Words dropped from a plain query (while another word remains): pronouns, question words,
#: auxiliaries and prepositions, and the words of a request ("i am interested in articles
#: dealing with ..."): the kinds of text asked for, and verbs and links of asking. Words that
#: name a subject in some field stay: "list", "report", "work", "information", "study", and in
#: this one "reference" (a reference policy or model), "document" (document retrieval),
#: "seek" (hide and seek), "deal".
QUERY_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves i'm i'd
    what which who whom whose when where why how whether this that these those
    am is are was were be been being have has had having do does did doing
    can could may might must shall should will would
    a an the and but if or because as until while than so also any such there here then
    of at by for with about against between into through during before after above below to
    from in on upon within without among
    article articles paper papers literature publication publications
    interested exist exists available please find give like want need looking
    dealing concerning regarding pertaining discuss discusses discussing
    """.split()
)


class BM25(WeightingModel):
    """Lucene's BM25 per field, each field's score multiplied by its weight."""

    def __init__(
        self, weights: dict[str, float], k1: float | None = None, b: float | None = None
    ) -> None:
        self.weights = weights
        # read when made, not when this module was imported: ``relevance.py --set ranking.K1=``
        self.k1 = K1 if k1 is None else k1
        self.b = B if b is None else b

    def supports_block_quality(self) -> bool:
        return True

    def scorer(self, searcher: Any, fieldname: str, text: Any, qf: float = 1) -> Any:
        if not searcher.schema[fieldname].scorable:
            return WeightScorer.for_(searcher, fieldname, text)
        weight = self.weights.get(fieldname, 1.0) * query_weight(qf)
        return _Scorer(searcher, fieldname, text, weight, self.k1, self.b)


def query_weight(qf: float) -> float:
    """A query word's weight when the query says it ``qf`` times (``K3``); a fraction of once
    (an added feedback term, ``feedback``) weighs that fraction."""
    return (K3 + 1) * qf / (K3 + qf) if qf > 1 else qf


class _Scorer(WeightLengthScorer):
    def __init__(  # Whoosh's scorer protocol plus the model's settings
        self, searcher: Any, fieldname: str, text: Any, weight: float, k1: float, b: float
    ) -> None:
        parent = searcher.get_parent()  # collection statistics come from the top searcher
        docs = parent.doc_count_all()
        found = parent.doc_frequency(fieldname, text)
        if fieldname in SHARED_IDF:
            found = max(found, parent.doc_frequency(SHARED_IDF[fieldname], text))
        self.idf = weight * log(1 + (docs - found + 0.5) / (found + 0.5))
        self.avgfl = parent.avg_field_length(fieldname) or 1.0
        self.k1 = k1
        self.b = b
        self.setup(searcher, fieldname, text)
        lengths = _length_bytes(searcher.reader(), fieldname)
        if lengths is not None:
            self.lengths = lengths
            self.norms = _norms(k1, b, self.avgfl)
            self.score = self._score_from_bytes  # instead of Whoosh's read per document

    def _score(self, weight: float, length: float) -> float:
        norm = self.k1 * (1 - self.b + self.b * length / self.avgfl)
        return float(self.idf * weight * (self.k1 + 1) / (weight + norm))

    def _score_from_bytes(self, matcher: Any) -> float:
        """``score``, the field length read from the segment's length bytes held in memory
        (Whoosh reads the one byte from the file for every document scored): the same norm as
        ``_score`` computes, taken from a table of the 256 lengths a byte stands for."""
        weight = matcher.weight()
        docnum = matcher.id()
        lbyte = self.lengths[docnum] if docnum < len(self.lengths) else 0
        if not lbyte:  # Whoosh's doc_field_length gives None here, and _score fails on it
            return self._score(weight, self.dfl(docnum))
        return float(self.idf * weight * (self.k1 + 1) / (weight + self.norms[lbyte]))


_NORMS: dict[tuple[float, float, float], list[float]] = {}


def _norms(k1: float, b: float, avgfl: float) -> list[float]:
    """``_Scorer._score``'s length norm for each of the 256 field lengths Whoosh stores."""
    key = (k1, b, avgfl)
    if key not in _NORMS:
        from whoosh.util.numeric import byte_to_length

        _NORMS[key] = [k1 * (1 - b + b * byte_to_length(i) / avgfl) for i in range(256)]
    return _NORMS[key]


def _length_bytes(reader: Any, fieldname: str) -> bytes | None:
    """A segment's length byte for every document in ``fieldname``, read once (one read of
    about a byte per document) and kept with Whoosh's column reader; None if this Whoosh stores
    lengths some other way (then scoring reads them per document, as Whoosh does)."""
    try:
        from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield

        column = reader._perdoc._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
        if column is None or column._fixedlen != 1 or column._typecode != "B":
            return None
        cached = getattr(column, "_rlpapers_lengths", None)
        if cached is None:
            cached = column._dbfile.get(column._basepos, column._count)
            column._rlpapers_lengths = cached
        return bytes(cached) if not isinstance(cached, bytes) else cached
    except (AttributeError, ImportError, TypeError):
        return None


def rerank(
    hits: list[tuple[Paper, float]], terms: list[str], reader: Any, window: int = RERANK_WINDOW
) -> list[tuple[Paper, float]]:
    """The first ``window`` hits re-ordered by score times proximity bonuses (stable for ties),
    then the rest as they were: every score in the window stays at or above theirs."""
    if window <= 0:
        return hits
    pairs = _pairs(terms, reader)
    best = []
    for paper, score in hits[:window]:
        scans = _Scans(set(terms))  # each of the paper's texts tokenised at most once
        factor = proximity_factor(paper, terms, scans.positions)
        best.append((paper, score * factor * _pair_factor(paper, terms, pairs, scans)))
    return sorted(best, key=lambda hit: -hit[1]) + hits[window:]


class _Scans:
    """Where the wanted terms stand in a text, and how many terms it has, per text (cached)."""

    def __init__(self, wanted: set[str]) -> None:
        self.wanted = wanted
        self.done: dict[str, tuple[dict[str, list[int]], int]] = {}

    def scan(self, text: str) -> tuple[dict[str, list[int]], int]:
        if text not in self.done:
            terms = fast_terms(text)
            positions: dict[str, list[int]] = {}
            for pos, (term, _, _) in enumerate(terms):
                if term in self.wanted:
                    positions.setdefault(term, []).append(pos)
            self.done[text] = (positions, len(terms))
        return self.done[text]

    def positions(self, text: str, wanted: set[str]) -> dict[str, list[int]]:
        """``snippets.term_positions``, for the same ``wanted`` terms as this cache's."""
        return self.scan(text)[0]

    def joined(self, first: str, second: str) -> dict[str, list[int]]:
        """``term_positions(f"{first} . {second}")`` from the two texts' scans: no token spans
        the " . " between them, so the second text's positions follow the first's terms."""
        head, count = self.scan(first)
        tail, _ = self.scan(second)
        out = {term: list(places) for term, places in head.items()}
        for term, places in tail.items():
            out.setdefault(term, []).extend(pos + count for pos in places)
        return out


def idf(reader: Any, fieldname: str, text: str) -> float:
    docs, found = reader.doc_count_all(), reader.doc_frequency(fieldname, text)
    return log(1 + (docs - found + 0.5) / (found + 0.5))


def _pairs(terms: list[str], reader: Any) -> list[tuple[str, str, float]]:
    """Consecutive pairs of query terms, each with its share of the pairs' idf."""
    weights = {term: idf(reader, "abstract", term) for term in set(terms)}
    pairs = [(a, b, weights[a] + weights[b]) for a, b in zip(terms, terms[1:], strict=False)]
    pairs = [pair for pair in pairs if pair[0] != pair[1]]
    total = sum(weight for _, _, weight in pairs) or 1.0
    return [(a, b, weight / total) for a, b, weight in pairs]


def _pair_factor(
    paper: Paper, terms: list[str], pairs: list[tuple[str, str, float]], scans: _Scans
) -> float:
    """1 plus ``PAIR_BONUS`` times the idf share of the pairs standing within ``PAIR_WIDTH``,
    in the title and abstract read as one text ("title . abstract")."""
    if not pairs:
        return 1.0
    lowered = f"{paper.title} . {paper.abstract}".lower()
    if sum(not term.isascii() or term[:4] in lowered for term in set(terms)) < 2:
        return 1.0  # no pair can stand close: no need to tokenise
    positions = scans.joined(paper.title, paper.abstract)
    near = sum(
        share
        for a, b, share in pairs
        if a in positions and b in positions and _close(positions[a], positions[b])
    )
    return 1.0 + PAIR_BONUS * near


def _close(first: list[int], second: list[int]) -> bool:
    return any(abs(x - y) <= PAIR_WIDTH for x in first for y in second)
