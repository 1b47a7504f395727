"""An adversarial review of the term-at-a-time search (``index.accumulate``) and the kept
statistics (``index.memo``): each case is checked against Whoosh's own path
(``accumulate.suits`` patched to False) or against the result computed afresh."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlpapers import Library
from rlpapers.index import accumulate


def _both_ways(library, monkeypatch, query, limits):
    """{"whoosh"|"accumulate": {limit: [(id, score)], "count": n}} for ``query``."""
    found = {}
    for way, here in (("whoosh", False), ("accumulate", True)):
        monkeypatch.setattr(accumulate, "suits", lambda parsed, here=here: here)
        found[way] = {
            limit: [(h.paper.id, h.score) for h in library.search(query, limit=limit, rerank=0)]
            for limit in limits
        } | {"count": library.count(query)}
    return found["whoosh"], found["accumulate"]


def _same(ours, whoosh):
    assert [i for i, _ in ours] == [i for i, _ in whoosh]
    assert [s for _, s in ours] == pytest.approx([s for _, s in whoosh], rel=1e-9)


def test_a_hyphenated_word_of_256_parts_is_searched_not_a_damaged_index(tmp_path, monkeypatch):
    """``_phrase_bound`` counted each document's words of a phrase in a byte: a phrase of 256
    words (``rl-rl-…``, 767 characters, well within a query's 30,000) overflowed it, and the
    ValueError was taken for a damaged index: rebuilt, then exit 70."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    many = " ".join(["rl"] * 300)
    (corpus / "a.txt").write_text(
        f"Header\n\nWe study {many} agents.\n\nModel based rl for value search.\n",
        encoding="utf-8",
    )
    library = Library(corpus=[corpus], index_dir=tmp_path / "ix")
    for parts in (255, 256, 301):
        query = "-".join(["rl"] * parts)
        whoosh, ours = _both_ways(library, monkeypatch, query, (1, 5, None))
        assert ours["count"] == whoosh["count"] == (1 if parts <= 300 else 0)
        for limit in (1, 5, None):
            _same(ours[limit], whoosh[limit])


def _add_paper(corpus, name, words):
    text = f"A study of {words} with {words} models and {words} data.\n"
    (corpus / name).write_text("Header\n\n" + text, encoding="utf-8")


def test_stats_while_another_process_updates_the_view_are_kept_for_no_other_state(
    tmp_path, monkeypatch
):
    """While another process holds the lock to update the view, ``stats`` reads the last good
    view, whose manifest names an older store state than the records counted. The result was
    kept under that older state, and given back for it later when the records had changed
    again: the counts of a store state that is neither the view's nor the store's."""
    import rlpapers.index.view as view
    from rlpapers.errors import IndexNotice

    corpus, index_dir = tmp_path / "corpus", tmp_path / "ix"
    corpus.mkdir()
    _add_paper(corpus, "a.txt", "whiskers")
    Library(corpus=[corpus], index_dir=index_dir).search("whiskers")  # the view, one paper
    monkeypatch.setattr(view, "LOCK_WAIT_WARM", 0.2)
    for n, words in enumerate(("tails", "paws"), 2):
        _add_paper(corpus, f"{words}.txt", words)
        holder = Library(corpus=[corpus], index_dir=index_dir)
        holder.store.refresh()  # the records now hold n papers; the view still one
        holder.store.lock.acquire()  # "another process is updating the index"
        try:
            with pytest.warns(IndexNotice, match="last good index"):
                counted = Library(corpus=[corpus], index_dir=index_dir).stats()
        finally:
            holder.store.lock.release()
        assert counted["papers"] == n


@pytest.mark.parametrize("query", ["policy gradient", "off-policy"])
def test_a_negative_limit_is_a_value_error_not_a_damaged_index(query, tmp_path):
    """``search(limit=-1)`` failed deep in the ranking (a ValueError from ``islice``, an
    IndexError from the phrase bounds), which ``healing`` took for a damaged index: the view
    was rebuilt, then the error raised. ``rerank`` out of range was a ValueError already."""
    import warnings

    from rlpapers.errors import IndexNotice

    from .conftest import SEEDS

    library = Library(corpus=[SEEDS], index_dir=tmp_path / "ix")
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        with pytest.raises(ValueError, match="limit must be None or at least 0"):
            library.search(query, limit=-1)
        with pytest.raises(ValueError, match="limit must be None or at least 0"):
            list(library.search_ids(query, limit=-3))
        assert library.search(query, limit=0) == []


@pytest.mark.parametrize("query", ["policy gradient", "off-policy", "title:policy"])
def test_a_limit_past_any_count_is_all_not_a_damaged_index(query, tmp_path):
    """``search --limit 100000000000000000000000`` failed in ``islice`` (a stop past
    ``sys.maxsize``), which ``healing`` took for a damaged index: rebuilt, then exit 70."""
    import sys
    import warnings

    from rlpapers.errors import IndexNotice

    from .conftest import SEEDS, run

    library = Library(corpus=[SEEDS], index_dir=tmp_path / "ix")
    every = [hit.paper.id for hit in library.search(query, limit=None)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        for limit in (10**24, sys.maxsize + 1, sys.maxsize, 2**62):
            assert [hit.paper.id for hit in library.search(query, limit=limit)] == every
            assert list(library.search_ids(query, limit=limit)) == every
    result = run("--index-dir", tmp_path / "ix", "search", query, "-f", "ids", "-n", "9" * 24)
    assert result.stdout.split() == every and result.stderr == ""


VOCAB = "alpha beta gamma delta".split()


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """Short abstracts over four words (many ties, many phrases) in four files: three indexed
    at once (one segment), the fourth added (a segment), then two edited (papers removed and
    added): deleted documents in a segment that keeps others, a segment all deleted, new
    segments, in a view updated in place. Near-copies (the last word another) tie."""
    rng = random.Random(7)
    corpus, index_dir = tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ix")
    files: dict[str, list[str]] = {}

    def write(name):
        (corpus / name).write_text("\n\n".join(["Header", *files[name]]) + "\n", "utf-8")

    for part in range(4):
        texts = [" ".join(rng.choices(VOCAB, k=rng.randint(1, 12))) for _ in range(12)]
        copies = [t + f" zeta{part}" for t in rng.sample(files["f0.txt"], 3)] if files else []
        files[f"f{part}.txt"] = list(dict.fromkeys(t.capitalize() + " omega." for t in texts))
        files[f"f{part}.txt"] += copies
        if part == 1:  # a word only a paper removed below has
            files["f1.txt"][0] = "Kappa " + files["f1.txt"][0]
        write(f"f{part}.txt")
        if part >= 2:
            Library(corpus=[corpus], index_dir=index_dir).search("alpha")
    for name in ("f1.txt", "f3.txt"):
        del files[name][:3]
        files[name].append("Gamma delta gamma alpha beta.")
        write(name)
    library = Library(corpus=[corpus], index_dir=index_dir)
    readers = [leaf for leaf, _ in library.index.searcher.reader().leaf_readers()]
    assert any(0 < leaf.doc_count() < leaf.doc_count_all() for leaf in readers)
    return library


words = st.lists(st.sampled_from([*VOCAB, "epsilon", "kappa"]), min_size=1, max_size=4).map(
    "-".join
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.lists(words, min_size=1, max_size=4).map(" ".join), limit=st.integers(1, 30))
def test_plain_queries_on_an_edited_view_rank_as_whoosh_does(edited, monkeypatch, query, limit):
    """Random plain queries (hyphenated words of up to four parts, repeated words, a word no
    paper has, a word only a removed paper had) on a view with deletions in several segments: term at a time gives Whoosh's
    hits, order, scores and count, and a limited search is the start of the unlimited one."""
    whoosh, ours = _both_ways(edited, monkeypatch, query, (limit, None))
    assert ours["count"] == whoosh["count"] == len(whoosh[None])
    _same(ours[limit], whoosh[limit])
    _same(ours[None], whoosh[None])
    _same(ours[limit], ours[None][:limit])
