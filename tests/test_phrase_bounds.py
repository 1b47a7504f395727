"""A hyphenated word (a phrase of its parts) scored term at a time (``accumulate``): the words'
positions are read only for the documents whose bound can still reach the best ones, and the
hits, order, scores and count are those of Whoosh's phrase matchers."""

from __future__ import annotations

import random

import pytest

from rlpapers import Library
from rlpapers.index import accumulate

WORDS = "model based policy off agent multi learning reward world value search tree".split()


@pytest.fixture(scope="module")
def hyphens(tmp_path_factory):
    """Papers where "model" and "based" (and the other pairs) stand together, apart, or alone,
    in several index segments (each file added is a segment of the live view)."""
    folder = tmp_path_factory.mktemp("hyphens")
    rng = random.Random(30)
    index_dir = tmp_path_factory.mktemp("ix")
    library = None
    for part in range(3):
        blocks = ["Header"]
        for _ in range(60):
            words = [rng.choice(WORDS) for _ in range(rng.randint(5, 40))]
            if rng.random() < 0.3:
                at = rng.randrange(len(words))
                words[at:at] = rng.choice([["model-based"], ["off-policy"], ["multi-agent"]])
            blocks.append(" ".join(words).capitalize() + ".")
        (folder / f"part{part}.txt").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
        library = Library(corpus=[folder], index_dir=index_dir)
        library.search("model", limit=1)
    return library


QUERIES = [
    "model-based",
    "model-based reward",
    "off-policy multi-agent value",
    "model-based off-policy model based",
    "multi-agent tree-search",
    "world-model",  # parts that never stand together
]


@pytest.mark.parametrize("query", QUERIES)
def test_phrases_term_at_a_time_give_whooshs_hits_scores_and_count(hyphens, monkeypatch, query):
    segments = len(list(hyphens.index.searcher.reader().leaf_readers()))
    assert segments > 1
    found = {}
    for way, here in (("whoosh", False), ("accumulate", True)):
        monkeypatch.setattr(accumulate, "suits", lambda parsed, here=here: here)
        found[way] = {
            limit: [(h.paper.id, h.score) for h in hyphens.search(query, limit=limit, rerank=0)]
            for limit in (1, 3, 10, None)
        } | {"count": hyphens.count(query)}
    whoosh, ours = found["whoosh"], found["accumulate"]
    assert ours["count"] == whoosh["count"]
    for limit in (1, 3, 10, None):
        assert [i for i, _ in ours[limit]] == [i for i, _ in whoosh[limit]], (query, limit)
        assert [s for _, s in ours[limit]] == pytest.approx([s for _, s in whoosh[limit]], rel=1e-9)


def test_positions_are_read_only_for_the_documents_that_can_still_rank(hyphens, monkeypatch):
    """A limited search reads the positions of a few documents holding the words, not all."""
    monkeypatch.setattr(accumulate, "suits", lambda parsed: True)
    checked: list[int] = []
    holding: list[int] = []
    adjacent, bound = accumulate._adjacent, accumulate._phrase_bound

    def counted_adjacent(searcher, phrase, docnums):
        checked.extend(docnums)
        return adjacent(searcher, phrase, docnums)

    def counted_bound(searcher, phrase):
        found = bound(searcher, phrase)
        holding.extend(found)
        return found

    monkeypatch.setattr(accumulate, "_adjacent", counted_adjacent)
    monkeypatch.setattr(accumulate, "_phrase_bound", counted_bound)
    assert len(hyphens.search("model-based", limit=3, rerank=0)) == 3
    assert 0 < len(checked) < len(holding) / 3


@pytest.mark.parametrize("query", QUERIES)
def test_a_limited_result_still_knows_how_many_match(hyphens, query):
    """``len`` of a limited result counts every match, as Whoosh's results do."""
    from rlpapers.index.query import parse

    searcher = hyphens.index.searcher
    parsed, _ = parse(query, hyphens.index.schema)
    assert len(accumulate.search(searcher, parsed, 3)) == accumulate.count(searcher, parsed)
    assert accumulate.count(searcher, parsed) == len(searcher.search(parsed, limit=None))
