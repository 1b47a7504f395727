"""Hostile input and faults: bounded time, no lost or clobbered files, exit codes from the contract.

Each test here is one row of docs/reliability.md.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from rlpapers import Library, export
from rlpapers.errors import ParseWarning
from rlpapers.model import Paper

from .conftest import SEEDS, cpu_seconds, run

TIMEOUT = 5  # seconds: the bound for any command over the bundled corpus plus small hostile files
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file types")


@posix_only
def test_corpus_folder_skips_fifos_sockets_devices_folders_and_broken_links(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    os.mkfifo(corpus / "fifo.txt")  # reading it would block forever
    (corpus / "dangling.txt").symlink_to(tmp_path / "nowhere.txt")
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    (corpus / "folder.txt").mkdir()
    (corpus / "null.txt").symlink_to(os.devnull)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(corpus / "sock.txt"))
        result = run("--corpus", corpus, "list", "-f", "ids")
    assert len(result.stdout.split()) == 40
    warned = {line.split(":")[1].strip().rsplit("/", 1)[-1] for line in result.stderr.splitlines()}
    assert warned == {"fifo.txt", "dangling.txt", "loop.txt", "folder.txt", "null.txt", "sock.txt"}
    assert "a FIFO" in result.stderr and "a symlink loop" in result.stderr


@posix_only
def test_a_fifo_named_as_the_corpus_is_refused_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo.txt")
    result = run("--corpus", tmp_path / "fifo.txt", "list", code=2)
    assert "not a regular file" in result.stderr


# --- output: -o files and stdout -----------------------------------------------------------------


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """The installed CLI in a subprocess, for what only a real process shows (file descriptors,
    signals, a full disk under stdout)."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(
        [sys.executable, "-m", "rlpapers", *map(str, args)],
        stderr=subprocess.PIPE,
        timeout=TIMEOUT,
        **kwargs,
    )


@posix_only
def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.bib"
    target.write_text("old\n")
    link = tmp_path / "link.bib"
    link.symlink_to(target)
    run("export", "-o", link, "--force", "-f", "ids")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert len(target.read_text().split()) == 40


@posix_only
@pytest.mark.parametrize("size", [0, 40, 100, 4096])
def test_a_record_store_that_is_a_symlink_is_never_written_through(tmp_path, size):
    """``store.db`` replaced by a link to a file elsewhere: SQLite took a file of 100 bytes or
    less for an empty database and wrote its own through the link. The link goes (with a note),
    the file it names stays as it was, and the store is rebuilt in the index folder."""
    index = tmp_path / "index"
    listed = run("--index-dir", index, "list", "-f", "ids").stdout
    (store,) = index.glob("*/store.db")
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_bytes(b"x" * size)
    store.unlink()
    store.symlink_to(elsewhere)
    again = run("--index-dir", index, "list", "-f", "ids")
    assert again.stdout == listed and "was a symbolic link, not followed" in again.stderr
    assert elsewhere.read_bytes() == b"x" * size and not store.is_symlink()


@posix_only
def test_output_keeps_an_existing_files_mode_and_gives_a_new_file_the_umasks(tmp_path):
    shared = tmp_path / "shared.bib"
    shared.write_text("old\n")
    shared.chmod(0o664)
    run("export", "-o", shared, "--force", "-f", "ids")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664
    old = os.umask(0o027)
    try:
        run("export", "-o", tmp_path / "new.bib", "-f", "ids")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.bib").stat().st_mode) == 0o640


@posix_only
def test_output_to_a_device_or_fifo_is_written_straight_never_renamed_over(tmp_path):
    run("export", "-o", os.devnull, "-f", "ids")
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    run("export", "-o", fifo, "-f", "ids")
    reader.join(TIMEOUT)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and len(received[0].split()) == 40
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_o_or_stdout_is_exit_2_with_one_line():
    for args, redirect in ((["-o", "/dev/full"], subprocess.PIPE), ([], open("/dev/full", "wb"))):
        proc = _cli("export", *args, stdout=redirect)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.decode().splitlines() == [
            f"error: cannot write {'/dev/full' if args else 'the output'}: No space left on device"
        ]
    proc = _cli("list", "-f", "table", stdout=open("/dev/full", "wb"))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_a_failed_rename_leaves_neither_a_partial_file_nor_a_temporary(tmp_path, monkeypatch):
    target = tmp_path / "refs.bib"
    target.write_text("old\n")
    run("list", "-f", "ids")  # the index is built before the disk fills up

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    result = run("export", "-o", target, "--force", code=2)
    assert result.stderr == f"error: cannot write {target}: No space left on device\n"
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["refs.bib"]


@posix_only
def test_a_closed_stdout_is_exit_2_not_an_internal_error():
    for fmt in ("tsv", "table"):
        proc = subprocess.run(
            f"'{sys.executable}' -m rlpapers list -f {fmt} >&-",
            shell=True,
            stderr=subprocess.PIPE,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 2
        assert proc.stderr.decode() == "error: cannot write the output: stdout is closed\n"


@posix_only
@pytest.mark.parametrize("fmt", ["table", "tsv", "bibtex"])
def test_a_reader_gone_before_the_output_is_exit_141_at_once(fmt):
    read, write = os.pipe()
    os.close(read)  # every write now fails with EPIPE
    try:
        proc = _cli("list", "-f", fmt, stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == b""


@posix_only
def test_a_reader_gone_midway_through_one_large_write_is_exit_141():
    """The JSON Lines of the seeds (about 75 KB) go out in one write, larger than a pipe holds:
    the reader leaves while it blocks, and the write took only part (which Python says only by
    its count). That is exit 141 like any broken pipe, not a success with the rest dropped."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rlpapers", "list", "-f", "jsonl"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.read(10)
    time.sleep(0.5)  # the writer fills the pipe and waits
    proc.stdout.close()
    assert proc.wait(timeout=TIMEOUT) == 141
    assert proc.stderr is not None and proc.stderr.read() == b""


def test_stdout_gets_every_byte_of_a_write_it_takes_in_parts():
    from rlpapers.files import write_stdout

    class Sink(io.BytesIO):
        def write(self, data) -> int:  # what a pipe's buffered writer may do: take part
            return super().write(bytes(data[:5]))

    class Stream(io.StringIO):
        buffer = Sink()

    stream = Stream()
    write_stdout("naïve " * 1000, stream)
    assert stream.buffer.getvalue().decode() == "naïve " * 1000


def test_a_full_non_blocking_stdout_is_named():
    from rlpapers.files import OutputError, write_stdout

    class Full(io.BytesIO):
        def write(self, data) -> None:  # a non-blocking pipe with no room: nothing taken
            return None

    class Stream(io.StringIO):
        buffer = Full()

    with pytest.raises(OutputError, match="cannot write the output: Resource temporarily"):
        write_stdout("x", Stream())


def test_the_table_is_drawn_in_chunks_so_a_long_listing_starts_at_once(monkeypatch):
    from rlpapers.cli import render

    printed: list[int] = []
    monkeypatch.setattr(render, "TABLE_CHUNK", 7)
    monkeypatch.setattr(
        render, "_console", lambda stderr=False: type("C", (), {"print": printed.append})()
    )
    render._papers_table(Library(corpus=[SEEDS]).papers)
    tables = [t for t in printed if not isinstance(t, str)]
    assert [t.row_count for t in tables] == [7] * 5 + [5]
    assert tables[0].show_header and not any(t.show_header for t in tables[1:])
    assert len({t.columns[0].width for t in tables}) == 1


# --- Markdown: no raw HTML, no links but http(s) and DOIs ------------------------------------------

HOSTILE_ABSTRACT = (
    "We show <script>alert(1)</script> and [click](javascript:alert(2)) and "
    "<javascript:alert(3)> and \\<img src=x onerror=alert(4)> and ![i](data:x) and *emphasis*."
)


def _markdown_tokens(text: str) -> list:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    return [child for t in tokens for child in (t.children or [t])]


def test_markdown_escapes_raw_html_and_neutralises_links_in_abstracts():
    paper = Paper(id="x", key="k", title="T", abstract=HOSTILE_ABSTRACT, url="javascript:alert(5)")
    text = export([paper], "markdown")
    tokens = _markdown_tokens(text)
    assert not [t for t in tokens if t.type.startswith(("html", "link", "image"))]
    html = MarkdownIt("commonmark").render(text)
    assert "<script" not in html and "<img" not in html and "javascript:alert(5)" in html
    assert "<em>emphasis</em>" in html  # the abstract's own emphasis is kept


@pytest.mark.parametrize(
    ("url", "href"),
    [
        ("https://arxiv.org/abs/2510.11696", "https://arxiv.org/abs/2510.11696"),
        ("doi:10.48550/arXiv.2510.11696", "https://doi.org/10.48550/arXiv.2510.11696"),
        ("javascript:alert(1)", None),
        ("data:text/html,<b>x</b>", None),
        ("http://a.example/<script>", None),
    ],
)
def test_markdown_links_only_http_and_doi(url, href):
    text = export([Paper(id="x", key="k", title="T", abstract="A.", url=url)], "markdown")
    links = [t.attrs.get("href") for t in _markdown_tokens(text) if t.type == "link_open"]
    assert links == ([href] if href else [])


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab <>[]()\\!:&/*_`#")), max_size=80))
def test_no_abstract_becomes_html_or_a_link_in_markdown(abstract):
    paper = Paper(id="x", key="k", title="T", abstract=abstract.strip() or "a")
    tokens = _markdown_tokens(export([paper], "markdown"))
    assert not [t for t in tokens if t.type.startswith(("html", "link", "image"))]


# --- queries: bounded time, clear errors -----------------------------------------------------------


def _many_words_corpus(folder, words: int = 1500):
    """A small corpus whose abstracts hold ``words`` distinct words w0000, w0001, …"""
    folder.mkdir()
    blocks = [
        "Synthetic\n",
        *(
            " ".join(f"w{i:04d}" for i in range(start, start + 100)) + " policy gradient."
            for start in range(0, words, 100)
        ),
    ]
    (folder / "many.txt").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "a" * 1_001,
            "character 1: a word of the query is 1,001 characters long; the most is 1,000",
        ),
        (
            "policy " + "a" * 20_000,
            "character 8: a word of the query is 20,000 characters long; the most is 1,000",
        ),
        (
            "policy gradient " * 1_900,
            "character 30001: the query is 30,400 characters long; the most is 30,000",
        ),
    ],
)
def test_a_huge_word_or_query_is_refused_at_once_with_its_position(query, message):
    run("list", "-f", "ids")  # the index exists: only the query is timed
    started = cpu_seconds()
    result = run("search", query, code=2)
    assert cpu_seconds() - started < 2
    assert result.stderr == f"error: invalid query at {message}\n"


def test_a_paragraph_of_29000_characters_is_a_query(tmp_path):
    """A pasted page is a legitimate query: plain words up to 30,000 characters are searched."""
    words = "policy gradient methods for reward shaping in offline reinforcement learning "
    query = (words * 400)[:29_000]
    result = run("search", query, "-f", "ids")
    assert result.stdout.split() and result.stderr == ""


def test_wildcards_and_ranges_that_stand_for_too_many_words_are_refused(tmp_path):
    corpus = _many_words_corpus(tmp_path / "corpus")
    assert len(run("-c", corpus, "search", "w00*", "-f", "ids").stdout.split()) == 1
    for query, message in [
        ("w*", "character 1: 'w*' matches more than 1,000 words"),
        ("policy *0*", "character 8: '*0*' matches more than 1,000 words"),
        ("abstract:[a TO z]", "character 10: the range [a TO z] matches more than 1,000 words"),
        ("*", "'*' alone matches every word"),
    ]:
        started = cpu_seconds()
        result = run("-c", corpus, "search", query, code=2)
        assert message in result.stderr, result.stderr
        assert cpu_seconds() - started < 2


def test_fuzzy_terms_are_bounded():
    run("list", "-f", "ids")
    assert "at most 2 edits" in run("search", "entropy~5", code=2).stderr
    keys = run("search", "entropi~", "-f", "ids").stdout.split()
    assert keys == run("search", "entropy", "-f", "ids").stdout.split()[: len(keys)]
    started = cpu_seconds()
    run("search", "a" * 990 + "~2", code=1)  # Whoosh's own fuzzy term took minutes of CPU
    assert cpu_seconds() - started < 2


def test_not_not_is_a_clear_query_error_not_a_whoosh_crash():
    result = run("search", "NOT", "NOT", "entropy", code=2)
    assert result.stderr == (
        "error: invalid query at character 1: 'NOT NOT' cancels out: write the term alone\n"
    )


# --- snippets: linear, and only where shown ---------------------------------------------------------


def _best_start_by_definition(matches):
    """The window rule spelled out (quadratic): the reference for the linear version."""
    from rlpapers.index.snippets import LEAD, WIDTH

    best, best_count = matches[0][0], 0
    for i, (start, _, _) in enumerate(matches):
        distinct = {term for s, _, term in matches[i:] if s < start + WIDTH - LEAD}
        if len(distinct) > best_count:
            best, best_count = start, len(distinct)
    return best


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3000), st.sampled_from("abcde")), min_size=1, max_size=60
    ).map(lambda items: sorted((p, p + 3, t) for p, t in dict(items).items()))
)
def test_the_linear_snippet_window_is_the_one_the_rule_defines(matches):
    from rlpapers.index.snippets import _best_start

    assert _best_start(matches) == _best_start_by_definition(matches)


def test_a_snippet_of_an_abstract_with_thousands_of_matches_is_quick():
    from rlpapers.index.snippets import make_snippet

    abstract = "reward shaping for policy gradient methods. " * 8000
    started = cpu_seconds()  # CPU time: the other tests' processes do not count
    snippet, spans = make_snippet(abstract, {"reward", "shape", "polici", "gradient"})
    assert cpu_seconds() - started < 1  # 2.7 s when it was quadratic; 0.2 s now
    assert snippet.startswith("reward shaping") and len(spans) >= 4


def test_snippets_are_built_only_for_formats_that_show_them(monkeypatch):
    from rlpapers.index import snippets

    built: list[str] = []
    real = snippets.make_snippet
    monkeypatch.setattr(
        "rlpapers.index.hits.make_snippet",
        lambda text, terms: built.append(text) or real(text, terms),
    )
    for fmt in ("ids", "tsv", "json", "jsonl", "bibtex", "csv", "markdown", "ris", "csljson"):
        run("search", "policy", "-f", fmt)
        run("export", "policy", "-f", fmt)
    assert built == []
    run("search", "policy", "-f", "table", "-n", "3")
    assert len(built) == 3  # the printed hits only


# --- --ids lists ---------------------------------------------------------------------------------


def test_a_100k_line_ids_list_is_streamed_and_each_reference_read_once(tmp_path):
    ids = run("list", "-f", "ids").stdout.split()
    keys = run("list", "-f", "tsv").stdout.splitlines()  # tsv lines give their first field
    listing = tmp_path / "ids.txt"
    listing.write_text("\n".join((ids + [k.upper() for k in keys]) * 1250) + "\n")  # 100k lines
    started = cpu_seconds()
    out = run("export", "--ids", listing, "-f", "ids").stdout.split()
    assert cpu_seconds() - started < 5  # 106 s and 1 GB at 100k lines of 10k papers
    assert out == ids  # each paper once, in the list's order


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"qerl\n\x7fELF\x02\x01\x01\x00\x00\x00", "ids.txt:2: a NUL byte"),
        (b"qerl\npcl\xff\xfe\n", "ids.txt:2: not UTF-8 (byte 0xff)"),
        ("qerl\n".encode("utf-16-be"), "ids.txt:1: a NUL byte"),  # UTF-16 without a BOM
    ],
)
def test_a_binary_or_undecodable_ids_list_is_exit_2_naming_the_line(tmp_path, content, message):
    listing = tmp_path / "ids.txt"
    listing.write_bytes(content)
    result = run("export", "--ids", listing, code=2)
    assert message in result.stderr and result.stderr.count("\n") == 1
    assert message in run("export", "--ids", "-", input=content, code=2).stderr.replace(
        "<stdin>", "ids.txt"
    )


def test_a_utf8_ids_list_with_a_bom_is_read_and_its_errors_named(tmp_path):
    listing = tmp_path / "ids.txt"
    listing.write_bytes(b"\xef\xbb\xbfqerl\r\npcl\r\n")  # Notepad's "UTF-8 with BOM"
    assert len(run("export", "--ids", listing, "-f", "ids").stdout.split()) == 2
    listing.write_bytes(b"\xef\xbb\xbfqe\xffrl\n")
    assert "ids.txt:1: not UTF-8 (byte 0xff)" in run("export", "--ids", listing, code=2).stderr


def test_a_utf16_ids_list_with_a_bom_is_read(tmp_path):
    listing = tmp_path / "ids.txt"
    listing.write_text("qerl\r\npcl\r\n", encoding="utf-16")  # PowerShell's `>` writes this
    assert len(run("export", "--ids", listing, "-f", "ids").stdout.split()) == 2


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_an_unusable_index_folder_fails_at_once_with_exit_2(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    for folder, reason in [
        ("/proc/self", "/proc/self is not writable"),
        (tmp_path / "file", "file is a file, not a folder"),
    ]:
        monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(folder))
        started = time.monotonic()
        result = run("list", code=2)
        # Waiting for a lock takes no CPU, so this bound stays on the wall clock, 15 times below
        # the failure it guards against (/proc/self waited 900 s for a lock).
        assert time.monotonic() - started < 60
        assert result.stderr.startswith(f"error: cannot write the record store in {folder}")
        assert reason in result.stderr and result.stderr.count("\n") == 1


def test_a_corpus_variable_naming_no_path_is_exit_2(monkeypatch):
    monkeypatch.setenv("RLPAPERS_CORPUS", os.pathsep * 2)
    assert (
        run("list", code=2).stderr == f"error: RLPAPERS_CORPUS='{os.pathsep * 2}' names no path\n"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("corpus: []\nindex_dir: [a, b]\n", ":1: 'corpus' names no path"),
        ("# mine\nindex_dir: [a, b]\n", ":2: 'index_dir' must be one path, not ['a', 'b']"),
        ("index_dir:\n", ":1: 'index_dir' must be one path, not None"),
        ("corpus: [a, 3]\n", ":1: 'corpus' must be a path or a list of paths"),
    ],
)
def test_a_config_setting_of_the_wrong_shape_is_exit_2_naming_file_and_line(
    isolated, monkeypatch, text, message
):
    monkeypatch.delenv("RLPAPERS_INDEX_DIR")
    monkeypatch.chdir(isolated)
    config = isolated / "config.yaml"
    config.write_text(text)
    assert run("list", code=2).stderr == f"error: {config}{message}\n"
    assert not (isolated / "['a', 'b']").exists()


# --- odd text and names --------------------------------------------------------------------------


def test_a_form_feed_inside_a_line_is_whitespace_and_between_lines_a_page_break():
    from rlpapers.parse import parse_text

    abstract = "We study reward shaping in offline reinforcement learning and show gains."
    text = f"Topic\n\nRobotics · Planning\n\nAda Lovelace\n\n{abstract.replace(' ', chr(12), 2)}\n"
    (paper,) = parse_text(text)
    assert paper.categories == ("Robotics", "Planning") and paper.authors == ("Ada Lovelace",)
    assert paper.abstract == abstract
    two = parse_text(f"{abstract}\n\f{abstract.replace('We', 'They')}\n")
    assert len(two) == 2


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="needs byte file names")
def test_output_is_valid_utf8_when_a_file_name_is_not(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    name = os.fsdecode(b"caf\xe9.txt")
    (corpus / name).write_text((SEEDS / "003_9c520f58a50b3392.txt").read_text() + "\nMore.\n")
    proc = _cli("parse", corpus / name, "-f", "json")  # parsed on its own: named with U+FFFD
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.decode("utf-8"))[0]["source"] == "caf\ufffd.txt"
    for args in (["list", "-f", "json"], ["config", "-f", "json"]):  # in a corpus: skipped
        proc = _cli("--corpus", corpus, *args)
        assert proc.returncode == 0, proc.stderr
        proc.stdout.decode("utf-8")  # raises on invalid UTF-8
        assert "caf\ufffd.txt: the path is not valid UTF-8; skipped" in proc.stderr.decode()


# --- decoding ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", ["000_eda7530d3ab384ed.txt", "003_9c520f58a50b3392.txt"])
def test_a_gb18030_copy_of_a_seed_decodes_like_the_original(seed):
    from rlpapers.parse import parse_bytes

    text = (SEEDS / seed).read_text(encoding="utf-8")
    original = parse_bytes(text.encode("utf-8"), seed)
    copy = parse_bytes(text.encode("gb18030"), seed)
    assert len(copy) == 20 and copy == original  # was 21 records of cp1252 mojibake
    assert copy[0].topic in ("强化学习", "论文检索")
    assert all("·" not in c for p in copy for c in p.categories)  # the separator survived


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
@pytest.mark.parametrize("seed", ["000_eda7530d3ab384ed.txt", "003_9c520f58a50b3392.txt"])
def test_a_gb18030_copy_with_crlf_or_cr_line_ends_decodes_like_the_original(seed, newline):
    """Windows line ends must not sway the guess: the carriage returns made charset-normalizer
    pick iso8859-13 or cp949 (the topic read as "Ēæ»ÆŃ§Ļ°", or every abstract as Hangul)."""
    from rlpapers.parse import parse_bytes

    text = (SEEDS / seed).read_text(encoding="utf-8")
    original = parse_bytes(text.encode("utf-8"), seed)
    copy = parse_bytes(text.replace("\n", newline).encode("gb18030"), seed)
    assert copy == original


@pytest.mark.parametrize("topic", ["强化学习", "论文检索", "机器人", "自然语言处理"])
@pytest.mark.parametrize("codec", ["gb18030", "gbk"])
def test_a_chinese_header_is_the_only_non_ascii_text_of_a_gb18030_file(topic, codec):
    """The seed layout in GB18030 or GBK with plain ASCII abstracts: the header alone is too
    little for charset-normalizer, which called a tie for big5 or cp949 ("Ч趙悝炾", "쬠匡쇱乞").
    GB18030, the encoding of Chinese headers, wins a tie; Korean, Shift-JIS and longer Big5 text
    do not tie with it."""
    from rlpapers.parse.text import decode

    text = (SEEDS / "000_eda7530d3ab384ed.txt").read_text(encoding="utf-8")
    body = "".join(c if c.isascii() else "-" for c in text.split("\n", 1)[1])
    assert decode(f"{topic}\n{body}".encode(codec), "gb.txt").split("\n")[0] == topic
    for other, other_codec in (
        ("강화 학습은 에이전트가 보상을 최대화하는 방법입니다.", "euc_kr"),
        ("強化学習は、報酬を最大化する方法を学ぶ機械学習です。", "shift_jis"),
        ("強化學習是機器學習的一個領域，研究代理如何採取行動。", "big5"),
    ):
        assert decode(f"{other}\n{body}".encode(other_codec), "x.txt").split("\n")[0] == other


def test_a_utf8_file_with_lines_in_a_legacy_encoding_reads_each_line_right():
    """Files joined with ``cat`` (a GB18030 header on a UTF-8 file; a Latin-1 entry after UTF-8
    ones): the UTF-8 lines stay UTF-8 and the others are read in their own encoding, with a
    warning naming them. The whole file was read as one legacy code page, every curly quote and
    dash of every abstract turned to mojibake (``â€™``), without a word."""
    from rlpapers.parse import parse_bytes
    from rlpapers.readers import read_bytes

    seed = "000_eda7530d3ab384ed.txt"
    text = (SEEDS / seed).read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    joined = header.encode("gb18030") + b"\n" + rest.encode("utf-8")
    with pytest.warns(ParseWarning, match=r"mixed.txt: line 1 is not UTF-8; read as gb18030"):
        assert parse_bytes(joined, "mixed.txt") == parse_bytes(text.encode("utf-8"), seed)
    utf8 = "@article{a,\n title = {Über “quotes” – café},\n author = {Müller, Jörg}\n}\n"
    latin = "@article{b,\n title = {Zürich Straße},\n author = {Gödel, Kurt}\n}\n"
    with pytest.warns(ParseWarning, match=r"refs.bib: lines 6, 7 are not UTF-8; read as "):
        records = read_bytes(utf8.encode("utf-8") + latin.encode("latin-1"), "refs.bib")
    assert [(r.title, r.authors) for r in records] == [
        ("Über “quotes” – café", ("Jörg Müller",)),
        ("Zürich Straße", ("Kurt Gödel",)),
    ]


def test_latin_text_in_cp1252_is_still_read_as_such():
    from rlpapers.parse import parse_bytes

    text = (
        "Robotique\n\nPlanification · Contrôle\n\nJosé Müller, François Aichmüller\n\n"
        "Nous étudions la récompense façonnée pour l'apprentissage par renforcement — naïve.\n"
    )
    (paper,) = parse_bytes(text.encode("cp1252"), "latin.txt")
    assert paper.authors == ("José Müller", "François Aichmüller")
    assert paper.categories == ("Planification", "Contrôle") and paper.abstract.endswith("naïve.")


def test_utf8_with_a_stray_byte_is_utf8_with_a_warning_naming_the_line():
    from rlpapers.parse import parse_bytes

    data = (SEEDS / "003_9c520f58a50b3392.txt").read_bytes()
    cut = data.index(b"\n", 5000) + 1
    damaged = data[:cut] + b"stray \xff byte\n" + data[cut:]
    line = damaged[:cut].count(b"\n") + 1
    with pytest.warns(ParseWarning, match=rf"invalid UTF-8 replaced with U\+FFFD on line {line}$"):
        papers = parse_bytes(damaged, "damaged.txt")
    assert papers[0].topic == "论文检索" and len(papers) == 20  # not cp1252 mojibake
    assert sum("\ufffd" in p.abstract for p in papers) == 1


def test_an_explicit_encoding_always_wins(tmp_path):
    gb = tmp_path / "gb.txt"
    gb.write_bytes((SEEDS / "000_eda7530d3ab384ed.txt").read_text("utf-8").encode("gb18030"))
    topic = run("parse", gb, "-f", "json").stdout
    assert json.loads(topic)[0]["topic"] == "强化学习"
    forced = json.loads(run("--encoding", "cp1252", "parse", gb, "-f", "json").stdout)
    assert forced[0]["topic"] == "Ç¿»¯Ñ§Ï°"
    assert "not valid utf-8" in run("--encoding", "utf-8", "parse", gb, code=2).stderr
    assert "unknown encoding 'klingon'" in run("--encoding", "klingon", "parse", gb, code=2).stderr


def test_legacy_detection_is_bounded_on_a_50mb_line():
    from rlpapers.parse.text import decode

    started = cpu_seconds()
    text = decode(b"a" * 50_000_000 + "é".encode("cp1252"), "long.txt")
    assert text.endswith("é") and cpu_seconds() - started < 15


def test_a_paragraph_of_megabytes_is_cut_with_a_warning():
    from rlpapers.parse import MAX_PARAGRAPH, parse_text

    with pytest.warns(ParseWarning, match=r"huge.txt:3: a paragraph of 6,999,999 characters"):
        (paper,) = parse_text("Topic\n\n" + "reward " * 1_000_000 + "\n", "huge.txt")
    assert MAX_PARAGRAPH - 10 < len(paper.abstract) <= MAX_PARAGRAPH


def test_an_explicit_encoding_reaches_every_command(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    text = "Sujets\n\nMichael Aichmüller, José Núñez\n\nWe propose CaféRL, a method for crème brûlée.\n"
    (corpus / "papers.txt").write_bytes(text.encode("utf-16-le"))  # no BOM: undetectable
    listed = run("--corpus", corpus, "--encoding", "utf-16-le", "list", "-f", "json").stdout
    assert json.loads(listed)[0]["authors"] == ["Michael Aichmüller", "José Núñez"]
    # a sidecar's encoding: applies to its file (and a changed encoding re-parses it)
    (corpus / "papers.yaml").write_text("encoding: utf-16-le\nfoo: {note: x}\n")
    again = json.loads(run("--corpus", corpus, "list", "-f", "json").stdout)
    assert again[0]["name"] == "CaféRL"
    (corpus / "papers.yaml").write_text("encoding: no-such-codec\n")
    result = run("--corpus", corpus, "list", code=2)
    assert "papers.yaml:1: unknown encoding 'no-such-codec'" in result.stderr
