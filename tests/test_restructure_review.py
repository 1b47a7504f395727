"""Differential review of the restructure (one search request, the CLI and the store split):
what the review found the new shape does differently from the code before it, pinned."""

from __future__ import annotations

import random

import pytest

from rlpapers import Library
from rlpapers.errors import QueryError
from rlpapers.index import query as q
from rlpapers.index.ranking import QUERY_STOP_WORDS

from .conftest import SEEDS


def test_a_malformed_query_is_reported_before_the_semantic_extra_is_needed(tmp_path):
    """A hybrid search checks its query when the request is made, before the vectors are read:
    a malformed query is a query error with its position whether or not the ``semantic`` extra
    is installed (semantic mode did so before; hybrid asked for the extra first)."""
    lib = Library(corpus=[SEEDS], index_dir=tmp_path)
    with pytest.raises(QueryError, match="character 1"):
        lib.search("(policy", mode="hybrid")


def test_a_query_without_its_stop_words_is_lexed_as_its_text():
    """The lexemes a plain query keeps without its function words stand where lexing the
    shortened text would place them (they are placed, no longer lexed again)."""
    tokens = ["policy", "off-policy", "'quoted", "end'", "pass@k", "café", "l'agent", "1.5"]
    stops = sorted(QUERY_STOP_WORDS)[:6]
    rng = random.Random(1)
    checked = 0
    for _ in range(500):
        words = rng.sample(tokens, rng.randint(1, 4)) + rng.sample(stops, rng.randint(1, 3))
        rng.shuffle(words)
        text = " ".join(words)
        lexemes = q.check(text)
        shortened, kept = q._without_stop_words(text, lexemes)
        if shortened == text:
            continue
        checked += 1
        assert list(kept) == list(q.lex(shortened)), text
    assert checked > 100
