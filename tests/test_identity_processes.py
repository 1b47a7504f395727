"""Several processes, Ctrl-C and killed workers: one line, the right exit code, nothing left
running. Every test here starts processes, so all are in the slow tier."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rlpapers import Library

from .conftest import SEEDS
from .test_identity import _abstract, _write

pytestmark = pytest.mark.slow

# --- processes -----------------------------------------------------------------------------------

WHOOSH_FREE = [
    ["list", "-f", "ids"],
    ["show", "qerl", "-f", "json"],
    ["export", "-f", "bibtex"],
    ["export", "--ids", "-", "-f", "bibtex"],
    ["keys"],
]


def test_list_show_and_export_never_import_whoosh():
    code = (
        "import sys, io\n"
        "from rlpapers.cli import main\n"
        "sys.stdin = io.StringIO('qerl\\n')\n"
        "sys.argv = ['rlpapers', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "assert not [m for m in sys.modules if m.startswith('whoosh')], 'whoosh imported'\n"
    )
    for argv in WHOOSH_FREE:
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, (argv, done.stderr)


def test_eight_processes_refreshing_one_store_agree(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    for i in range(3):
        _write(corpus / f"extra{i}.txt", f"Topic\n\n{_abstract(f'Extra{i}RL, a method', 20 + i)}\n")
    env = dict(os.environ, NO_COLOR="1")
    argv = [sys.executable, "-m", "rlpapers", "--corpus", str(corpus), "list", "-f", "tsv"]
    procs = [
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    outputs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outputs]
    assert len({out for out, _ in outputs}) == 1
    assert len(outputs[0][0].splitlines()) == 43
    assert not any("Traceback" in err for _, err in outputs)


RUN_MAIN = (
    "import sys\nfrom rlpapers.cli import main\nsys.argv = ['rlpapers', *sys.argv[1:]]\nmain()\n"
)


#: Ctrl-C as the parallel writer starts to commit (most of a build: its workers finish, their
#: parts merge), sent by the process to its own group at that moment.
CTRL_C_AT_COMMIT = """
import os, signal, whoosh.multiproc as mp
commit = mp.MpWriter.commit
def interrupted(self, *args, **kwargs):
    os.killpg(os.getpgrp(), signal.SIGINT)
    return commit(self, *args, **kwargs)
mp.MpWriter.commit = interrupted
"""


@pytest.mark.parametrize("moment", ["adding", "committing"])
def test_ctrl_c_during_a_multiprocess_build_is_one_line_and_exit_130(tmp_path, moment):
    import signal

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    blocks = [
        f"We propose M{i}RL, a way to learn policy {i} with entropy. It works on task {i}."
        for i in range(3000)
    ]
    (corpus / "a.txt").write_text("Topic\n\n" + "\n\n".join(blocks) + "\n")
    script = "import rlpapers.index.view as view\nview.PARALLEL_FROM = 1\n" + RUN_MAIN
    argv = [sys.executable, "-c", script, "--corpus", str(corpus), "search", "policy", "-f", "ids"]
    subprocess.run(argv[:-4] + ["list", "-f", "ids"], check=True, capture_output=True, timeout=120)
    import psutil

    run = [*argv[:2], (CTRL_C_AT_COMMIT if moment == "committing" else "") + script, *argv[3:]]
    proc = subprocess.Popen(
        run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    if moment == "adding":
        deadline = time.time() + 180
        while time.time() < deadline and not psutil.Process(proc.pid).children():
            time.sleep(0.05)
        assert psutil.Process(proc.pid).children(), "the writer never started its workers"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 130 and err == "note: interrupted\n", err
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and len(done.stdout.split()) == 3000  # a pipe gets every hit


def test_a_parse_on_two_processes_stores_what_one_process_stores(tmp_path, monkeypatch):
    """A big refresh parses on a process pool, and its workers send back encoded parses, not
    rows; forced here on a small corpus, it stores the records the one-process path stores,
    after a first build and after an edit."""
    from concurrent.futures import ProcessPoolExecutor

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    extra = f"Extra\n\n{_abstract('PoolRL, a method for pools')}\n"
    _write(corpus / "extra.txt", extra)
    alone = Library([corpus], index_dir=tmp_path / "alone").papers

    submitted = []
    submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(
        ProcessPoolExecutor, "submit", lambda pool, *a: submitted.append(a) or submit(pool, *a)
    )
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("rlpapers.store.parsing.PARALLEL_BYTES", 0)
    monkeypatch.setattr("rlpapers.store.refresh.KEEP_PARSED_BYTES", 0)
    pooled = Library([corpus], index_dir=tmp_path / "pooled").papers
    assert len(submitted) == 3  # the two seed files and extra.txt, each parsed by a worker
    assert [p.to_dict() for p in pooled] == [p.to_dict() for p in alone]

    _write(corpus / "extra.txt", extra + f"\n{_abstract('GnuRL, a method for gnus')}\n")
    refreshed = Library([corpus], index_dir=tmp_path / "pooled").papers
    scratch = Library([corpus], index_dir=tmp_path / "scratch").papers
    assert [p.to_dict() for p in refreshed] == [p.to_dict() for p in scratch]
    assert len(refreshed) == len(alone) + 1


def _ledger_prints(data_dir: Path) -> dict[str, bytes]:
    import sqlite3

    con = sqlite3.connect(data_dir / "ledger.db")
    try:
        return dict(con.execute("SELECT id, print FROM papers"))
    finally:
        con.close()


def test_the_workers_fingerprints_reach_the_ledger_from_memory(tmp_path, monkeypatch):
    """The fingerprints the parse workers make reach the ledger without a table of their own in
    the store (it was a fifth of the store), equal to those the refreshing process makes from
    the texts, which it then never has to make."""
    import sqlite3

    from rlpapers.store import assign, identity

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "alone-data"))
    assert Library([corpus], index_dir=tmp_path / "alone").papers
    made = []
    real = identity.fingerprint
    monkeypatch.setattr(assign, "fingerprint", lambda text: made.append(text) or real(text))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr("rlpapers.store.parsing.PARALLEL_BYTES", 0)
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(tmp_path / "pooled-data"))
    assert Library([corpus], index_dir=tmp_path / "pooled").papers
    assert made == []  # every paper's came from a worker
    pooled = _ledger_prints(tmp_path / "pooled-data")
    assert pooled == _ledger_prints(tmp_path / "alone-data") and len(pooled) == 40
    (store,) = (tmp_path / "pooled").glob("*/store.db")
    tables = sqlite3.connect(store).execute("SELECT name FROM sqlite_master WHERE type='table'")
    assert not {"prints", "fresh_prints"} & {name for (name,) in tables}


#: A refresh whose parse runs on the worker processes, killed (SIGKILL) once it has kept the
#: parse of the first file back: its fingerprints never reached the ledger.
KILLED_AFTER_ONE_PARSE = """
import os, signal, sys
os.cpu_count = lambda: 2
import rlpapers.store.parsing as parsing
import rlpapers.store.refresh as refresh
parsing.PARALLEL_BYTES = 0
refresh.KEEP_PARSED_BYTES = 0
keep = refresh.Refresh._keep_parse
def killed(self, *args):
    keep(self, *args)
    os.kill(os.getpid(), signal.SIGKILL)
refresh.Refresh._keep_parse = killed
from rlpapers import Library
Library([sys.argv[1]]).papers
"""


def test_edits_parsed_by_a_killed_refresh_keep_their_ids_and_keys(tmp_path, monkeypatch):
    """A refresh killed after its workers parsed an edited file (the parse is kept, the
    fingerprints, waiting in a temporary table, are gone): the next refresh does not parse the
    file again, makes the fingerprints from the texts, and the edited abstracts keep their ids
    and keys."""
    import sqlite3

    from rlpapers.store import assign, identity

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    before = {p.id: p.key for p in Library([corpus]).papers}
    for path in sorted(corpus.glob("*.txt")):  # one abstract of each file gets a sentence more
        blocks = path.read_text(encoding="utf-8").split("\n\n")
        n = next(i for i, block in enumerate(blocks) if len(block) > 400)
        blocks[n] += " We release the code."
        _write(path, "\n\n".join(blocks))
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_ONE_PARSE, str(corpus)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert killed.returncode == -9, killed.stderr
    (store,) = Path(os.environ["RLPAPERS_INDEX_DIR"]).glob("*/store.db")
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT count(*) FROM parses").fetchone()[0] == 3  # 2 old, 1 new
    made = []
    real = identity.fingerprint
    monkeypatch.setattr(assign, "fingerprint", lambda text: made.append(text) or real(text))
    after = {p.id: p.key for p in Library([corpus]).papers}
    assert made  # the killed refresh's file: from the texts
    assert after == before


#: A two-process refresh that cannot write the first parse back (a full disk) while the second
#: worker is half-way through sending its result: the thread reading the results is slow (a
#: loaded machine), so the second worker blocks on a full pipe when the workers are stopped.
FULL_DISK_WHILE_A_WORKER_SENDS = """
import os, sys, time, sqlite3
os.cpu_count = lambda: 2
import concurrent.futures.process as process
import rlpapers.store.parsing as parsing
import rlpapers.store.refresh as refresh
parsing.PARALLEL_BYTES = 0
handled = process._ExecutorManagerThread.process_result_item
def slow(self, item):
    handled(self, item)
    time.sleep(3)
process._ExecutorManagerThread.process_result_item = slow
def full(self, *args):
    time.sleep(1.5)
    raise sqlite3.OperationalError("database or disk is full")
refresh.Refresh._keep_parse = full
from rlpapers.cli import main
sys.argv = ["rlpapers", *sys.argv[1:]]
main()
"""


def test_a_write_error_while_a_worker_sends_its_parse_is_exit_2_not_a_hang(tmp_path):
    """An error while a two-process parse is under way (a full disk here) is one line and exit
    2, at once: never a process that prints the error and then never ends. (Seen with no
    forcing: a build into a 600 KiB index folder hung in 2 runs of 6, before schema 7 too.)"""
    import concurrent.futures.process as process

    if not hasattr(process._ExecutorManagerThread, "process_result_item"):
        pytest.skip("this Python's process pool has no process_result_item to slow down")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, count in (("a.txt", 20), ("b.txt", 400)):  # b's result is far over a pipe's 64 KB
        blocks = [
            f"We propose {name[0]}{i}RL. " + " ".join(f"w{i}x{j}" for j in range(60)) + "."
            for i in range(count)
        ]
        (corpus / name).write_text("Topic\n\n" + "\n\n".join(blocks) + "\n")
    argv = [sys.executable, "-c", FULL_DISK_WHILE_A_WORKER_SENDS, "--corpus", str(corpus), "list"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=tmp_path)
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"printed {hung.stderr!r} and never ended")
    assert done.returncode == 2 and "database or disk is full" in done.stderr, done.stderr


#: A parse worker busy with a file for ten minutes (a large file on a slow disk).
SLOW_PARSE = (
    """
import sys, time
import rlpapers.store.parsing as parsing
parsing.PARALLEL_BYTES = 0
real = parsing.parse_one
def slow(job):
    time.sleep(600)
    return real(job)
parsing.parse_one = slow
"""
    + RUN_MAIN
)


def _slow_parse(tmp_path: Path) -> tuple[subprocess.Popen[str], list[Any]]:
    """A first build parsing on two processes, and its two workers, ten minutes from the end of
    their files."""
    import psutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SEEDS, corpus)
    for name in ("c", "d", "e"):  # more files than workers: some wait their turn
        _write(corpus / f"{name}.txt", f"Topic\n\n{_abstract(f'{name.upper()}RL, a method')}\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_PARSE, "--corpus", str(corpus), "list", "-f", "ids"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and len(psutil.Process(proc.pid).children()) < 2:
        time.sleep(0.05)
    workers = psutil.Process(proc.pid).children()
    assert len(workers) == 2, "the parse never started its workers"
    return proc, workers


@pytest.mark.parametrize(
    ("stop", "code", "message"),
    [
        ("ctrl-c", 130, "note: interrupted\n"),
        ("a worker killed", 2, "error: a process parsing the corpus ended abruptly"),
    ],
)
def test_a_parse_on_two_processes_stops_at_once(tmp_path, stop, code, message):
    """Ctrl-C (the whole process group, as a terminal sends it) or a worker killed (for
    memory) ends the run at once with one line, not after the files the workers are on."""
    import signal

    import psutil

    proc, workers = _slow_parse(tmp_path)
    if stop == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        workers[0].kill()
    try:  # the workers have ten minutes of work left: ending within one means they were stopped
        err = proc.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    assert proc.returncode == code and err.startswith(message) and err.count("\n") == 1, err
    assert not [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
