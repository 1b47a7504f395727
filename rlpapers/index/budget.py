"""The expansion budget: a query's wildcards, ranges and fuzzy terms may stand for at most
``querylang.MAX_EXPANSIONS`` words in all, each one a term to score, and may read at most
``MAX_READ`` words of the index to find them. The phrase budget: a query's phrases may read the
word positions of at most ``MAX_PHRASE_READS`` documents; and its NOTs visit at most
``MAX_NOT_VISITS``."""

from __future__ import annotations

from typing import Any

from ..errors import QueryError
from ..querylang import MAX_EXPANSIONS

#: Most words of the index a query's wildcards, ranges and fuzzy terms may read to find the
#: words they stand for, however few those are: a wildcard without a leading letter (``*ing``)
#: reads every word of each field it is looked up in (about 45,000 at 3,000 papers), a fuzzy
#: term those of its first letter, and a search reads them again. 100 leading wildcards that
#: stood for nothing took 23 s over 3,000 papers, 1,000 fuzzy terms 26 s.
MAX_READ = 400_000


#: Most documents whose word positions the phrases of a query in the query language may read,
#: each phrase counted by the documents holding its rarest word (all it can read): some 20
#: microseconds each. 1,400 phrases of two common words took 15 s over 3,000 papers. A plain
#: query's hyphenated words are scored within the postings budget (``accumulate``) instead.
MAX_PHRASE_READS = 250_000


def check_phrases(parsed: Any, reader: Any, query: str) -> None:
    """Refuse a query whose phrases would read the positions of more than ``MAX_PHRASE_READS``
    documents."""
    from whoosh.query import Phrase

    read = 0
    for leaf in parsed.leaves():
        words = [word for word in getattr(leaf, "words", ()) if word is not None]
        if not isinstance(leaf, Phrase) or len(words) < 2:
            continue
        read += min(reader.doc_frequency(leaf.fieldname, word) for word in words)
        if read > MAX_PHRASE_READS:
            raise QueryError(
                f"its phrases would read the word positions of more than {MAX_PHRASE_READS:,} "
                "papers, the most a query's phrases may read: make them fewer or rarer",
                query,
            )


#: Most papers the NOTs of a query may visit in all: each visits every paper its part does not
#: match, some 4 microseconds each (1,000 NOTs took 10 to 17 s over 3,000 papers). ``-word``
#: exclusions are one NOT, however many.
MAX_NOT_VISITS = 1_000_000


def check_negations(parsed: Any, reader: Any, query: str) -> None:
    """Refuse a query whose NOTs would visit more than ``MAX_NOT_VISITS`` papers."""
    from whoosh.query import Not

    nots = sum(1 for node in _nodes(parsed) if isinstance(node, Not))
    visits = nots * reader.doc_count_all()
    if visits > MAX_NOT_VISITS:
        raise QueryError(
            f"its {nots:,} NOTs would visit {visits:,} papers, the most a query's NOTs may visit "
            f"is {MAX_NOT_VISITS:,}: exclude words with -word instead (one pass for all of them)",
            query,
        )


def _nodes(query: Any) -> Any:
    yield query
    for child in query.children():
        yield from _nodes(child)


class _ReadTooMuch(Exception):
    """The words read passed ``MAX_READ``."""


class _Reading:
    """A reader whose walks through a field's words count each word against ``MAX_READ``."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self.read = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)

    def lexicon(self, fieldname: str) -> Any:
        return self._counted(self._reader.lexicon(fieldname))

    def expand_prefix(self, fieldname: str, prefix: Any) -> Any:
        return self._counted(self._reader.expand_prefix(fieldname, prefix))

    def terms_from(self, fieldname: str, prefix: Any) -> Any:
        return self._counted(self._reader.terms_from(fieldname, prefix))

    def _counted(self, words: Any) -> Any:
        for word in words:
            self.read += 1
            if self.read > MAX_READ:
                raise _ReadTooMuch
            yield word


def check_expansions(parsed: Any, reader: Any, query: str) -> None:
    """Refuse a query whose wildcards, ranges and fuzzy terms stand for more than
    ``MAX_EXPANSIONS`` words in all, naming the terms and the budget (counting stops past the
    budget, so checking is cheap too). A term counts the words it stands for in every field."""
    from itertools import islice

    from whoosh.query import Every
    from whoosh.query.terms import MultiTerm

    used = 0
    counted: dict[str, int] = {}  # each term as written: its words, summed over its fields
    reading = _Reading(reader)
    for leaf in parsed.leaves():
        if isinstance(leaf, Every):
            raise QueryError("'*' alone matches every word: give it some letters", query)
        if not isinstance(leaf, MultiTerm):
            continue
        shown = _shown(leaf)
        counted.setdefault(shown, 0)  # named if reading it passes the budget
        try:
            words = sum(1 for _ in islice(leaf._btexts(reading), MAX_EXPANSIONS - used + 1))
        except _ReadTooMuch:
            raise QueryError(_over_reading(list(counted)), query, _position(query, leaf)) from None
        used += words
        counted[shown] += words
        if used > MAX_EXPANSIONS:
            raise QueryError(
                _over_budget([t for t, n in counted.items() if n]), query, _position(query, leaf)
            )


def _over_budget(terms: list[str]) -> str:
    """The message for terms over the budget: it names them all, and the budget."""
    budget = (
        f"more than {MAX_EXPANSIONS:,} words, the most the wildcards, ranges and fuzzy terms "
        "of a query may stand for"
    )
    if len(terms) == 1:
        return f"{terms[0]} matches {budget}: make it more specific"
    return f"{_named(terms)} together match {budget}: make them more specific"


def _over_reading(terms: list[str]) -> str:
    """The message for terms that read more of the index than the budget allows."""
    return (
        f"{_named(terms)} read more than {MAX_READ:,} words of the index to find what they match, the "
        "most the wildcards, ranges and fuzzy terms of a query may read: give them more "
        "leading letters, or fewer of them"
    )


def _named(terms: list[str]) -> str:
    """The terms for a message: all of them up to six, else the first five and a count."""
    if len(terms) == 1:
        return terms[0]
    if len(terms) > 6:
        return ", ".join(terms[:5]) + f" and {len(terms) - 5:,} other terms"
    return ", ".join(terms[:-1]) + f" and {terms[-1]}"


def _shown(leaf: Any) -> str:
    from whoosh.query import Prefix

    text = getattr(leaf, "text", None)
    if isinstance(text, str):
        return f"'{text}*'" if isinstance(leaf, Prefix) else f"'{text}'"
    return f"the range [{getattr(leaf, 'start', '')} TO {getattr(leaf, 'end', '')}]"


def _position(query: str, leaf: Any) -> int | None:
    text = getattr(leaf, "text", None)
    found = query.lower().find(text.lower()) if isinstance(text, str) else query.find("[")
    return found + 1 if found >= 0 else None
