"""Pseudo-relevance feedback: a long request is expanded with the terms of its best papers."""

from __future__ import annotations

import pytest

from rlpapers import Library
from rlpapers.index import accumulate, feedback

from .conftest import SEEDS

#: A request of several sentences, worded as people write one (11 distinct words once the
#: function and request words are dropped).
REQUEST = (
    "I am looking for papers on offline reinforcement learning, where a policy is learned "
    "from a fixed dataset without further exploration, and on how conservative value "
    "estimates keep the policy close to the data."
)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return Library(corpus=[SEEDS], index_dir=tmp_path_factory.mktemp("index"))


def scored(lib, query, **options):
    return [(h.paper.id, h.score) for h in lib.search(query, limit=None, rerank=0, **options)]


def test_a_long_request_is_expanded_with_the_terms_of_its_best_papers(lib, monkeypatch):
    """Each match's score is its first-pass BM25 score plus the added terms' scores, the terms
    taken from the first pass's best ``DOCS`` papers; the matches stay the query's own."""
    from rlpapers.index.query import parse

    searcher = lib.index.searcher
    parsed, _ = parse(REQUEST, lib.index.schema)
    assert feedback.applies(parsed)
    monkeypatch.setattr(feedback, "MIN_WORDS", 10**9)
    before = dict(scored(lib, REQUEST))
    first = [pid for pid, _ in scored(lib, REQUEST)[: feedback.DOCS]]
    monkeypatch.undo()
    after = dict(scored(lib, REQUEST))
    assert after.keys() == before.keys() and lib.count(REQUEST) == len(after)

    texts = lib.index._texts(first)
    known = feedback._query_terms(parsed)
    shares = [before[pid] for pid in first]
    added = feedback.expansion(searcher.reader(), texts, known, shares)
    assert added and not {term for term, _ in added} & known
    extra = accumulate.accumulate(searcher, feedback._leaves(added))
    ids = {searcher.stored_fields(n)["id"]: n for n in range(searcher.doc_count_all())}
    for pid, score in after.items():
        assert score == pytest.approx(before[pid] + extra[ids[pid]], rel=1e-9), pid
    assert any(extra[ids[pid]] for pid in before)  # the expansion changed some scores


def test_a_limited_long_request_is_the_start_of_the_unlimited_one(lib):
    everything = [h.paper.id for h in lib.search(REQUEST, limit=None)]
    for limit in (1, 3, 10):
        assert [h.paper.id for h in lib.search(REQUEST, limit=limit)] == everything[:limit]


def test_a_short_query_is_not_expanded(lib, monkeypatch):
    """Below ``MIN_WORDS`` distinct words a query keeps Whoosh's quick top-k search."""
    calls = []
    real = feedback.search
    monkeypatch.setattr(feedback, "search", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert lib.search("offline reinforcement learning with conservative values", limit=5)
    assert not calls
    assert lib.search(REQUEST, limit=5) and calls


def test_the_added_terms_weigh_by_their_share_of_the_papers_times_idf(lib):
    """The terms of the best papers not in the query, ranked by their share of each paper's
    terms (papers weighed by their score) times idf; together they weigh ``WEIGHT`` times the
    number of the query's words (RM3's interpolation), in proportion to that product."""
    from rlpapers.index.ranking import idf

    reader = lib.index.searcher.reader()
    texts = ["entropy entropy policy", "entropy reward"]
    added = dict(feedback.expansion(reader, texts, {"polici"}, [3.0, 1.0]))
    assert "polici" not in added and set(added) == {"entropi", "reward"}
    share = {"entropi": 3 / 4 * 2 / 3 + 1 / 4 * 1 / 2, "reward": 1 / 4 * 1 / 2}
    weight = {term: share[term] * idf(reader, "abstract", term) for term in share}
    assert added["entropi"] / added["reward"] == pytest.approx(weight["entropi"] / weight["reward"])
    assert sum(added.values()) == pytest.approx(feedback.WEIGHT * 1)


def test_a_fraction_of_a_mention_weighs_that_fraction():
    from rlpapers.index.ranking import query_weight

    assert query_weight(0.25) == 0.25 and query_weight(1) == 1.0 and query_weight(2) > 1.0
