"""Failing tests from a second adversarial review of the newest identity and newcomer changes
(candidate restriction of edits, capped warnings, one-line usage errors). Each fails on the
reviewed code; its docstring says what was observed and what the docs promise instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.errors import ParseWarning

from .conftest import run
from .test_identity_ledger import EDITED, ORIGINAL, _paper, _write

OTHER = (
    "Offline policies trained on static logs overestimate the value of rare actions; we bound "
    "that optimism with a pessimistic critic and report gains on sparse navigation suites."
)


def _by_abstract(corpus: Path) -> dict[str, tuple[str, str]]:
    """Abstract -> (id, key), for every paper of ``corpus``."""
    with Library([corpus]) as lib:
        return {p.abstract: (p.id, p.key) for p in lib.papers}


def test_an_edit_moved_out_of_a_file_left_empty_keeps_its_key(tmp_path):
    """Observed: a.txt holds one paper; cutting it into b.txt with a one-word fix, leaving a.txt
    empty (still in the corpus), gives the paper a new id and the key ``smith_foorlb``
    (``Identities._edits`` counts as "this corpus" only files that hold a paper now, so an
    emptied file of the corpus counts as another corpus's). With a.txt deleted instead, or
    holding any other paper, the edit keeps its id and key. Expected: the same either way, as
    guide.md promises for a paper that last stood in a file of this corpus."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    _write(corpus / "b.txt", _paper(OTHER, author="Jane Doe"))
    before = _by_abstract(corpus)[ORIGINAL]

    _write(corpus / "a.txt", "")
    _write(corpus / "b.txt", _paper(OTHER, author="Jane Doe") + "\n" + _paper(EDITED))
    with pytest.warns(ParseWarning, match="a.txt: empty file"):
        assert _by_abstract(corpus)[EDITED] == before


def test_an_edit_behind_a_replaced_symlink_keeps_its_key(tmp_path):
    """Observed: corpus/a.txt is a symlink to notes/v1.txt; replacing the link by a real file
    holding the same papers with a one-word fix (notes/v1.txt stays where it is) gives the
    edited paper a new id and the key ``smith_foorlb``. The ledger remembers the link's target,
    which still stands outside the corpus, so the paper counts as another corpus's; before the
    candidate restriction the edit kept its key. Expected: the edited paper keeps its id and
    key (it is the n-th paper of the same corpus file, and a 0.9 Jaccard match)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(notes / "v1.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    (corpus / "a.txt").symlink_to(notes / "v1.txt")
    before = _by_abstract(corpus)[ORIGINAL]

    (corpus / "a.txt").unlink()
    _write(corpus / "a.txt", _paper(EDITED) + "\n" + _paper(OTHER, author="Jane Doe"))
    assert (notes / "v1.txt").exists()
    assert _by_abstract(corpus)[EDITED] == before


def test_a_warning_about_many_files_is_shown_twenty_times_then_counted(tmp_path):
    """Observed: 30 empty corpus files named by words give 30 ``warning: NAME.txt: empty file,
    no records`` lines and no count: ``Warnings._VARYING`` strips a ``file:line:`` prefix but not
    a bare ``file:`` one, so every file's warning is a kind of its own (files named by numbers
    do collapse, the digits being stripped). Expected (CHANGELOG, guide): the first 20 of a
    kind, then a note counting the rest."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "paper.txt", _paper(ORIGINAL))
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
    names = [f"{a}-{b}" for a in words[:6] for b in words[6:]][:30]
    for name in names:
        _write(corpus / f"{name}.txt", "")
    result = run("--corpus", corpus, "list", "--format", "tsv")
    shown = [line for line in result.stderr.splitlines() if "empty file, no records" in line]
    assert len(shown) == 20, result.stderr
    assert "10 more warnings" in result.stderr, result.stderr


def test_a_missing_value_of_c_before_the_command_is_not_told_to_go_before_it():
    """Observed: ``rlpapers -c`` (the option before any command, its value missing) exits 2
    with ``error: Option '-c' requires an argument; after the command, write --corpus (-c only
    goes before it)``: the hint meant for ``-c`` after a command tells the user to move an
    option that already stands before it. Expected: the missing value named, without that
    hint (as ``rlpapers --corpus`` does)."""
    result = run("-c", code=2)
    assert "requires an argument" in result.stderr, result.stderr
    assert "only goes before it" not in result.stderr, result.stderr


def test_ascii_protects_every_capitalised_accented_word():
    """Observed: ``protect_capitals(to_latex(..., True))`` braces ``{G{\\"o}del}`` and
    ``{R{\\'e}nyi}`` but leaves ``Fran{\\c{c}}ois``, ``Erd{\\H{o}}s`` and ``{\\L}ukasiewicz``
    open (an accent command with an argument in braces, or a letter command, is not seen as part
    of the word), and gives ``Erd{\\H{o}}{s{\\textendash}R{\\'e}nyi}`` for Erdős–Rényi.
    Expected (CHANGELOG: "--ascii BibTeX kept a capitalised accented word's capital
    unprotected"): each capitalised accented word braced whole."""
    from rlpapers.exporters.latex import protect_capitals, to_latex

    out = protect_capitals(to_latex("On François, Erdős and Łukasiewicz", True))
    assert "{Fran{\\c{c}}ois}" in out, out
    assert "{Erd{\\H{o}}s}" in out, out
    assert "{{\\L}ukasiewicz}" in out, out
    graphs = protect_capitals(to_latex("Erdős–Rényi graphs", True))
    assert graphs.startswith("{Erd{\\H{o}}s}"), graphs
    assert "{R{\\'e}nyi}" in graphs, graphs


def _group_option_into(stdout: int, option: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "rlpapers", option],
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("option", ["--help", "--version"])
def test_group_help_and_version_into_a_full_disk_are_one_line_exit_2(option):
    """Observed (also on the code before the reviewed commits): ``rlpapers --help > /dev/full``
    and ``rlpapers --version > /dev/full`` end in a Python traceback (``OSError: [Errno 28] No
    space left on device``) and exit 1, while ``rlpapers list --help > /dev/full`` is
    ``error: cannot write the output: No space left on device``, exit 2: the group's eager
    options print outside ``Group.invoke``, and ``Group.main`` catches only Click's errors.
    Expected (house rules): one line, exit 2, never a traceback."""
    with open("/dev/full", "wb") as full:
        proc = _group_option_into(full.fileno(), option)
    assert proc.returncode == 2, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_group_help_and_version_to_a_gone_reader_are_exit_141(option):
    """Observed (also before the reviewed commits): with the reader of stdout gone,
    ``rlpapers --help`` and ``rlpapers --version`` exit 1 (``rlpapers list --help``: 141).
    Expected (docs/reliability.md, "The reader goes away"): exit 141, silently."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = _group_option_into(write, option)
    finally:
        os.close(write)
    assert proc.returncode == 141 and proc.stderr == b"", (proc.returncode, proc.stderr)


def test_a_run_over_one_file_in_between_does_not_change_how_an_edit_is_matched(tmp_path):
    """Observed: corpus/a.txt holds paper P and another, b.txt a third. P is cut into b.txt with
    a one-word fix. A refresh of the folder keeps P's id and key (``smith_foo``); but one run
    over ``--corpus corpus/b.txt`` first (a.txt still stands, outside that corpus, so P counts
    as another corpus's) gives the edit a new paper, ``smith_foob``, and the folder keeps that
    for good. Expected (guide.md, identity.py: "clearing the cache or running over another
    corpus in between matches an edit the same way"): P keeps its id and key either way."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    third = OTHER.replace("Offline policies", "Online agents").replace("navigation", "robotics")
    _write(corpus / "b.txt", _paper(third, author="Ann Lee"))
    before = _by_abstract(corpus)[ORIGINAL]

    _write(corpus / "a.txt", _paper(OTHER, author="Jane Doe"))
    _write(corpus / "b.txt", _paper(third, author="Ann Lee") + "\n" + _paper(EDITED))
    _by_abstract(corpus / "b.txt")  # one run over the file alone, as `rlpapers -c b.txt ...`
    assert _by_abstract(corpus)[EDITED] == before


@pytest.mark.parametrize("link", ["sub/a.txt", "b.txt"])
def test_a_symlink_to_a_file_of_the_corpus_is_never_an_internal_error(tmp_path, link):
    """Observed: a corpus folder holding a.txt and a symlink to it (``sub/a.txt -> ../a.txt``,
    read since folders are read recursively; or ``b.txt -> a.txt`` beside it) makes every
    command exit 70: ``internal error (ValueError: zip() argument 2 is shorter than argument
    1)`` (``Identities._print``: two corpus entries resolve to one path). On the code before
    the reviewed commits the sub-folder case read a.txt once (exit 0) and the sibling case was
    exit 3, "busy: UNIQUE constraint failed: files.path". Expected (house rules): exit 70 never
    happens on any input; the papers listed, or one line and exit 2."""
    from typer.testing import CliRunner

    from rlpapers.cli.app import app

    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    _write(corpus / "a.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    (corpus / link).symlink_to(Path("..", "a.txt") if "/" in link else Path("a.txt"))
    result = CliRunner().invoke(app, ["--corpus", str(corpus), "list", "-f", "tsv"])
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
    assert "internal error" not in result.stderr, result.stderr


@pytest.mark.parametrize(
    "head, ending",
    [(b"", b"\r\n"), (b"\xef\xbb\xbf", b"\n")],
    ids=["crlf-lines", "utf8-bom"],
)
def test_a_pin_keeps_the_line_endings_and_byte_order_mark_it_found(tmp_path, head, ending):
    """Observed: ``rlpapers keys --pin`` into a keys.yaml written with CRLF line endings
    rewrites every line with LF, and a UTF-8 byte order mark is dropped (a Windows editor's
    file shows as changed on every line in a diff). Expected (guide.md: pinning again
    "rewrites only key: values: your comments, the order, other fields ... stay as you wrote
    them"): the lines the user wrote come back byte for byte, new ones in the same style."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    key = _by_abstract(corpus)[ORIGINAL][1]
    lines = [b"# my notes", key.encode() + b":", b"  venue: ICML  # the conference"]
    written = head + b"".join(line + ending for line in lines)
    (corpus / "keys.yaml").write_bytes(written)
    run("--corpus", corpus, "keys", "--pin")
    after = (corpus / "keys.yaml").read_bytes()
    assert after.startswith(head + lines[0] + ending + lines[1] + ending), after
    assert lines[2] + ending in after, after
    if ending == b"\r\n":
        assert after.count(b"\n") == after.count(b"\r\n"), after


@pytest.mark.parametrize("args", [["list", "--corpus"], ["search", "foo", "--index-dir"]])
def test_a_trailing_global_option_without_its_value_is_named_as_missing_its_value(args):
    """Observed: ``rlpapers list --corpus`` is ``error: No such option '--corpus'`` and
    ``rlpapers search foo --index-dir`` is ``No such option '--index-dir'`` (for ``search foo
    --corpus``: "Did you mean '--scores'?"), though guide.md says --corpus and --index-dir may
    follow the command (``hoist_globals`` moves them only when a value follows). Expected: the
    option named as missing its value, as ``rlpapers --corpus`` says ("requires an
    argument")."""
    result = run(*args, code=2)
    assert "No such option" not in result.stderr, result.stderr
    assert "requires an argument" in result.stderr, result.stderr


def test_a_command_option_missing_its_value_points_to_the_command_help():
    """Observed: ``rlpapers list -n`` is ``error: Option '-n' requires an argument (see
    'rlpapers --help')``: the group's help, which does not list -n (``rlpapers list
    --bogus`` points to ``rlpapers list --help``). Expected: the command's help."""
    result = run("list", "-n", code=2)
    assert "'rlpapers list --help'" in result.stderr, result.stderr


def corpus_with_metadata(tmp_path: Path, isolated: Path) -> tuple[Path, Path]:
    """A one-paper corpus with a metadata sidecar, read once: the corpus and its store.db."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL))
    (corpus / "a.yaml").write_text("smith_foo:\n  venue: ICML\n", encoding="utf-8")
    run("--corpus", corpus, "list", "-f", "tsv")
    (store,) = (isolated / "index").rglob("store.db")
    return corpus, store


@pytest.mark.parametrize(
    "garbled",
    [
        '{"encoding": null, "overrides": [["smith_foo", {"key": 12}, "m", 1]]}',
        '{"encoding": "no-such-codec", "overrides": []}',
    ],
    ids=["key-not-text", "unknown-encoding"],
)
def test_a_garbled_metadata_row_in_the_store_heals_with_a_note(tmp_path, isolated, garbled):
    """Observed: the store's new ``metadata`` table (schema 5) holding a value it never wrote
    is not treated as damage: a key that is a number is exit 70 (``internal error (TypeError:
    expected string or bytes-like object, got 'int')``), and an unknown encoding is exit 2
    blaming the corpus file (``error: a.txt: unknown encoding 'no-such-codec'``) on every run
    until the metadata file changes. Expected (docs/reliability.md, "A readable store.db
    holding a garbled value"): rebuilt with the one-line note, the same answer as before."""
    import sqlite3

    corpus, store = corpus_with_metadata(tmp_path, isolated)
    with sqlite3.connect(store) as con:
        con.execute("UPDATE metadata SET data = ?", (garbled,))
    _write(corpus / "a.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    from typer.testing import CliRunner

    from rlpapers.cli.app import app

    result = CliRunner().invoke(app, ["--corpus", str(corpus), "list", "-f", "tsv"])
    assert result.exit_code == 0, (result.exit_code, result.stderr)
    assert "rebuilding" in result.stderr, result.stderr
    assert "\tsmith_foo\t" in result.stdout and "ICML" in result.stdout, result.stdout


def test_a_pin_after_an_old_version_came_back_keeps_every_paper_usable(tmp_path):
    """Observed: pin (``dvnz…: {key: smith_foo}``, the paper's id being its first text's
    content id), fix a word of the abstract, then paste the old version back into b.txt (it
    becomes a paper of its own, ``smith_foob``, and the old content id now points to it), and
    pin again: the entry of the paper's id is rewritten to ``{key: smith_foob}``, "wrote 2
    keys", and from then on every command exits 2: ``keys.yaml:3: key 'smith_foob' already
    belongs to paper …``. Expected (guide.md): pinning rewrites each paper's own entry with its
    own key; the corpus stays readable and every paper keeps its key."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _write(corpus / "a.txt", _paper(ORIGINAL) + "\n" + _paper(OTHER, author="Jane Doe"))
    run("--corpus", corpus, "keys", "--pin")
    _write(corpus / "a.txt", _paper(EDITED) + "\n" + _paper(OTHER, author="Jane Doe"))
    assert _by_abstract(corpus)[EDITED][1] == "smith_foo"  # the edit keeps the paper
    _write(corpus / "b.txt", _paper(ORIGINAL))
    before = _by_abstract(corpus)
    assert before[EDITED][1] == "smith_foo" and before[ORIGINAL][1] == "smith_foob"
    run("--corpus", corpus, "keys", "--pin")
    _write(corpus / "b.txt", _paper(ORIGINAL) + "\n")  # a refresh reads the pins again
    assert _by_abstract(corpus) == before
