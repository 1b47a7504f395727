"""Text analysis, identical at index and query time.

Words are split on anything that is not a letter or digit (``off-policy`` -> ``off``, ``policy``),
CJK runs become overlapping character bigrams (``强化学习`` -> ``强化 化学 学习``, so a Chinese
query matches without a segmenter), then tokens are lower-cased, accent-folded
(``Aichmüller`` -> ``aichmuller``) and, for the ranked text fields, Snowball-stemmed with
PyStemmer (``quantized`` and ``quantization`` -> ``quantiz``).

The classes hold no state: a view's schema is rebuilt from ``schema.schema()`` on each open.
"""

from __future__ import annotations

import re
from itertools import compress, groupby
from sys import intern
from typing import Any

from whoosh.analysis import Analyzer, Filter, StopFilter, Token, Tokenizer
from whoosh.analysis.filters import STOP_WORDS, LowercaseFilter

from ..text import in_cjk_script, strip_accents

_TOKENS = re.compile(r"[^\W_]+(?:['’][^\W_]+)?@?")
_POSSESSIVE = re.compile(r"['’][sS]$")


class _Stateless:
    """Analysis parts hold no settings: two of the same class are equal (Whoosh compares
    schemas)."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class _Emitter(_Stateless):
    """Whoosh's tokenizer/analyser call protocol, once: subclasses say which tokens to emit."""

    def __call__(  # Whoosh's tokenizer protocol
        self,
        value: str,
        positions: bool = False,
        chars: bool = False,
        keeporiginal: bool = False,
        removestops: bool = True,
        start_pos: int = 0,
        start_char: int = 0,
        tokenize: bool = True,
        mode: str = "",
        **kwargs: Any,
    ) -> Any:
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pieces = _pieces(value, mode == "query") if tokenize else [(value, 0, len(value))]
        for text, original, pos, start, end, stopped in self._emit(pieces, start_pos, removestops):
            token.text = text
            token.boost = 1.0
            token.stopped = stopped
            if keeporiginal:
                token.original = original
            if positions:
                token.pos = pos
            if chars:
                token.startchar = start_char + start
                token.endchar = start_char + end
            yield token

    def _emit(self, pieces: Any, start_pos: int, removestops: bool) -> Any:
        """(text, original, position, start, end, stopped) for each token to yield."""
        raise NotImplementedError


class WordTokenizer(_Emitter, Tokenizer):
    """Letters-and-digits words; CJK runs as character bigrams (a lone character stays whole)."""

    def _emit(self, pieces: Any, start_pos: int, removestops: bool) -> Any:
        for pos, (text, start, end) in enumerate(pieces, start_pos):
            yield text, text, pos, start, end, False


def _pieces(value: str, query: bool = False) -> Any:
    """(text, start, end) of each token. A possessive ``'s`` is dropped (``Montezuma's`` ->
    ``Montezuma``). A word followed by ``@`` also gives ``word@`` (``pass@16`` -> ``pass``,
    ``pass@``, ``16``), so a query for ``pass@k`` (``pass@`` in the query, see ``query.py``) finds
    every ``pass@``-something; in a query only ``pass@`` is kept, a single term."""
    for match in _TOKENS.finditer(value):
        text = match.group(0)
        if text.isascii() and "'" not in text and text[-1] != "@":  # most words: as they are
            yield text, match.start(), match.end()
            continue
        start, end = match.start(), match.end()
        if text.endswith("@"):
            if not query:
                yield _POSSESSIVE.sub("", text[:-1]), start, end - 1
            yield text, start, end
            continue
        if "'" in text or "’" in text:
            text = _POSSESSIVE.sub("", text)
        if text.isascii() or not any(in_cjk_script(c) for c in text):
            yield text, start, end
            continue
        for cjk, group in groupby(enumerate(text), key=lambda item: in_cjk_script(item[1])):
            run = list(group)
            first, last = start + run[0][0], start + run[-1][0] + 1
            chars = "".join(c for _, c in run)
            if not cjk:
                yield chars, first, last
            elif len(chars) == 1:
                yield chars, first, last
            else:
                for i in range(len(chars) - 1):
                    yield chars[i : i + 2], first + i, first + i + 2


class AcronymPluralFilter(_Stateless, Filter):
    """``LLMs`` -> ``LLM``, ``VLMs`` -> ``VLM``: Snowball leaves vowel-less plurals alone."""

    _PLURAL = re.compile(r"^[A-Z][A-Z0-9]+s$")

    def __call__(self, tokens: Any) -> Any:
        plural = self._PLURAL.match
        for token in tokens:
            if plural(token.text):
                token.text = token.text[:-1]
            yield token


class FoldFilter(_Stateless, Filter):
    """Accent folding for non-ASCII tokens: ``aichmüller`` -> ``aichmuller``."""

    def __call__(self, tokens: Any) -> Any:
        for token in tokens:
            text = token.text
            if not text.isascii():
                token.text = strip_accents(text)
            yield token


class SnowballFilter(_Stateless, Filter):
    """English Snowball stemming (PyStemmer, a C extension) of alphabetic ASCII tokens."""

    def __init__(self) -> None:
        self._stem: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._stem = None

    def __call__(self, tokens: Any) -> Any:
        stem = self._stem or self._load()
        for token in tokens:
            text = token.text
            if _stemmed(text):
                token.text = stem(text)
            yield token

    def _load(self) -> Any:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWord
        return self._stem


class ProseAnalyzer(_Emitter, Analyzer):
    """The prose chain in one generator: tokenise, de-pluralise acronyms, lower-case, fold,
    drop stop words, stem. Whoosh runs the analyser over every field of every document, and one
    pass costs half of six chained generators. ``reference_analyzer()`` is the same chain built
    from Whoosh filters; tests/test_search.py checks that the two agree."""

    def _emit(self, pieces: Any, start_pos: int, removestops: bool) -> Any:
        pos = None  # as StopFilter renumbers: from the first kept token's place, then +1 each
        for raw_pos, (piece, start, end) in enumerate(pieces, start_pos):
            term = _TERMS.get(piece) or _term(piece)
            stopped = piece in _STOPPED
            if stopped and removestops:
                continue
            if not stopped:
                pos = raw_pos if pos is None else pos + 1
            yield term, piece, raw_pos if pos is None else pos, start, end, stopped


def _term(piece: str) -> str:
    """The indexed form of one token, remembered in ``_TERMS`` (prose repeats its words, and a
    dictionary lookup costs a fraction of the folding and stemming); a stop word's piece goes
    into ``_STOPPED``. A form equal to its piece is the piece itself, and equal forms are one
    string, so the cache holds each text once (10,000 abstracts: 44,000 pieces)."""
    if len(_TERMS) > 200_000:  # bounded: a huge vocabulary starts again
        _TERMS.clear()
        _STOPPED.clear()
    term, stopped = _new_term(piece)
    if stopped:
        _STOPPED.add(piece)
    _TERMS[piece] = term = piece if term == piece else intern(term)
    return term


def _new_term(piece: str) -> tuple[str, bool]:
    word = piece[:-1] if AcronymPluralFilter._PLURAL.match(piece) else piece
    word = word.lower()
    if not word.isascii():
        word = strip_accents(word)
    if not word or word in STOP_WORDS:  # as StopFilter(minsize=1): an empty term is dropped
        return word, True
    if _stemmed(word):
        word = (_STEMMER or _load_stemmer())(word)
    return word, False


def text_analyzer() -> Any:
    """Ranked prose fields: words, lower-case, folded, stop words dropped, stemmed."""
    return ProseAnalyzer()


def reference_analyzer() -> Any:
    """``text_analyzer`` as a chain of Whoosh filters: the specification the fast one meets."""
    return (
        WordTokenizer()
        | AcronymPluralFilter()
        | LowercaseFilter()
        | FoldFilter()
        | StopFilter(minsize=1)
        | SnowballFilter()
    )


def name_analyzer() -> Any:
    """Names, categories, topics and sources: words, lower-case, folded; no stemming."""
    return WordTokenizer() | LowercaseFilter() | FoldFilter()


def stemmed_to(stems: set[str], words: set[str]) -> dict[str, str]:
    """Those of ``words`` whose stem, as the text analyser gives it, is one of ``stems``, each
    with its stem (lower-case words: ASCII words of letters longer than two are stemmed, the
    rest are their own stem). The words to stem are picked by a few calls over all of them,
    none a word, and stemmed by one."""
    import Stemmer

    # those stemmed, found in all the words joined by newlines (a piece of a word with a
    # newline in it is left out below)
    stemmed = _STEMMED.findall("\n".join(words))
    stemmer = Stemmer.Stemmer("english", 0)  # no cache: words come once
    stem_of = stemmer.stemWords(stemmed)
    pairs = compress(zip(stemmed, stem_of, strict=True), map(stems.__contains__, stem_of))
    found = {word: stem for word, stem in pairs if word in words}
    found.update((w, w) for w in stems.intersection(words) if not _stemmed(w))  # kept as they are
    return found


_STEMMED = re.compile(r"^[A-Za-z]{3,}$", re.MULTILINE)  # the words _stemmed says are stemmed


def _stemmed(word: str) -> bool:
    """Whether the text analyser stems ``word`` (else the word is its own stem)."""
    return word.isascii() and word.isalpha() and len(word) > 2


_TERMS: dict[str, str] = {}
_STOPPED: set[str] = set()
_STEMMER: Any = None


def fast_terms(text: str) -> list[tuple[str, int, int]]:
    """(term, start, end) for each token ``text_analyzer`` keeps, in order, without Whoosh's
    token objects: several times faster, for snippets and proximity on stored abstracts.
    tests/test_search.py checks that it gives the same terms as the analyser."""
    out = []
    known = _TERMS.get
    for piece, start, end in _pieces(text):
        term = known(piece) or _term(piece)
        if piece not in _STOPPED:
            out.append((term, start, end))
    return out


def _load_stemmer() -> Any:
    """PyStemmer's English stemmer (it keeps its own cache of recent words; ``_TERMS`` holds
    every token's whole analysed form, so no second cache of stems is kept here)."""
    global _STEMMER
    import Stemmer

    _STEMMER = Stemmer.Stemmer("english").stemWord
    return _STEMMER
