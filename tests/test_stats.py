"""``stats`` keeps its result in the search view's generation, for the store state it came from:
the same answer as computing it, a new answer after any change, and a damaged file computed
again and rewritten."""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rlpapers import Library
from rlpapers.index import Index


def _kept(library: Library) -> Path:
    return library.index.opened.path / "stats.json"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often the abstracts' terms are read (the costly part of a computed result)."""
    calls: list[int] = []
    real = Index.term_candidates

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Index, "term_candidates", counted)
    return calls


def test_a_kept_result_is_the_computed_one(seeds_copy, monkeypatch):
    calls = _counting(monkeypatch)
    computed = Library(corpus=[seeds_copy]).stats(terms=5)
    again = Library(corpus=[seeds_copy]).stats(terms=5)
    assert again == computed and len(calls) == 1
    assert list(again) == list(computed)  # the same keys in the same order
    assert isinstance(again["terms"][0], tuple) and isinstance(again["authors"][0], tuple)
    Library(corpus=[seeds_copy]).stats(terms=7)  # another number of terms is another result
    assert len(calls) == 2


def test_a_change_to_the_records_is_counted(seeds_copy, monkeypatch):
    before = Library(corpus=[seeds_copy]).stats()
    paper = "Cats\n\nA. Cat, B. Dog\n\nWe study whiskers of cats with a new whisker model.\n"
    (seeds_copy / "cats.txt").write_text("Header\n\n" + paper, encoding="utf-8")
    after = Library(corpus=[seeds_copy]).stats()
    assert after["papers"] == before["papers"] + 1 and after["files"] == before["files"] + 1
    assert ("A. Cat", 1) in after["authors"]


@pytest.mark.parametrize(
    "damage",
    [
        b"\x00garbage",
        b"[1, 2]",
        b'{"key": null, "value": 1}',
        "wrong shape",
        "wrong types",
    ],
)
def test_a_damaged_kept_result_is_computed_again(seeds_copy, monkeypatch, damage):
    computed = Library(corpus=[seeds_copy]).stats()
    kept = _kept(Library(corpus=[seeds_copy]))
    whole = json.loads(kept.read_bytes())
    if damage == "wrong shape":
        whole["value"] = {"papers": 40}
        damage = json.dumps(whole).encode()
    elif damage == "wrong types":
        whole["value"]["authors"][0] = ["someone", "many"]
        damage = json.dumps(whole).encode()
    kept.write_bytes(damage)
    calls = _counting(monkeypatch)
    assert Library(corpus=[seeds_copy]).stats() == computed and len(calls) == 1
    assert json.loads(kept.read_bytes())["value"]["papers"] == 40  # written again
    assert Library(corpus=[seeds_copy]).stats() == computed and len(calls) == 1


def test_the_distinctive_terms_are_whooshs_on_a_many_segment_index(seeds_copy):
    """Each segment's terms read once give what Whoosh's ``most_distinctive_terms`` gives."""
    from rlpapers.index.stats import most_distinctive

    library = Library(corpus=[seeds_copy])
    library.stats()
    for n in range(3):  # each change is a new segment of the live view
        extra = f"A paper on whisker number {n}, whiskers and cat whisker models ({n}).\n"
        (seeds_copy / f"extra{n}.txt").write_text("Header\n\n" + extra, encoding="utf-8")
        library = Library(corpus=[seeds_copy])
        reader = library.index.searcher.reader()
        for number in (1, 10, 1000):
            assert most_distinctive(reader, "abstract", number) == (
                reader.most_distinctive_terms("abstract", number=number)
            )
    assert len(list(reader.leaf_readers())) > 1


def test_a_pipe_planted_as_the_kept_result_is_not_read(seeds_copy):
    """A FIFO in place of ``stats.json`` would block a read for ever: only a regular file is
    read, and the result is computed (its write then replaces the pipe)."""
    import os
    import threading

    computed = Library(corpus=[seeds_copy]).stats()
    kept = _kept(Library(corpus=[seeds_copy]))
    kept.unlink()
    os.mkfifo(kept)
    got: list[dict] = []
    reader = threading.Thread(
        target=lambda: got.append(Library(corpus=[seeds_copy]).stats()), daemon=True
    )
    reader.start()
    reader.join(60)  # a read of the pipe would never return
    assert not reader.is_alive() and got == [computed]


def test_a_result_kept_by_another_version_is_computed_again(seeds_copy, monkeypatch):
    import rlpapers.index

    Library(corpus=[seeds_copy]).stats()
    calls = _counting(monkeypatch)
    monkeypatch.setattr(rlpapers.index, "_version", lambda: "0.0.0-other")
    Library(corpus=[seeds_copy]).stats()
    assert len(calls) == 1


LATEX = (
    "Topology\n\nAda Lovelace, Ada Lovelace\n\n"
    "We bound the mixing time of $\\mathcal{M}$ under the mathcal norm $\\mathcal{N}_k$ with "
    "$\\sigma_k$, where $\\mathcal{X}$, $\\mathcal{Y}$, $\\mathcal{Z}$ and $\\sigma$ are "
    "given, mathcal is a set and $\\mathcal{M} \\subset \\mathcal{N} \\subset \\mathcal{Q}$.\n\n"
    "Charles Babbage\n\n"
    "We write $\\mathcal{A}$, $\\mathcal{B}$, $\\mathcal{C}$, $\\mathcal{D}$, $\\mathcal{E}$ "
    "and $\\mathcal{F}$ for the engines of a difference table and count their gears.\n"
)


def _varied(folder: Path) -> Path:
    """The seeds with a text paper joined with a .bib entry, papers with LaTeX, a repeated
    author and no topic, and metadata overrides of venue, year and tags."""
    from .test_identity_join import OTHER, TEXT, _entry

    (folder / "joined.txt").write_text(f"{TEXT}\n{OTHER}", encoding="utf-8")
    (folder / "refs.bib").write_text(_entry(), encoding="utf-8")
    (folder / "latex.txt").write_text(LATEX, encoding="utf-8")
    (folder / "metadata.yaml").write_text(
        "qerl:\n  venue: NeurIPS\n  year: 2024\n  tags: [quantized, rl, rl]\n"
        "zhan_tecrl:\n  doi: 10.1234/tecrl\n  tags: [entropy]\n",
        encoding="utf-8",
    )
    return folder


def test_the_counts_from_the_record_heads_are_count_by_over_the_papers(seeds_copy):
    """``stats`` counts the fields read from the records' heads, never decoding a paper: the
    lists are what ``count_by`` gives over ``Library.papers``, and the terms are filtered of
    LaTeX names as over the papers' abstracts."""
    from rlpapers.index import count_by
    from rlpapers.index.stats import COUNTS, distinctive_terms, without_latex

    library = Library(corpus=[_varied(seeds_copy)])
    papers = library.papers
    got = library.stats(terms=10)
    assert got["papers"] == len(papers)
    for name, field in COUNTS.items():
        assert got[name] == count_by(papers, field), name
    joined = next(p for p in papers if p.key == "zhan2025tecrl")
    assert joined.venue == "ICLR" and joined.tags == ("entropy",) and len(joined.sources) == 2
    assert ("NeurIPS", 1) in got["venues"] and ("rl", 2) in got["tags"]
    assert ("Ada Lovelace", 3) in got["authors"]  # twice in one paper, once in another
    reader = library.index.searcher.reader()
    found = distinctive_terms(reader, library.store.word_counts(), 20)
    assert found == distinctive_terms(reader, [library.store.vocabulary()], 20)
    abstracts = [p.abstract for p in papers]
    names = [{c.lower() for c in re.findall(r"\\([A-Za-z]+)", a)} for a in abstracts]
    commands = Counter(name for each in names for name in each)
    assert got["terms"] == without_latex(found, commands, abstracts)[:10]
    assert "mathcal" in [w for w, _ in found] and "mathcal" not in dict(got["terms"])


@pytest.mark.parametrize(
    "data",
    [
        b"\xff" * 40,
        b"\x00\x00\x00\x09\x00\x00\x00\x17abc",
        b"\x00\x00\x00\x01\x00\x00\x00\x17" + b"\x00" * 30,
    ],
    ids=["negative lengths", "cut short", "a key shorter than its field's number"],
)
def test_a_damaged_terms_table_is_an_error_not_a_loop(data):
    """The terms table read at once is checked entry by entry: damage raises (the view is
    then rebuilt by ``Index.healing``), and never loops or reads past the table."""
    import struct

    from rlpapers.index.stats import _entries

    with pytest.raises((ValueError, struct.error)):
        list(_entries(data, b"\x00\x02"))


WORDS = [
    "model", "models", "modeling", "modelling", "modelled", "modal", "learn", "learning",
    "learned", "learner", "dying", "die", "lying", "state-of-the-art", "it's", "ab", "über",
    "naïve", "data", "datum", "mathcal", "Models", "x2", "rl", "policies", "policy",
    "cats\ndogs",
]  # fmt: skip


def _stem(word: str) -> str:
    """The text analyser's stem of one lower-case word."""
    import Stemmer

    stemmed = word.isascii() and word.isalpha() and len(word) > 2
    return Stemmer.Stemmer("english").stemWord(word) if stemmed else word


def test_the_words_of_the_stems_are_those_each_stemmed_gives():
    from rlpapers.index.analysis import stemmed_to

    stems = {_stem(w) for w in WORDS[::3]} | {"ab", "state-of-the-art", "nothing", "cat"}
    expected = {w: _stem(w) for w in WORDS if _stem(w) in stems}
    assert stemmed_to(stems, set(WORDS)) == expected and len(expected) > 8


@given(
    st.lists(st.dictionaries(st.sampled_from(WORDS), st.integers(1, 3), max_size=12), max_size=4),
    st.sets(st.sampled_from(WORDS)),
)
def test_the_spellings_are_those_of_every_files_counts_summed(counts, shown):
    """Summing only the words of the stems shown, with ties, gives what summing every file's
    counts did: for each stem, its word counted most (more than once), the first among equals
    in the order of the summed counts."""
    from rlpapers.index.stats import spellings

    summed: Counter[str] = Counter()
    for each in counts:
        summed.update(each)
    stems = {_stem(w) for w in shown}
    expected: dict[str, tuple[int, str]] = {}
    for word, total in summed.items():
        stem = _stem(word)
        if total > 1 and stem in stems and total > expected.get(stem, (0, ""))[0]:
            expected[stem] = (total, word)
    assert spellings(stems, counts) == {stem: word for stem, (_, word) in expected.items()}


@pytest.mark.parametrize(
    "vocab", [zlib.compress(b'{"entropy": "many"}'), zlib.compress(b"[1, 2]"), b"{"]
)
def test_a_garbled_word_count_heals_the_store_and_stats_answers_as_before(seeds_copy, vocab):
    from rlpapers.errors import IndexNotice

    from .test_identity_healing import _garble

    computed = Library([seeds_copy]).stats()
    lib = Library([seeds_copy])
    for kept in lib.settings.index_dir.rglob("stats.json"):
        kept.unlink()
    _garble(lib, "UPDATE parses SET vocab = ?", vocab)
    with pytest.warns(IndexNotice, match="record store"):
        assert Library([seeds_copy]).stats() == computed


@given(st.dictionaries(st.text(max_size=3), st.integers(1, 4)), st.integers(0, 12))
def test_the_first_values_ranked_are_the_first_of_all_ranked(counts, top):
    """Only the values counted at least as often as the ``top``-th are sorted, ties at the
    cut included: the same first ``top`` as ranking them all."""
    from rlpapers.index import ranked

    assert ranked(Counter(counts), top) == ranked(Counter(counts))[:top]


def test_stats_of_the_commonest_values_are_the_first_of_all(seeds_copy):
    """``stats --top N`` asks for the first N of each list: they are those of every value,
    kept as another result."""
    whole = Library([_varied(seeds_copy)]).stats(terms=5)
    for top in (1, 2, 3, 10_000):
        cut = Library([seeds_copy]).stats(terms=5, top=top)
        assert cut == {
            k: v[:top] if isinstance(v, list) and k != "terms" else v for k, v in whole.items()
        }
    assert len(whole["authors"]) > 3 and whole["authors"][2][1] == whole["authors"][3][1]


def _forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``stats`` counts the heads in a process beside this one at any size, as in a process of
    one thread (a test worker may hold threads an earlier test left, and then ``beside`` rightly
    forks nothing); the pids forked."""
    import os
    import threading

    from rlpapers import library, workers

    monkeypatch.setattr(library, "STATS_BESIDE", 0)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    forked: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(workers.os, "fork", fork)
    return forked


def _waited_for(pid: int) -> bool:
    """Whether ``pid``, a process this one forked, has been waited for (no zombie left)."""
    import os

    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_stats_with_the_heads_counted_beside_are_those_counted_here(seeds_copy, monkeypatch):
    """In a big corpus the record heads are counted in a forked process while this one reads
    the terms: the result is the same, and the process is waited for."""
    from rlpapers.store import Store

    corpus = _varied(seeds_copy)
    here = Library([corpus], index_dir=seeds_copy.parent / "here").stats(terms=5, top=3)
    forked = _forks(monkeypatch)

    def not_here(self):
        raise AssertionError("the heads were counted in this process")

    monkeypatch.setattr(Store, "head_counts", not_here)
    beside = Library([corpus], index_dir=seeds_copy.parent / "beside").stats(terms=5, top=3)
    assert beside == here and len(forked) == 1 and _waited_for(forked[0])


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_stats_count_the_heads_here_when_the_process_beside_fails(seeds_copy, monkeypatch):
    from rlpapers.store import Store

    here = Library([seeds_copy], index_dir=seeds_copy.parent / "here").stats(terms=5)
    forked = _forks(monkeypatch)

    def fails(self):
        raise RuntimeError("a process beside that fails")

    monkeypatch.setattr(Store, "head_counts_apart", fails)
    beside = Library([seeds_copy], index_dir=seeds_copy.parent / "beside").stats(terms=5)
    assert beside == here and len(forked) == 1 and _waited_for(forked[0])


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_a_process_beside_gives_its_result_and_a_stop_ends_it_at_once(monkeypatch):
    import time

    from rlpapers.workers import beside

    forked = _forks(monkeypatch)
    with beside(lambda: {"papers": 3, "names": [("a", 1)]}) as result:
        assert result() == {"papers": 3, "names": [("a", 1)]}
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), beside(lambda: time.sleep(60)):
        raise KeyboardInterrupt  # Ctrl-C while the process beside is at work
    assert time.monotonic() - started < 5
    assert len(forked) == 2 and all(_waited_for(pid) for pid in forked)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork")
def test_a_process_of_several_threads_forks_nothing_beside(monkeypatch):
    """A lock another thread held at the fork stays held in the child (a notebook's threads,
    a server's): there the work is done in this process."""
    import threading

    from rlpapers.workers import beside

    forked = _forks(monkeypatch)
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    with beside(lambda: 1) as result:
        assert result() is None
    assert forked == []
