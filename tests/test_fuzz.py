"""Fuzzing the CLI with hostile input: random bytes and mixtures of the seed layouts as corpus
files, random queries (over the query grammar and over arbitrary unicode), random ``--ids``
lists, random metadata YAML.

The property, for every example: the exit code is 0, 1 or 2 (never 70, the internal-error
code), no traceback, and the command stays within a bound of CPU time (a loaded machine stretches
wall time, not CPU time). Examples run in-process through CliRunner (an exception escaping the
CLI fails the test); a few subprocess runs check the bounds on the child's CPU time, with a wall
timeout ten times over that catches a run that waits for ever. Example counts are fixed and
small so the suite stays within a minute.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from .conftest import SEEDS, cpu_seconds

OK_CODES = {0, 1, 2}
BOUND = 5  # CPU seconds: any command over the bundled corpus plus small hostile files
FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples every run: a failure is reproducible, CI time stable
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cli(*args: object, input: bytes | str | None = None) -> tuple[int, str]:
    """Run the CLI in-process; check the property; return (exit code, stderr)."""
    from rlpapers.cli.app import app

    started = cpu_seconds()
    result = CliRunner().invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)
    elapsed = cpu_seconds() - started
    assert result.exit_code in OK_CODES, (args, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert elapsed < BOUND, (args, elapsed)
    return result.exit_code, result.stderr


# --- corpus files --------------------------------------------------------------------------------


def _seed_blocks() -> list[str]:
    blocks: list[str] = []
    for path in sorted(SEEDS.glob("*.txt")):
        blocks += [b for b in path.read_text(encoding="utf-8").split("\n\n") if b.strip()]
    return blocks


SEED_BLOCKS = _seed_blocks()
JUNK = st.text(
    alphabet=st.sampled_from(list("ab ,;·•—-:\t\f\r\n()[]<>{}\\%$&#_~^\"'") + ["等", "é", "\x00"]),
    max_size=60,
)
SEPARATORS = st.sampled_from(["\n\n", "\n", "\r\n\r\n", "\n \n", "\f\n", "\n\n\n\t\n"])
MIXTURES = st.lists(st.one_of(st.sampled_from(SEED_BLOCKS), JUNK), min_size=0, max_size=8).flatmap(
    lambda blocks: st.lists(SEPARATORS, min_size=len(blocks), max_size=len(blocks)).map(
        lambda seps: "".join(b + s for b, s in zip(blocks, seps, strict=True))
    )
)
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gb18030", "cp1252"])


#: Random bytes, half of them without NUL bytes: a NUL is refused at once as a binary file, so
#: bytes with one never reach the splitter and the roles.
BYTES = st.binary(max_size=2000) | st.binary(max_size=2000).map(lambda b: b.replace(b"\0", b""))


@FUZZ
@given(data=BYTES)
def test_random_bytes_as_a_file_to_parse(data):
    code, err = cli("parse", "-", "-f", "json", input=data)
    if b"\0" not in data:
        assert "binary file" not in err


def _refused(data: bytes) -> bool:
    """Whether a file of these bytes is refused whole (exit 2 for any corpus holding it)."""
    import warnings

    from rlpapers.errors import ParseError
    from rlpapers.parse import parse_bytes

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse_bytes(data)
    except ParseError:
        return True
    return False


@FUZZ
@given(text=MIXTURES, encoding=ENCODINGS)
def test_random_mixtures_of_the_seed_layouts(text, encoding):
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        data = text.encode("utf-8")
    cli("parse", "-", "-f", "jsonl", input=data)


@settings(FUZZ, max_examples=12)
@given(first=MIXTURES, second=BYTES.map(lambda b: b[:500]))
def test_random_files_in_a_corpus_folder(tmp_path_factory, first, second):
    """A file refused whole (a NUL byte, no encoding fits) is checked in a folder of its own:
    beside the others it would refuse the whole corpus, and they would never be searched."""
    corpus = tmp_path_factory.mktemp("corpus")
    refused = tmp_path_factory.mktemp("refused")
    for name, data in (("a.txt", first.encode("utf-8")), ("b.txt", second)):
        folder = refused if _refused(data) else corpus
        (folder / name).write_bytes(data)
    if any(refused.iterdir()):
        code, err = cli("--corpus", refused, "list", "-f", "json")
        assert code == 2 and err.count("\n") == 1, err
    if any(corpus.iterdir()):
        code, _ = cli("--corpus", corpus, "list", "-f", "json")
        assert code in (0, 1)  # no file here is refused
        cli("--corpus", corpus, "search", "policy", "-f", "tsv")


# --- queries ------------------------------------------------------------------------------------

WORDS = st.sampled_from(
    ["policy", "reward", "entropy", "RL", "quantiz*", "entropi~", "*e*", "x?", "a~3", "qerl"]
)
FIELDS = st.sampled_from(["title:", "author:", "category:", "key:", "id:", "colour:", ""])
TERM = st.builds(lambda f, w: f + w, FIELDS, WORDS) | st.builds(lambda w: f'"{w} gradient"', WORDS)
GRAMMAR = st.recursive(
    TERM,
    lambda inner: st.one_of(
        st.builds(lambda a, op, b: f"{a} {op} {b}", inner, st.sampled_from(["AND", "OR"]), inner),
        st.builds(lambda a: f"NOT {a}", inner),
        st.builds(lambda a: f"({a})", inner),
        st.builds(lambda a, b: f"{a} {b}", inner, inner),
        st.builds(lambda a: f"[a TO {a}]", st.sampled_from(["b", "z", "policy"])),
    ),
    max_leaves=6,
)
TOKENS = st.lists(
    st.sampled_from(["(", ")", '"', "AND", "OR", "NOT", "*", "~", ":", "title:", "[", "]", "TO"])
    | WORDS,
    max_size=8,
).map(" ".join)


@FUZZ
@given(query=GRAMMAR | TOKENS)
def test_random_queries_over_the_grammar(query):
    cli("search", query, "-f", "json")


@FUZZ
@given(query=st.text(max_size=80))
def test_random_unicode_queries(query):
    cli("search", query, "-f", "tsv")


# --- --ids lists and metadata ---------------------------------------------------------------------

ID_LINES = st.lists(
    st.sampled_from(["qerl", "pcl", "dvnzqalwvo", "dvnz", "#x", "", "\t", "nosuch"])
    | st.text(max_size=12),
    max_size=10,
).map("\n".join)


@FUZZ
@given(listing=st.binary(max_size=300) | ID_LINES.map(lambda t: t.encode("utf-8", "replace")))
def test_random_ids_lists(listing):
    cli("export", "--ids", "-", "-f", "ids", input=listing)


YAML_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 3000)
    | st.sampled_from([10_000, 65_536])
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
METADATA = st.one_of(
    st.dictionaries(
        st.sampled_from(["qerl", "pcl", "nosuch", "dvnzqalwvo"]),
        st.dictionaries(
            st.sampled_from(
                ["title", "year", "venue", "url", "doi", "tags", "note", "key", "name", "colour"]
            ),
            YAML_VALUES,
            max_size=3,
        ),
        max_size=3,
    ).map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.lists(
        st.sampled_from(
            list("ab: -[]{}!&*\n'\"#|>") + ["!!python/object/apply:os.system ", "qerl:"]
        ),
        max_size=30,
    ).map("".join),
)


@settings(FUZZ, max_examples=15)
@given(text=METADATA)
@example(text="qerl: {year: 65536}\n")  # accepted, then every search was exit 70
@example(text="pcl: {year: -1, venue: x}\n")
def test_random_metadata_yaml(tmp_path_factory, text):
    """Metadata the export accepts must serve every command, the index's among them: a value
    that only the index chokes on (a year out of its range) showed only in a search."""
    corpus = tmp_path_factory.mktemp("corpus")
    for seed in SEEDS.glob("*.txt"):
        shutil.copy(seed, corpus)
    (corpus / "metadata.yaml").write_text(text, encoding="utf-8")
    code, _ = cli("--corpus", corpus, "export", "-f", "markdown")
    if code == 0:
        for args in (["list", "-f", "json"], ["search", "policy"], ["stats"], ["similar", "qerl"]):
            assert cli("--corpus", corpus, *args)[0] in (0, 1), args


# --- bounds on a child's CPU time ------------------------------------------------------------------


def _bounded(
    args: list[str], cpu: float, codes: set[int] = OK_CODES, **kwargs
) -> subprocess.CompletedProcess:
    """The CLI in a child process, whose CPU time must stay under ``cpu`` seconds: a loaded
    machine stretches wall time, not CPU time. The wall clock only catches a run that waits
    for ever (a FIFO read, a lock), at ten times the bound."""
    started = cpu_seconds()
    proc = subprocess.run(
        [sys.executable, "-m", "rlpapers", *args],
        capture_output=True,
        timeout=max(60, 10 * cpu),  # TimeoutExpired fails the test
        **kwargs,
    )
    used = cpu_seconds() - started
    assert proc.returncode in codes, (args, proc.returncode, proc.stderr)
    assert b"Traceback" not in proc.stderr
    assert used < cpu, (args, used)
    return proc


def test_every_command_over_the_bundled_corpus_and_hostile_files_returns_in_5_seconds(tmp_path):
    import os

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    (corpus / "long.txt").write_text("word " * 20_000 + "\n")  # one 100 kB line
    (corpus / "phrases.txt").write_text("Topic\n\n" + "reward shaping policy. " * 4000 + "\n")
    if hasattr(os, "mkfifo"):
        os.mkfifo(corpus / "fifo.txt")
    # The binary file in a folder of its own: beside the others it refuses the whole corpus
    # (exit 2), and the long line, the phrases and the FIFO would never be searched.
    refused = tmp_path / "refused"
    refused.mkdir()
    (refused / "binary.txt").write_bytes(bytes(range(256)) * 4)
    result = _bounded(["--corpus", str(refused), "list"], cpu=BOUND, codes={2})
    assert b"binary.txt:1: binary file" in result.stderr
    _bounded(["--corpus", str(corpus), "index"], cpu=30, codes={0})  # not bounded to 5
    listed = _bounded(["--corpus", str(corpus), "list", "-f", "json"], cpu=BOUND, codes={0})
    assert {p["source"] for p in json.loads(listed.stdout)} >= {"long.txt", "phrases.txt"}
    for args, codes in (
        (["search", "reward shaping", "-f", "table"], {0}),
        (["search", '"reward shaping policy"', "-f", "ids"], {0}),
        (["search", "word", "-f", "ids"], {0}),
        (["search", "*e*"], {0, 2}),  # 2: more words than a query's wildcards may stand for
        (["search", "a" * 100_000], {2}),
        (["export", "-f", "markdown"], {0}),
        (["stats"], {0}),
    ):
        _bounded(["--corpus", str(corpus), *args], cpu=BOUND, codes=codes)


@pytest.mark.slow
def test_one_hostile_50mb_file_is_built_and_searched_within_30_seconds(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    words = b"policy reward agent entropy learning model offline online value gradient "
    with (corpus / "huge.txt").open("wb") as out:  # 50 MB in one line: one 50 MB abstract
        for _ in range(50_000_000 // len(words)):
            out.write(words)
        out.write(b"\n")
    _bounded(["--corpus", str(corpus), "search", "reward", "-f", "tsv"], cpu=30)


def test_warm_commands_over_10k_papers_return_within_10_seconds(tmp_path):
    corpus = _synthetic_corpus(tmp_path / "corpus", 10_000)
    _bounded(["--corpus", str(corpus), "index"], cpu=120)  # the cold build: a loose bound
    for args in (
        ["search", "policy gradient"],
        ["search", "poli*", "-f", "ids"],
        ["list", "-f", "ids"],
    ):
        _bounded(["--corpus", str(corpus), *args], cpu=10)


def _synthetic_corpus(folder: Path, papers: int) -> Path:
    """``papers`` short generated abstracts in ten files (no shared data set needed)."""
    import random

    rng = random.Random(0)
    words = "policy reward agent entropy learning model offline online value gradient".split()
    folder.mkdir()
    per_file = papers // 10
    for f in range(10):
        blocks = [f"Synthetic {f}"]
        for i in range(per_file):
            n = f * per_file + i
            text = " ".join(rng.choice(words) for _ in range(25))
            blocks.append(f"We propose Method{n}, a method. {text}.")
        (folder / f"part{f}.txt").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return folder
