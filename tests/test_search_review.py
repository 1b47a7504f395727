"""An adversarial review of the term-at-a-time search (``index.accumulate``), the restricted
unpickler's chunked reads (``index._unpickle``) and the kept statistics (``index.memo``): each
case is checked against Whoosh's own path (``accumulate.suits`` patched to False) or against
the result computed afresh."""

from __future__ import annotations

import pytest

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
