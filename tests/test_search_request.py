"""One search request: checked and lexed once, taken by Library and Index alike."""

from __future__ import annotations

import ast

import pytest

from rlpapers import Filters, Library, SearchRequest
from rlpapers.errors import InputError, QueryError

from .conftest import ROOT, SEEDS


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return Library(corpus=[SEEDS], index_dir=tmp_path_factory.mktemp("index"))


@pytest.fixture
def lexed(monkeypatch):
    """Counts the times a query is lexed (``querylang.lex``, which ``check`` calls)."""
    import rlpapers.querylang as querylang

    calls: list[str] = []
    real = querylang.lex

    def counting(text: str):
        calls.append(text)
        return real(text)

    monkeypatch.setattr(querylang, "lex", counting)
    return calls


def ids(hits):
    return [h.paper.id for h in hits]


def test_a_request_gives_what_the_keywords_give(lib):
    filters = Filters(topic=("强化学习",))
    for query, options in [
        ("entropy", {}),
        ("large language model agents", {"limit": 3, "rerank": 0}),
        ("policy optimization", {"limit": None, "sort": "title"}),
        ("reinforcement", {"limit": 5, "filters": filters, "sort": "key"}),
        ('"speculative decoding" OR author:Bengio', {"limit": None}),
    ]:
        request = SearchRequest(query, **options)
        hits = ids(lib.search(request))
        assert hits == ids(lib.search(query, **options)), query
        assert ids(lib.iter_search(request)) == hits == list(lib.search_ids(request))
        assert lib.count(request) == lib.count(query, options.get("filters"))


@pytest.mark.parametrize(
    "query", ["entropy", "large language model agents", "the policy of what", "title:entropy OR x"]
)
def test_a_search_lexes_its_query_once(lib, lexed, query):
    """Each search lexes the query once, however it is run (it was two to four times)."""
    lib.search("warm")  # the index is open
    for run in (
        lambda: lib.search(query),
        lambda: list(lib.iter_search(query, limit=None)),
        lambda: list(lib.search_ids(query, limit=None)),
        lambda: lib.count(query),
    ):
        lexed.clear()
        run()
        assert lexed == [query]
    request = SearchRequest(query, limit=None)
    lexed.clear()
    lib.search(request), lib.count(request), list(lib.search_ids(request))
    assert lexed == []  # a request is lexed when made, never when run
    lexed.clear()
    lib.index.matches(request.lexical_side(100))  # a hybrid search's lexical side
    assert lexed == []


def test_a_bad_request_fails_when_made_with_the_position():
    with pytest.raises(QueryError) as error:
        SearchRequest('entropy "unclosed')
    assert error.value.position == 9
    with pytest.raises(QueryError, match="unknown sort"):
        SearchRequest("entropy", sort="year")
    with pytest.raises(InputError, match="unknown search mode"):
        SearchRequest("entropy", mode="fuzzy")
    with pytest.raises(ValueError, match="rerank"):
        SearchRequest("entropy", rerank=-1)
    with pytest.raises(QueryError, match="lexical and hybrid"):
        SearchRequest("title:entropy", mode="semantic")
    assert SearchRequest("entropy policy").plain and not SearchRequest("title:entropy").plain


def test_a_request_is_checked_before_the_index_is_opened(tmp_path):
    lib = Library(corpus=[SEEDS], index_dir=tmp_path / "index")
    with pytest.raises(QueryError):
        lib.search("entropy AND")
    assert not (tmp_path / "index").exists() or not any((tmp_path / "index").rglob("*.seg"))


def test_the_lexical_side_keeps_the_lexemes_and_ranks_by_score():
    request = SearchRequest("entropy policy", limit=3, sort="title")
    side = request.lexical_side(100)
    assert (side.limit, side.sort) == (100, "score") and side.lexemes is request.lexemes
    assert (request.limit, request.sort) == (3, "title")  # the request is unchanged


def test_library_uses_only_public_names_of_the_index():
    """``library.py`` imports only public names of ``rlpapers.index`` itself, never of its
    modules (it imported ``index._sorted`` and reached into ``query``, ``snippets``...)."""
    tree = ast.parse((ROOT / "rlpapers" / "library.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "index" in node.module:
            assert node.module == "index" and node.level == 1, node.module
            assert all(not alias.name.startswith("_") for alias in node.names)
