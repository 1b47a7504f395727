"""A checked query (``rlpapers.querylang``) made into a Whoosh query: plain words built directly,
with query-term counts and without function words; the rest of the language through Whoosh's
parser, with its field aliases, signs, families and bounded fuzzy terms."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from ..errors import QueryError
from ..querylang import (
    _SIGN,
    ALIASES,
    DEFAULT_FIELDS,
    Lexeme,
    check,
    family,
    is_plain,
    plain_words,
)


def parse(
    query: str, schema: Any, lexemes: Sequence[Lexeme] | None = None
) -> tuple[Any, Sequence[Lexeme]]:
    """A Whoosh query object for ``query``, plain words OR-ed, and the lexemes it was made
    from; ``lexemes``: ``check(query)``'s, when the caller has them (a ``SearchRequest``).

    Plain words are looked up without Whoosh's parser (``plain_query``); the query language
    (fields, operators, phrases, wildcards, ranges) is Whoosh's, so its parser reads the query
    text, after ``check`` refused what it would misread.
    Not ``OrGroup.factory(...)``: its scaled scores break Whoosh's top-k collection (a limited
    search then misses hits that an unlimited one ranks higher).
    """
    query, lexemes = _without_stop_words(query, check(query) if lexemes is None else lexemes)
    if _reads_as_words(lexemes):  # Whoosh's parser is not even imported (6 ms of a start)
        return plain_query(plain_words(lexemes), schema), lexemes
    from whoosh import qparser

    parser = qparser.MultifieldParser(list(DEFAULT_FIELDS), schema, group=qparser.OrGroup)
    parser.replace_plugin(qparser.MultifieldPlugin(list(DEFAULT_FIELDS), group=_fields_group()))
    parser.add_plugin(_fuzzy_plugin())
    parser.add_plugin(qparser.FieldAliasPlugin(ALIASES))
    parser.add_plugin(_signs())
    parser.remove_plugin_class(qparser.BoostPlugin)
    try:
        parsed = parser.parse(_lowercase_fields(_families(query, lexemes)))
    except Exception as error:  # Whoosh's own complaint, kept short
        raise QueryError(str(error) or type(error).__name__, query, None) from None
    return _shallow_ands(_bounded_phrases(_and_not(parsed))), lexemes


def _reads_as_words(lexemes: Sequence[Lexeme]) -> bool:
    """Whether Whoosh's parser would read ``lexemes`` as plain words: a plain query without
    its range brackets or its quotes at a word's edge (``[a TO b]``, ``'a b'``)."""
    return is_plain(lexemes) and not any(
        _PARSER_MARKS.search(lx.text) for lx in lexemes if lx.kind == "word"
    )


_PARSER_MARKS = re.compile(r"[\[\]{}]|^'|'$")


def plain_query(words: list[str], schema: Any) -> Any:
    """The Whoosh query for plain ``words``, OR-ed, built without Whoosh's parser (which took
    1.6 s for a 3,000-word paragraph): the query the parser makes for them, each word looked
    up in every default field (a word its field analyses into several terms, ``off-policy``,
    as a phrase), with how often the words repeat each term (``ranking.query_weight``)."""
    from whoosh.query import NullQuery, Or, Term

    phrase = _bounded_phrase_class()

    counts: dict[tuple[str, tuple[str, ...]], int] = {}
    analysed: dict[tuple[str, str], tuple[str, ...]] = {}
    for word in words:
        for field in DEFAULT_FIELDS:
            key = (field, word)
            if key not in analysed:
                analyse = schema[field].analyzer
                analysed[key] = tuple(t.text for t in analyse(word, mode="query"))
            terms = analysed[key]
            if terms:
                counts[(field, terms)] = counts.get((field, terms), 0) + 1
    subqueries = [
        (Term(field, terms[0]) if times == 1 else CountedTerm(field, terms[0], times))
        if len(terms) == 1
        else phrase(field, list(terms))
        for (field, terms), times in counts.items()
    ]
    if not subqueries:
        return NullQuery
    return subqueries[0] if len(subqueries) == 1 else Or(subqueries)


@cache
def _counted_term_class() -> Any:
    from whoosh import matching
    from whoosh.query import Term

    class Counted(Term):
        """A query term the query says ``times`` times: its postings are scored with that
        query frequency (Whoosh's own terms always pass 1); a fraction of one mention for a
        term pseudo-relevance feedback adds (``feedback``)."""

        def __init__(self, fieldname: str, text: str, times: float) -> None:
            super().__init__(fieldname, text)
            self.times = times

        def __eq__(self, other: object) -> bool:
            return super().__eq__(other) and self.times == getattr(other, "times", None)

        def __hash__(self) -> int:
            return int(super().__hash__()) ^ hash(self.times)

        def __repr__(self) -> str:
            return f"CountedTerm({self.fieldname!r}, {self.text!r}, {self.times})"

        def copy(self) -> Any:
            return Counted(self.fieldname, self.text, self.times)

        def matcher(self, searcher: Any, context: Any = None) -> Any:
            field = searcher.schema[self.fieldname] if self.fieldname in searcher.schema else None
            text = field.to_bytes(self.text) if field is not None else None
            if text is None or (self.fieldname, text) not in searcher.reader():
                return matching.NullMatcher()
            weighting = searcher.weighting if context is None else context.weighting
            return searcher.postings(self.fieldname, text, weighting=weighting, qf=self.times)

    return Counted


def CountedTerm(fieldname: str, text: str, times: float) -> Any:  # a class, made late
    """Whoosh's ``Term`` for a word said ``times`` times (the class is made on first use, so
    importing this module does not import Whoosh)."""
    return _counted_term_class()(fieldname, text, times)


def _and_not(query: Any) -> Any:
    """``AndNot(a, b)`` as ``And([a, Not(b)])``: Whoosh's AndNot matcher lets some excluded
    documents through (``entropy -exploration`` kept a paper about both)."""
    from whoosh.query import And, AndNot, Not

    if isinstance(query, AndNot):
        return And([_and_not(query.a), Not(_and_not(query.b))])
    return query.apply(_and_not)


#: Most parts of one AND that Whoosh joins itself. It joins them in a tree weighted by how many
#: documents each part has, like a Huffman code, which parts of very different sizes make as deep
#: as the AND is long (1,000 common words passed Python's recursion limit); more parts are
#: joined in ANDs of this many, nested: the same matches, and the same scores (sums).
AND_FAN_IN = 16


def _shallow_ands(query: Any) -> Any:
    """``query`` with each AND of more than ``AND_FAN_IN`` parts made of nested ANDs."""
    from whoosh.query import And

    query = query.apply(_shallow_ands)
    if type(query) is not And or len(query.subqueries) <= AND_FAN_IN:
        return query
    parts = list(query.subqueries)
    while len(parts) > AND_FAN_IN:
        groups = [parts[i : i + AND_FAN_IN] for i in range(0, len(parts), AND_FAN_IN)]
        parts = [And(group) if len(group) > 1 else group[0] for group in groups]
    return And(parts, boost=query.boost)


def _bounded_phrases(query: Any) -> Any:
    """``query`` with each of its phrases a ``BoundedPhrase``."""
    from whoosh.query import Phrase

    if type(query) is Phrase:
        bounded = _bounded_phrase_class()
        return bounded(query.fieldname, query.words, query.slop, query.boost, query.char_ranges)
    return query.apply(_bounded_phrases)


@cache
def _bounded_phrase_class() -> Any:
    from whoosh import matching
    from whoosh.query import Phrase

    class BoundedPhrase(Phrase):
        """A phrase that matches nothing, without reading a posting, where it says a word more
        times than any document of its field holds it (the index keeps that most with each
        word). Whoosh's matcher reads every document holding all the phrase's words, at a cost
        growing with the phrase: "learning learning …" 1,000 times took 7 s at 3,000 papers."""

        def matcher(self, searcher: Any, context: Any = None) -> Any:
            if not _can_repeat(self, searcher):
                return matching.NullMatcher()
            return super().matcher(searcher, context)

    return BoundedPhrase


def _can_repeat(phrase: Any, searcher: Any) -> bool:
    """Whether some document of the phrase's field holds each word of the phrase as many times
    as the phrase says it (a word's weight in a document is its count times the field's boost)."""
    from collections import Counter

    if phrase.fieldname not in searcher.schema:
        return True  # Whoosh's matcher answers that
    reader = searcher.reader()
    boost = searcher.schema[phrase.fieldname].format.field_boost or 1.0
    for word, times in Counter(phrase.words).items():
        if times > 1 and word is not None and (phrase.fieldname, word) in reader:
            if reader.term_info(phrase.fieldname, word).max_weight() < times * boost - 1e-6:
                return False
    return True


def _without_stop_words(query: str, lexemes: Sequence[Lexeme]) -> tuple[str, Sequence[Lexeme]]:
    """A plain query without its function words (``ranking.QUERY_STOP_WORDS``), if any remain:
    the words kept, joined by spaces, with their lexemes placed in that text (as ``lex`` would
    place them: a plain query's lexemes are all words)."""
    from .ranking import QUERY_STOP_WORDS

    if not is_plain(lexemes):
        return query, lexemes
    kept = [lx for lx in lexemes if lx.text.lower() not in QUERY_STOP_WORDS]
    if not kept or len(kept) == len(lexemes):
        return query, lexemes
    placed, pos = [], 0
    for lexeme in kept:
        placed.append(Lexeme("word", lexeme.text, pos))
        pos += len(lexeme.text) + 1
    return " ".join(lx.text for lx in kept), placed


def _signs() -> Any:
    """Whoosh's ``+``/``-`` plugin, applied inside parentheses too (it only sorts the top level)."""
    from whoosh.qparser import PlusMinusPlugin, syntax

    class Signs(PlusMinusPlugin):
        def do_plusminus(self, parser: Any, group: Any) -> Any:
            for i, node in enumerate(group):  # a word's fields hold no sign: kept as they are
                if isinstance(node, syntax.GroupNode) and not isinstance(node, _fields_group()):
                    group[i] = self.do_plusminus(parser, node)
            return super().do_plusminus(parser, group)

    return Signs(_SIGN.format(r"\+"), _SIGN.format("-"))


def _families(query: str, lexemes: Sequence[Lexeme]) -> str:
    """``pass@k`` (one letter after ``@``) becomes ``pass@``, the term every pass@-something has."""
    for lexeme in reversed(lexemes):
        found = family().match(lexeme.text) if lexeme.kind == "word" else None
        if found:
            end = lexeme.pos + len(lexeme.text)
            query = query[: lexeme.pos] + found.group(1) + query[end:]
    return query


@cache
def _fields_group() -> Any:
    """The parser's group for a word looked up in every default field: an OR whose hash tells
    one word from another. Whoosh's hash of an OR xors its parts' hashes, and a word's hash
    cancels out of an even number of fields: every word's OR had one hash, and the parser's
    removal of repeated parts compared each with all the others (2,000 NOTs: 4 s)."""
    from whoosh.qparser import syntax
    from whoosh.query import Or

    class FieldsOr(Or):
        def __hash__(self) -> int:
            return hash((type(self).__name__, self.boost, tuple(self.subqueries)))

    class FieldsGroup(syntax.OrGroup):
        qclass = FieldsOr

    return FieldsGroup


@cache
def _fuzzy_plugin() -> Any:
    """Whoosh's ``word~`` syntax, making ``BoundedFuzzyTerm`` queries."""
    from whoosh import qparser

    class Plugin(qparser.FuzzyTermPlugin):
        class FuzzyTermNode(qparser.FuzzyTermPlugin.FuzzyTermNode):
            qclass = _bounded_fuzzy_term()

    return Plugin()


@cache
def _bounded_fuzzy_term() -> Any:
    from whoosh.query import FuzzyTerm
    from whoosh.support.levenshtein import distance

    class BoundedFuzzyTerm(FuzzyTerm):
        """A fuzzy term that reads only the words sharing its first letter and compares only
        those of a near length. Whoosh's compares the term with every word of the field (a
        quadratic edit distance each): ``policy~`` took 3 s over 10,000 papers."""

        def _btexts(self, ixreader: Any) -> Any:
            text, most = self.text, self.maxdist
            field = ixreader.schema[self.fieldname]
            prefix = text[: max(self.prefixlength, 1)]
            for btext in ixreader.expand_prefix(self.fieldname, prefix):
                word = field.from_bytes(btext)
                if abs(len(word) - len(text)) <= most and distance(word, text, most) <= most:
                    yield word

    return BoundedFuzzyTerm


def _lowercase_fields(query: str) -> str:
    return re.sub(r"([A-Za-z_]+):(?!//)", lambda m: m.group(1).lower() + ":", query)
