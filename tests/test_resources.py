"""Bounded resources, signals and no exit 70: each test here is one row of docs/reliability.md."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from .conftest import SEEDS, cpu_seconds, one_file_corpus, run
from .test_identity_processes import SLOW_PARSE as IDENTITY_SLOW_PARSE

SEED = "000_eda7530d3ab384ed.txt"  # the seed whose paper "preference" the metadata tests edit
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and devices")


@pytest.fixture
def corpus(tmp_path):
    """A corpus of one seed file, for the metadata cases."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    shutil.copy(SEEDS / SEED, folder)
    return folder


def _cli(*args, timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
    """The CLI in a child process, for what only a real process shows."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "rlpapers", *map(str, args)], timeout=timeout, **kwargs
    )


# --- metadata -------------------------------------------------------------------------------------

BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
preference:
  title: *g
"""


def test_a_yaml_alias_bomb_is_refused_naming_the_file(corpus):
    (corpus / "metadata.yaml").write_text(BOMB)
    started = cpu_seconds()
    result = run("--corpus", corpus, "list", "-f", "ids", code=2)
    assert cpu_seconds() - started < 5  # 9**7 "lol"s: 312 MB of title, then exit 70
    assert "metadata.yaml:6: its anchors and aliases expand to more than" in result.stderr
    assert result.stderr.count("\n") == 1


def test_anchors_and_aliases_that_share_a_list_are_still_read(corpus):
    (corpus / "metadata.yaml").write_text(
        "preference: {tags: &shared [offline, contrastive]}\n"
        "objectivepolicy: {tags: *shared, note: &loop [*loop]}\n"  # a list holding itself
    )
    papers = json.loads(run("--corpus", corpus, "list", "-f", "json").stdout)
    tagged = {p["key"]: p["tags"] for p in papers if p["tags"]}
    assert tagged == {p: ["offline", "contrastive"] for p in ("preference", "objectivepolicy")}


@pytest.mark.parametrize("year", [65536, -1, 0, 10000])
def test_a_year_out_of_range_is_exit_2_naming_file_and_line(corpus, year):
    (corpus / "metadata.yaml").write_text(f"# years\npreference:\n  year: {year}\n")
    for command in (["search", "reward"], ["stats"], ["similar", "preference"], ["list"]):
        result = run("--corpus", corpus, *command, code=2)
        assert f"metadata.yaml:3: year {year} is out of range: give one from 1 to 9999" in (
            result.stderr
        )
    (corpus / "metadata.yaml").write_text("preference:\n  year: 9999\n")
    assert "9999" in run("--corpus", corpus, "show", "preference", "-f", "tsv").stdout


@pytest.mark.parametrize("codec", ["base64", "rot13", "zlib", "hex"])
def test_a_non_text_codec_is_exit_2(corpus, codec):
    seed = corpus / SEED
    result = run("--encoding", codec, "parse", seed, code=2)
    assert f"'{codec}' is not a text encoding" in result.stderr
    (corpus / "metadata.yaml").write_text(f"encoding: {codec}\n")
    result = run("--corpus", corpus, "list", code=2)
    assert f"metadata.yaml:1: '{codec}' is not a text encoding" in result.stderr
    from rlpapers.errors import ParseError
    from rlpapers.parse import parse_bytes

    with pytest.raises(ParseError, match="not a text encoding"):
        parse_bytes(seed.read_bytes(), encoding=codec)


def test_a_text_codec_that_fails_without_a_position_is_exit_2(tmp_path):
    (tmp_path / "ascii.txt").write_text("Topic\n\nWe study reward shaping.\n")
    result = run("--encoding", "punycode", "parse", tmp_path / "ascii.txt", code=2)
    assert "ascii.txt: the text is not valid punycode" in result.stderr  # was exit 70


def test_utf32_with_a_bom_is_read_as_utf32(corpus):
    text = (corpus / SEED).read_text("utf-8")
    for codec in ("utf-32", "utf-32-be"):
        data = text.encode(codec) if codec == "utf-32" else b"\x00\x00\xfe\xff" + text.encode(codec)
        (corpus / "u32.txt").write_bytes(data)
        (corpus / SEED).unlink(missing_ok=True)
        papers = json.loads(run("parse", corpus / "u32.txt", "-f", "json").stdout)
        assert papers[0]["topic"] == "强化学习" and len(papers) == 20


def test_a_trailing_backslash_shows_as_one(corpus):
    (corpus / "metadata.yaml").write_text(
        'preference: {title: "ends with \\\\", note: "a\\\\", tags: ["x\\\\"]}\n'
    )
    card = run("--corpus", corpus, "show", "preference", "-f", "table").stdout
    assert "ends with \\ " in card and "a\\ " in card and "x\\ " in card
    assert "\\\\" not in card
    chart = run("--corpus", corpus, "stats", "-f", "table").stdout
    assert "x\\ " in chart and "\\\\" not in chart


# --- corpus files -------------------------------------------------------------------------------


def _under_memory_limit(limit: int, *args, stdin=None) -> subprocess.CompletedProcess:
    """The CLI in a child process whose address space is limited to ``limit`` bytes."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
        f"sys.argv = ['rlpapers', *{[str(a) for a in args]!r}]\n"
        "from rlpapers.cli import main\n"
        "main()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], stdin=stdin, capture_output=True, text=True, timeout=60
    )


@pytest.mark.skipif(not hasattr(os, "truncate") or sys.platform != "linux", reason="RLIMIT_AS")
def test_a_corpus_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(SEEDS / SEED, corpus)
    big = corpus / "big.txt"
    with big.open("wb") as handle:  # 300 MB: a page of text, then a hole the disk never holds
        handle.write(b"Topic\n\nWe study reward shaping in sparse settings.\n\n" * 2000)
        handle.truncate(300_000_000)
    started = cpu_seconds()  # the children's CPU time: reading 300 MB would take far more
    for args in (["--corpus", corpus, "list", "-f", "ids"], ["parse", big]):
        result = _under_memory_limit(1 << 30, *args)  # 1 GiB: the whole file did not fit
        assert result.returncode == 2, result.stderr
        assert result.stderr == (
            f"error: {big}: 286 MiB, more than the 256 MiB a corpus file may hold; "
            "split it into several files\n"
        )
    assert cpu_seconds() - started < 20


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS")
def test_a_corpus_file_too_large_for_the_memory_left_is_exit_2_naming_it(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    big = corpus / "big.txt"
    with big.open("wb") as handle:  # 40 MB, most of it a hole: under the size limit
        handle.write(b"Topic\n\nWe study reward shaping in sparse settings.\n\n" * 2000)
        handle.truncate(40_000_000)
    for args in (["--corpus", corpus, "list"], ["parse", big]):
        result = _under_memory_limit(150 << 20, *args)
        assert result.returncode == 2, result.stderr  # was exit 70, "MemoryError"
        assert result.stderr == (
            "error: big.txt: not enough memory to parse its 38 MiB; split it into several files\n"
        )


# --- reference lists ------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_ids_list_is_exit_2_in_bounded_memory():
    for args, stdin in ((["export", "--ids", "/dev/zero"], None), (["show", "-"], "/dev/zero")):
        with open(stdin or os.devnull, "rb") as source:
            result = _under_memory_limit(1 << 30, *args, stdin=source)
        assert result.returncode == 2, result.stderr  # was MemoryError
        assert result.stderr.endswith(":1: a NUL byte: not a text list of ids or keys\n")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_text_for_similar_is_exit_2_in_bounded_memory(tmp_path):
    """``similar --text -`` reads stdin only as far as the longest text it takes can reach (it
    read an endless stream until memory ran out: 24 GB on a machine without a limit)."""
    with open("/dev/zero", "rb") as source:
        result = _under_memory_limit(1 << 30, "similar", "--text", "-", stdin=source)
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        "error: <stdin>: the text is longer than 30,000 characters, the most --text takes\n"
    )  # was "not enough memory for this run", after reading a gigabyte
    longest = tmp_path / "longest.txt"
    longest.write_text("policy " * 4285, encoding="utf-32")  # 29,995 characters, 119,984 bytes
    with longest.open("rb") as source:
        result = _cli("similar", "--text", "-", "-n", "1", stdin=source)
    assert result.returncode == 0, result.stderr  # the longest text there is: read whole


def test_a_20mb_line_is_refused_quoting_only_its_start(tmp_path):
    listing = tmp_path / "ids.txt"
    listing.write_bytes(b"qerl\n" + b"x" * 20_000_000 + b"\n")
    result = run("export", "--ids", listing, code=2)
    assert result.stderr == (
        f"error: {listing}:2: a line longer than 65,536 bytes ('{'x' * 59}…'): "
        "not a list of ids or keys\n"
    )
    for codec in ("utf-16", "utf-32"):
        listing.write_bytes(("qerl\n" + "y" * 100_000 + "\n").encode(codec))
        result = run("export", "--ids", listing, code=2)
        assert f"ids.txt:2: a line longer than 65,536 bytes ('{'y' * 59}…')" in result.stderr
    # a long line under the bound is a reference like any other, quoted by its start
    listing.write_bytes(b"qerl\n" + b"z" * 65_535 + b"\n")
    result = run("export", "--ids", listing, "-f", "ids", code=1)
    assert f"no paper with id or key '{'z' * 59}…'" in result.stderr
    assert len(result.stderr) < 300 and len(result.stdout.split()) == 1


def test_a_long_reference_to_similar_or_the_library_is_quoted_by_its_start():
    """``similar REF`` quoted a reference it could not find whole: a 100,000-character REF was
    a 100,000-character error line (``show`` quoted its start already)."""
    from rlpapers import Library
    from rlpapers.errors import NotFoundError

    result = run("similar", "z" * 100_000, code=1)
    assert result.stderr.startswith(f"error: no paper with id or key '{'z' * 59}…'")
    assert len(result.stderr) < 300
    with pytest.raises(NotFoundError) as caught:
        Library([SEEDS]).get("qerl" * 25_000)
    assert len(str(caught.value)) < 300


def test_a_utf32_ids_list_with_a_bom_is_read(tmp_path):
    listing = tmp_path / "ids.txt"
    listing.write_text("qerl\r\npcl\r\n", encoding="utf-32")
    assert len(run("export", "--ids", listing, "-f", "ids").stdout.split()) == 2


@posix_only
@pytest.mark.parametrize(
    "args",
    [["show", "-"], ["export", "--ids", "-"], ["parse", "-"], ["similar", "--text", "-"]],
)
def test_a_closed_stdin_is_exit_2(args):
    result = _cli(*args, stdin=None, preexec_fn=lambda: os.close(0))
    assert result.returncode == 2, result.stderr  # was AttributeError, exit 70
    assert result.stderr == b"error: stdin is closed: there is nothing to read from '-'\n"


def two_workers(proc: subprocess.Popen[Any], what: str) -> list[Any]:
    """The two worker processes ``proc`` starts, once both are there (a minute at most)."""
    import psutil

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(psutil.Process(proc.pid).children()) < 2:
        time.sleep(0.05)
    workers = psutil.Process(proc.pid).children()
    assert len(workers) == 2, f"{what} never started its workers"
    return workers


# --- signals --------------------------------------------------------------------------------------

#: A parse worker busy with a file for ten minutes (a large file on a slow disk).
SLOW_PARSE = IDENTITY_SLOW_PARSE


def _slow_parse(tmp_path):
    """A first build parsing on two processes, and its two workers, busy with their files."""

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    (corpus / "c.txt").write_text("Topic\n\nWe propose CRL, a method for sparse rewards.\n")
    proc = subprocess.Popen(  # stderr to a file: workers left behind would hold a pipe open
        [sys.executable, "-c", SLOW_PARSE, "--corpus", str(corpus), "list", "-f", "ids"],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "stderr").open("w"),
        start_new_session=True,
    )
    workers = two_workers(proc, "the parse")
    time.sleep(0.5)  # the workers are past their start, into their files
    return proc, workers


def _gone_within(workers, seconds: float = 60) -> bool:
    """Whether the workers are gone within ``seconds``: the bound is generous (a loaded machine
    stretches the wall clock), as the failure it guards against is workers that go on with
    ten minutes of work (SLOW_PARSE) or for good."""
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize(
    ("name", "code", "message"),
    [
        ("SIGTERM", 143, "note: terminated (SIGTERM)\n"),
        ("SIGHUP", 129, "note: terminated (SIGHUP)\n"),
        ("SIGKILL", -9, ""),
    ],
)
def test_workers_end_with_the_parent_however_it_is_stopped(tmp_path, name, code, message):
    """The signal goes to the parent alone (``kill PID``, a supervisor, the OOM killer), not to
    its process group as a terminal's Ctrl-C does: the workers must not outlive it."""
    import signal

    proc, workers = _slow_parse(tmp_path)
    os.kill(proc.pid, getattr(signal, name))
    proc.wait(timeout=30)
    alone = _gone_within(workers)
    for worker in workers:  # a failing run leaves nothing behind either
        if worker.is_running():
            worker.kill()
    assert alone, "the workers outlived the parent"  # they parsed on for good
    err = (tmp_path / "stderr").read_text()
    assert proc.returncode == code and err == message, err


def test_ctrl_c_while_a_build_merges_its_runs_leaves_no_traceback(tmp_path, monkeypatch):
    """Ctrl-C while the writer merges the posting runs it spilled to disk (a large build):
    Whoosh's run readers, left suspended, delete their file when the collector closes them,
    after the build's folder is gone; each printed a FileNotFoundError traceback."""
    import gc

    import whoosh.externalsort as externalsort
    import whoosh.writing as writing

    from rlpapers import Library
    from rlpapers.index.postings import spill_with_marshal

    spill_with_marshal()  # the view's runs, as every build writes and reads them
    real_init = writing.PostingPool.__init__

    def small_pool(self, tempstore, segment, limitmb=128, **kwargs):
        real_init(self, tempstore, segment, limitmb=0.02, **kwargs)  # a run every ~20 kB

    real_read = externalsort.SortingPool._read_run
    opened = []

    def read_run(self, path):
        opened.append(path)
        if len(opened) == 3:  # two runs are being read: Ctrl-C now
            raise KeyboardInterrupt
        yield from real_read(self, path)

    monkeypatch.setattr(writing.PostingPool, "__init__", small_pool)
    monkeypatch.setattr(externalsort.SortingPool, "_read_run", read_run)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    lib = Library([SEEDS], index_dir=tmp_path / "index")
    with pytest.raises(KeyboardInterrupt):
        lib.search("policy")
    gc.collect()
    assert len(opened) == 3
    assert not unraisable, [u.exc_value for u in unraisable]
    assert not list((tmp_path / "index").rglob("gen-*"))  # the half-built generation is gone


# --- queries --------------------------------------------------------------------------------------


def test_parentheses_nest_at_most_100_deep_whatever_the_length_cap(monkeypatch):
    from rlpapers import querylang

    run("list", "-f", "ids")
    for depth in (101, 490):
        result = run("search", "(" * depth + "policy" + ")" * depth, code=2)
        assert result.stderr == (
            "error: invalid query at character 101: parentheses nest more than 100 deep\n"
        )  # 490 was "maximum recursion depth exceeded", exit 70
    assert run("search", "(" * 100 + "policy" + ")" * 100, "-f", "ids").stdout
    monkeypatch.setattr(querylang, "MAX_QUERY", 100_000)  # a longer length cap keeps this one
    result = run("search", "(" * 5000 + "policy" + ")" * 5000, code=2)
    assert "character 101: parentheses nest more than 100 deep" in result.stderr


def test_the_wildcard_budget_is_named_when_no_one_term_exceeds_it(tmp_path):
    from .test_reliability import _many_words_corpus

    corpus = _many_words_corpus(tmp_path / "corpus")  # w0000 … w1499
    assert run("-c", corpus, "search", "w1*", "-f", "ids").stdout  # 500 words, and 70 titles
    result = run("-c", corpus, "search", "w14* w0*", code=2)
    assert result.stderr == (
        "error: invalid query at character 6: 'w14*' and 'w0*' together match more than 1,000 "
        "words, the most the wildcards, ranges and fuzzy terms of a query may stand for: "
        "make them more specific\n"
    )  # was "'w0*' matches more than 1,000 words", as if the budget were its own


def test_wildcards_and_fuzzy_terms_that_read_too_much_of_the_index_are_refused(tmp_path):
    """A wildcard without a leading letter reads every word of each field it is looked up in,
    and a fuzzy term those of its first letter, however few words they stand for: 100 leading
    wildcards that stood for no word took 23 s over 3,000 papers, 1,000 fuzzy terms 26 s (a
    30,000-character query of them, many minutes)."""
    from rlpapers.index import budget

    from .test_reliability import _many_words_corpus

    corpus = _many_words_corpus(tmp_path / "corpus", 20_000)  # w00000 … w19999
    assert run("-c", corpus, "search", "*9999", "-f", "ids").stdout  # one is a query
    start = cpu_seconds()
    result = run("-c", corpus, "search", " ".join(f"*q{i}" for i in range(100)), code=2)
    assert result.stderr == (
        "error: invalid query at character 76: '*q0', '*q1', '*q2', '*q3', '*q4' and "
        "13 other terms read more than 400,000 words of the index to find what they match, the "
        "most the wildcards, ranges and fuzzy terms of a query may read: give them more leading "
        "letters, or fewer of them\n"
    )
    fuzzy = " ".join(f"w{i:05d}q~" for i in range(3000))
    assert "read more than 400,000 words" in run("-c", corpus, "search", fuzzy, code=2).stderr
    assert cpu_seconds() - start < 20  # the two refusals (49 s before the budget): bounded
    assert budget.MAX_READ == 400_000


def test_a_phrase_repeating_a_word_more_than_any_paper_does_is_answered_without_reading_it(
    tmp_path,
):
    """Whoosh's phrase matcher reads every paper holding all the phrase's words, at a cost that
    grows with the phrase: "learning learning …" 1,000 times took 7 s over 3,000 papers. A
    phrase that says a word more times than any paper holds it matches nothing, and the index
    keeps with each word the most times one paper holds it."""
    from rlpapers import Library

    blocks = [
        f"Paper {i} on learning: learning to learn, learning fast, learning more, learning well, "
        f"with word{i} and the policy policy gradient."
        for i in range(600)
    ]
    corpus = one_file_corpus(tmp_path / "corpus", blocks)
    with Library([corpus], index_dir=tmp_path / "index") as lib:
        assert lib.count("policy") == 600
        start = cpu_seconds()
        assert lib.search('"' + " ".join(["learning"] * 3000) + '"') == []
        assert lib.search('abstract:"' + "policy " * 1000 + 'gradient"') == []
        assert cpu_seconds() - start < 6  # was 10 s
        # a word said as many times as a paper holds it still matches
        assert len(lib.search('"policy policy gradient"', limit=None)) == 600
        assert len(lib.search('"word7 and the policy policy"', limit=None)) == 1


def test_phrases_that_would_read_too_many_papers_positions_are_refused(tmp_path):
    """Each quoted phrase reads the word positions of every paper holding all its words: 1,400
    phrases of two common words ("that with" "that this" …, a 30,000-character query) took 15 s
    over 3,000 papers. A query's phrases may read at most 250,000 papers' positions, each phrase
    counted by the papers holding its rarest word."""
    from rlpapers import Library, QueryError

    words = [f"c{i:02d}" for i in range(40)]
    blocks = [f"Paper {i}: " + " ".join(words) + f" word{i}." for i in range(600)]
    corpus = one_file_corpus(tmp_path / "corpus", blocks)
    pairs = [f'"{a} {b}"' for a in words for b in words if a != b][:1400]  # 16,800 characters
    with Library([corpus], index_dir=tmp_path / "index") as lib:
        start = cpu_seconds()
        with pytest.raises(QueryError, match="phrases .* read the word positions of more than"):
            lib.search(" ".join(pairs))
        assert cpu_seconds() - start < 7  # was 12 s
        assert len(lib.search(" ".join(pairs[:20]), limit=None)) == 600
        assert len(lib.search('"c01 c02" OR "c03 c04"', limit=None)) == 600


def test_a_thousand_words_joined_by_and_are_a_query_not_a_damaged_index(tmp_path):
    """Whoosh joins the parts of an AND in a tree weighted by how many papers each part has,
    like a Huffman code: words of very different frequencies made it as deep as the query is
    long, and 1,000 common words passed Python's recursion limit. That was taken for a damaged
    index: rebuilt (12 s over 3,000 papers), then exit 70."""
    from rlpapers import Library

    blocks = [  # word k in every (k + 1)-th paper: frequencies spread as in real text
        f"Paper {i} about " + " ".join(f"w{k}" for k in range(1500) if i % (k + 1) == 0)
        for i in range(3000)
    ]
    corpus = one_file_corpus(tmp_path / "corpus", [block + "." for block in blocks])
    words = [f"w{k}" for k in range(1500)]
    with Library([corpus], index_dir=tmp_path / "index") as lib:
        for query in (" AND ".join(words), " ".join(f"+{word}" for word in words)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no "the search index was damaged"
                assert [hit.paper.title[:13] for hit in lib.search(query)] == ["Paper 0 about"]


def test_a_query_of_many_nots_is_refused_and_exclusions_are_one(tmp_path):
    """Each NOT visits every paper its part does not match: "learning AND NOT zz0 AND NOT zz1 …"
    with 1,000 NOTs took 10 s over 3,000 papers (1,000 NOTs alone 17 s). A query's NOTs may
    visit at most 1,000,000 papers in all; ``-word`` exclusions are one NOT however many."""
    from rlpapers import Library, QueryError

    blocks = [f"Paper {i} about learning, with word{i} in it." for i in range(3000)]
    corpus = one_file_corpus(tmp_path / "corpus", blocks)
    with Library([corpus], index_dir=tmp_path / "index") as lib:
        start = cpu_seconds()
        for query in (
            "learning AND " + " AND ".join(f"NOT zz{i}" for i in range(500)),
            " OR ".join(f"NOT word{i}" for i in range(500)),
        ):
            with pytest.raises(QueryError, match="its 500 NOTs would visit 1,500,000 papers"):
                lib.search(query)
        assert cpu_seconds() - start < 5  # was 8 s; what is left is Whoosh's parse
        exclusions = "learning " + " ".join(f"-word{i}" for i in range(2000))
        assert len(lib.search(exclusions, limit=None)) == 1000
        assert len(lib.search("learning AND NOT word1 AND NOT word2", limit=None)) == 2998


def test_a_long_query_in_the_query_language_is_parsed_in_linear_time():
    """Whoosh's hash of an OR xors its parts' hashes, so a word's hash cancelled out of the OR of
    its six fields: every word had one hash, and the parser's removal of repeated parts compared
    each word with all the others (2,000 NOTs, 22,000 characters: 4 s; 30,000: 8 s)."""
    import time

    from rlpapers import Library
    from rlpapers.index.query import parse

    schema = Library([SEEDS]).index.schema
    for query in (
        " OR ".join(f"NOT w{i}" for i in range(2000)),
        " AND ".join(f"w{i}" for i in range(2000)),
        " ".join(f"+w{i}" for i in range(3000)),
    ):
        start = time.process_time()
        parse(query, schema)
        assert time.process_time() - start < 1.5, query[:30]


def test_a_long_query_that_finds_nothing_gets_no_spelling_suggestion():
    """The suggestion for a query that found nothing compared each unknown word with the whole
    vocabulary: 5,000 unknown words took 19 to 52 s over 3,000 papers, and the suggestion was
    the whole query again, a 30,000-character note. A query of more than 20 words gets none."""
    from itertools import product

    from rlpapers import Library

    words = ["p" + "".join(letters) for letters in product("bcdfg", repeat=5)][:3000]
    lib = Library([SEEDS])
    start = cpu_seconds()
    assert lib.suggest(" ".join(words)) is None
    assert lib.suggest("exploraton " + " ".join(words[:19])) is not None  # 20 words: suggested
    assert cpu_seconds() - start < 3  # 19 to 52 s before
    result = run("search", " ".join(words), code=1)
    assert result.stderr == "note: no papers match\n"


# --- sentence vectors -----------------------------------------------------------------------------


_DAMAGED_NOTE = (
    "note: 1 sentence vector was damaged (the wrong length, or values that are not finite "
    "numbers); dropped, and embedded again by the next search that needs it\n"
)


def _two_topics(tmp_path: Path) -> Path:
    """A corpus of two small files on two topics, for the sentence vectors (skipped without the
    semantic extra)."""
    for module in ("numpy", "onnxruntime", "tokenizers"):
        pytest.importorskip(module)
    from .test_semantic_search import FINANCE, VEHICLES

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(VEHICLES)
    (corpus / "b.txt").write_text(FINANCE)
    return corpus


def _replace_vector(pid: str, damage: Any) -> bytes:
    """Replace paper ``pid``'s stored vector with ``damage(vector)``; the vector it had."""
    import sqlite3

    store = next(Path(os.environ["RLPAPERS_INDEX_DIR"]).glob("*/store.db"))
    with sqlite3.connect(store) as con:
        (blob,) = con.execute("SELECT vector FROM embeddings WHERE id = ?", (pid,)).fetchone()
        con.execute("UPDATE embeddings SET vector = ? WHERE id = ?", (damage(blob), pid))
    return bytes(blob)


def _vector_damaged_then_healed(tmp_path: Path, damage: Any) -> bytes:
    """A semantic search of two small files; ``damage(blob)`` gives what the first hit's stored
    vector becomes. The next search notes the damage once, the one after finds what the first
    found, without a word; the first hit's vector as stored then."""
    corpus = _two_topics(tmp_path)
    search = ("--corpus", corpus, "search", "automobiles", "--mode", "semantic", "-f", "ids")
    before = run(*search).stdout.split()
    _replace_vector(before[0], damage)
    assert run(*search).stderr == _DAMAGED_NOTE  # it was never matched, without a word
    healed = run(*search)
    assert healed.stderr == "" and healed.stdout.split() == before
    return _replace_vector(before[0], lambda blob: blob)


@pytest.mark.parametrize("bad", ["nan", "inf", "-inf"])
def test_a_vector_that_is_not_finite_is_damage_and_embedded_again(tmp_path, bad):
    np = pytest.importorskip("numpy")

    def one_value_bad(blob: bytes) -> bytes:
        vector = np.frombuffer(blob, dtype=np.float16).copy()
        vector[5] = float(bad)
        return bytes(vector.tobytes())

    healed = _vector_damaged_then_healed(tmp_path, one_value_bad)
    assert np.isfinite(np.frombuffer(healed, dtype=np.float16)).all()


@pytest.mark.parametrize("size", [0, 2, 100, 101, 770])
def test_a_vector_of_the_wrong_length_is_damage_and_embedded_again(tmp_path, size):
    """A stored vector cut short or grown (a faulty disk, a hand): it was exit 70 on every
    search (numpy could not fit it in its row), or, of one value, that value in every place."""
    assert len(_vector_damaged_then_healed(tmp_path, lambda blob: (blob * 2)[:size])) == 768


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
@pytest.mark.parametrize("bad", ["nan", "short"])
def test_similar_to_a_paper_whose_vector_is_damaged_embeds_it_again_at_once(tmp_path, mode, bad):
    """The paper's own vector dropped as damage on the way: it was "no similar papers", exit 1
    (semantic), or the words alone (hybrid), until the next run."""
    np = pytest.importorskip("numpy")
    corpus = _two_topics(tmp_path)
    first = run("--corpus", corpus, "list", "-f", "ids").stdout.split()[0]
    similar = ("--corpus", corpus, "similar", first, "--mode", mode, "-f", "ids", "--scores")
    before = run(*similar).stdout

    def damaged(blob: bytes) -> bytes:
        vector = np.frombuffer(blob, dtype=np.float16).copy()
        vector[5] = float("nan")
        return bytes(vector.tobytes()) if bad == "nan" else blob[:100]

    _replace_vector(first, damaged)
    noticed = run(*similar)
    assert noticed.stderr == _DAMAGED_NOTE and noticed.stdout == before
    assert run(*similar).stderr == ""


# --- index --status -------------------------------------------------------------------------------


def _read_only_run(folder: Path, *args) -> subprocess.CompletedProcess:
    """The CLI with ``folder`` read-only (a read-only bind mount in a mount namespace of its
    own: chmod does not stop root, who runs CI)."""
    command = [sys.executable, "-m", "rlpapers", *map(str, args)]
    script = (
        f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
        'touch "$0/probe" 2>/dev/null && exit 99; exec "$@"'
    )
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(folder), *command],
        capture_output=True,
        text=True,
        timeout=30,
    )


def _can_mount_read_only(tmp_path: Path) -> bool:
    if sys.platform != "linux" or shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    probe = tmp_path / "probe-folder"
    probe.mkdir()
    result = _read_only_run(probe, "--version")
    return result.returncode == 0


def test_index_status_on_a_read_only_folder_reports_and_writes_nothing(tmp_path, corpus):
    if not _can_mount_read_only(tmp_path):
        pytest.skip("needs root and unshare for a read-only bind mount")
    index = Path(os.environ["RLPAPERS_INDEX_DIR"])
    run("--corpus", corpus, "search", "policy", "-f", "ids")
    before = sorted((p.relative_to(index), p.stat().st_mtime_ns) for p in index.rglob("*"))
    result = _read_only_run(index, "--corpus", corpus, "index", "--status")
    assert result.returncode == 0, result.stderr  # is exit 2, "is not writable"
    assert "damaged" not in result.stdout and "fresh" in result.stdout, result.stdout
    assert sorted((p.relative_to(index), p.stat().st_mtime_ns) for p in index.rglob("*")) == before
    result = _read_only_run(index, "--corpus", corpus, "index")  # building is still refused
    assert result.returncode == 2 and "is not writable" in result.stderr


# --- files that change under a run --------------------------------------------------------------


def test_a_corpus_file_that_vanishes_mid_run_is_skipped_with_a_note(tmp_path):
    from rlpapers import Library
    from rlpapers.errors import ParseWarning

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    lib = Library([corpus], index_dir=tmp_path / "index")
    assert len(lib.files) == 2  # listed: the run has its files
    (corpus / SEED).rename(tmp_path / "elsewhere.txt")  # another program renames one meanwhile
    with pytest.warns(ParseWarning, match=f"{SEED}: vanished during the run .*; skipped"):
        papers = lib.papers  # was ParseError: No such file or directory, exit 2
    assert papers and {p.source for p in papers} == {"003_9c520f58a50b3392.txt"}
    (tmp_path / "elsewhere.txt").rename(corpus / SEED)  # back: its records are back
    assert len(Library([corpus], index_dir=tmp_path / "index").papers) == 40


@pytest.mark.slow
@posix_only
@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGKILL", -9)])
def test_index_workers_end_with_the_parent_too(tmp_path, name, code):
    """The same for the index writer's two worker processes, forked by Whoosh: SIGTERM is one
    line and exit 143 (no traceback from the workers), SIGKILL leaves no worker behind."""
    import signal

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    blocks = [f"We propose M{i}RL, a way to learn policy {i} on task {i}." for i in range(3000)]
    (corpus / "a.txt").write_text("Topic\n\n" + "\n\n".join(blocks) + "\n")
    script = (
        "import sys, time\nimport rlpapers.index.view as view\nview.PARALLEL_FROM = 1\n"
        "real = view.document\n"
        "def slow(paper):\n    time.sleep(0.002)\n    return real(paper)\n"
        "view.document = slow\n"  # a build of some seconds, whatever the machine
        "from rlpapers.cli import main\nsys.argv = ['rlpapers', *sys.argv[1:]]\nmain()\n"
    )
    argv = [sys.executable, "-c", script, "--corpus", str(corpus)]
    subprocess.run([*argv, "list", "-f", "ids"], check=True, capture_output=True, timeout=120)
    proc = subprocess.Popen(
        [*argv, "index"],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "stderr").open("w"),
        start_new_session=True,
    )
    workers = two_workers(proc, "the writer")
    os.kill(proc.pid, getattr(signal, name))
    proc.wait(timeout=30)
    alone = _gone_within(workers, 2)  # orphaned, they would end with their few seconds of work
    for worker in workers:
        if worker.is_running():
            worker.kill()
    assert alone, "the index workers outlived the parent"
    err = (tmp_path / "stderr").read_text()
    assert proc.returncode == code, err
    assert err == ("note: terminated (SIGTERM)\n" if name == "SIGTERM" else ""), err


@posix_only
def test_sigterm_while_a_command_waits_is_one_line_and_exit_143():
    """SIGTERM to a command that is only waiting (``show -`` on a silent pipe): one line, 143
    (it ended at once with no word, as a killed process, leaving 143 to the shell alone)."""
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "rlpapers", "show", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # started, reading stdin
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and err == "note: terminated (SIGTERM)\n" and out == "", err


@posix_only
def test_sigterm_outside_a_command_is_the_same_line_and_code():
    """Before or after a command runs (start-up, closing), nothing is left to clean up: the
    handler itself reports and exits (Click would print "Aborted!" and exit 1)."""
    result = subprocess.run(
        [sys.executable, "-c", "from rlpapers.cli import _terminate; _terminate(15, None)"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 143 and result.stderr == "note: terminated (SIGTERM)\n"


@posix_only
def test_a_worker_not_forked_by_its_parent_still_ends_with_it():
    """Under a fork server (Python 3.14's default on Linux) a worker's parent process is the
    server, not the run: the kernel's tie cannot be used, and a thread watches the run."""
    from rlpapers.workers import die_with_parent

    run_ = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    script = f"from rlpapers.workers import die_with_parent\ndie_with_parent({run_.pid})\n"
    worker = subprocess.Popen([sys.executable, "-c", script + "import time; time.sleep(60)"])
    try:
        time.sleep(1.5)
        assert worker.poll() is None  # the run is there: the worker stays
        run_.kill()
        run_.wait()
        worker.wait(timeout=2)  # gone within 2 s of the run
    finally:
        for proc in (run_, worker):
            if proc.poll() is None:
                proc.kill()
    assert callable(die_with_parent)


def test_a_ctrl_c_python_runs_inside_a_fork_hook_still_stops_the_run():
    """A Ctrl-C that lands just before the signals are held back is handled at Python's next
    instruction, which may be in a fork hook (logging's lock release), where an exception is
    printed as "ignored" and dropped: the interrupted build went on and exited 0."""
    from rlpapers.workers import stops_held

    class Hook:
        def __del__(self):  # like a fork hook: an exception here is only "ignored"
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), stops_held():
        Hook()


def test_stopping_a_build_whose_worker_never_started_is_quiet():
    """Ctrl-C while the writer started a worker leaves a task with no process: stopping the
    workers raised AttributeError, which replaced the Ctrl-C (the build then 'healed' a
    'damaged' index and the run exited 0)."""
    import multiprocessing

    from rlpapers.index.view import _stop_children

    class Writer:
        tasks = [multiprocessing.Process(target=print)]  # never started

    _stop_children(Writer())


def test_a_corpus_file_that_vanishes_between_stat_and_read_is_skipped(tmp_path, monkeypatch):
    """The moment after the corpus was stat-ed and before its changed files are read: it was
    exit 2 naming the file; now the file is skipped with a warning, as at the stat."""
    from rlpapers import Library
    from rlpapers.errors import ParseWarning
    from rlpapers.store import refresh

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    real = refresh.read_bytes

    def renamed_meanwhile(path: str) -> bytes:
        if path.endswith(SEED) and (corpus / SEED).exists():
            (corpus / SEED).rename(tmp_path / "elsewhere.txt")
        return real(path)

    monkeypatch.setattr(refresh, "read_bytes", renamed_meanwhile)
    with pytest.warns(ParseWarning, match=f"{SEED}: vanished during the run .*; skipped"):
        papers = Library([corpus], index_dir=tmp_path / "index").papers
    assert papers and {p.source for p in papers} == {"003_9c520f58a50b3392.txt"}


# --- SQLite's temporary files -------------------------------------------------------------------

#: The CLI with its parse forced onto the worker processes (as a corpus over 2 MB is parsed),
#: so that the refresh keeps the workers' fingerprints until the ledger takes them.
POOLED_MAIN = (
    "import os, sys\nos.cpu_count = lambda: 2\nimport rlpapers.store.parsing as parsing\n"
    "parsing.PARALLEL_BYTES = 0\nfrom rlpapers.cli import main\n"
    "sys.argv = ['rlpapers', *sys.argv[1:]]\nmain()\n"
)


def _with_full_tmpdir(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI with TMPDIR on a 16 KiB tmpfs (mounted in a mount namespace of its own)."""
    script = f'mount -t tmpfs -o size=16k tmpfs "{tmp}" && exec "$@"'
    command = [sys.executable, "-c", POOLED_MAIN, *args]
    env = dict(os.environ, TMPDIR=str(tmp))
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", *command],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_full_tmpdir_does_not_stop_a_build(tmp_path):
    if sys.platform != "linux" or shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare to mount a small tmpfs")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for f in range(2):  # 100 papers a file: each file's fingerprints are about 50 KB
        blocks = [
            f"We propose M{f}x{i}RL, a method. "
            + " ".join(f"w{f}x{i}x{j}" for j in range(140))
            + "."
            for i in range(100)
        ]
        (corpus / f"f{f}.txt").write_text("Topic\n\n" + "\n\n".join(blocks) + "\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    if _with_full_tmpdir(tmp, "--version").returncode != 0:
        pytest.skip("a tmpfs cannot be mounted here (a container without the capability)")
    done = _with_full_tmpdir(tmp, "--corpus", str(corpus), "list", "-f", "ids")
    assert done.returncode == 0, done.stderr  # is 2: "cannot write the record store in …:
    assert len(done.stdout.split()) == 200  # database or disk is full; choose another folder"
