"""Shared fixtures: an isolated environment for every test and one CLI helper."""

from __future__ import annotations

import atexit
import inspect
import os
import resource
import shutil
import sqlite3
import tempfile
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SEEDS = ROOT / "seeds"

#: The record fields scripts rely on (issue 2's promise); search hits add "score".
RECORD_FIELDS = (
    "id",
    "key",
    "title",
    "name",
    "authors",
    "categories",
    "topic",
    "abstract",
    "source",
)

os.environ.update(
    {
        "NO_COLOR": "1",
        "TERMINAL_WIDTH": "100",
        "COLUMNS": "100",
        "_TYPER_FORCE_DISABLE_TERMINAL": "1",
    }
)
# Module-scoped fixtures (test_export's `papers`) are made before `isolated` below applies: they
# too must not read or write the user's cache, data folder and ledger.
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="rlpapers-tests-"))
atexit.register(shutil.rmtree, _SESSION_HOME, ignore_errors=True)  # each run cleans its own
os.environ.update(
    {
        "XDG_CACHE_HOME": str(_SESSION_HOME / "cache"),
        "XDG_DATA_HOME": str(_SESSION_HOME / "data"),
        "XDG_CONFIG_HOME": str(_SESSION_HOME / "config"),
    }
)
for _name in (
    "RLPAPERS_CONFIG",
    "RLPAPERS_INDEX_DIR",
    "RLPAPERS_DATA_DIR",
    "RLPAPERS_CORPUS",
    "RLPAPERS_LEDGER",
):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads the user's config or cache, or the environment's corpus."""
    home = tmp_path_factory.mktemp("home")
    (home / "config.yaml").write_text("", encoding="utf-8")  # named, so it must exist
    monkeypatch.setenv("RLPAPERS_CONFIG", str(home / "config.yaml"))
    monkeypatch.setenv("RLPAPERS_INDEX_DIR", str(home / "index"))
    monkeypatch.setenv("RLPAPERS_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.delenv("RLPAPERS_CORPUS", raising=False)
    return home


@pytest.fixture
def seeds_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled seeds."""
    target = tmp_path / "corpus"
    shutil.copytree(SEEDS, target)
    return target


class Result:
    def __init__(self, raw) -> None:
        self.exit_code = raw.exit_code
        self.stdout = raw.stdout
        self.stderr = raw.stderr


def run(*args: str, code: int = 0, input: str | bytes | None = None) -> Result:
    """Invoke the CLI in-process; assert the exit code; never swallow an exception."""
    from rlpapers.cli.app import app

    runner = CliRunner()
    raw = runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)
    result = Result(raw)
    assert raw.exit_code == code, (
        f"rlpapers {' '.join(map(str, args))} exited {raw.exit_code}, expected {code}\n"
        f"stdout:\n{raw.stdout}\nstderr:\n{raw.stderr}"
    )
    return result


def one_file_corpus(folder: Path, blocks: list[str], header: str = "Synthetic") -> Path:
    """``folder``, made, holding one corpus file (many.txt): ``header``, then each of ``blocks``
    as a paragraph of its own."""
    folder.mkdir()
    (folder / "many.txt").write_text(header + "\n\n" + "\n\n".join(blocks) + "\n")
    return folder


def cpu_seconds() -> float:
    """CPU seconds (user and system) used so far by this process and the children it has waited
    for. Bounds on work are checked with this, not the wall clock, which a loaded machine
    stretches several-fold."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def smash_page(db: Path, table: str) -> None:
    """Overwrite the start of one page of ``table`` (its last leaf, or its root)."""
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = con.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))
    page = pages.fetchall()[-1][0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    with open(db, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xff" * 64)


# --- tiers ---------------------------------------------------------------------------------------

#: Names whose use marks a test as starting processes or sending signals: such a test is in the
#: slow tier (`pytest -m slow`), which CI runs after the default, fast one.
PROCESS_NAMES = frozenset({"subprocess", "Popen", "ProcessPoolExecutor", "killpg", "signal"})


#: Tests that start no process but take over a second of CPU on a quiet machine (property and
#: fuzz runs, large inputs): measured with `pytest --durations=25`.
SLOW_TESTS = frozenset(
    {
        "test_search.py::test_limited_search_is_the_prefix_of_the_full_ranking",
        "test_search.py::test_a_limited_compound_query_is_the_prefix_of_the_full_ranking",
        "test_reliability.py::test_legacy_detection_is_bounded_on_a_50mb_line",
        "test_fuzz.py::test_random_queries_over_the_grammar",
        "test_fuzz.py::test_random_files_in_a_corpus_folder",
        "test_fuzz.py::test_random_metadata_yaml",
        "test_properties.py::test_records_survive_messy_whitespace",
        "test_export.py::test_random_specials_survive_a_bibtex_round_trip",
    }
)


def _code_names(code: types.CodeType) -> set[str]:
    """The global and attribute names ``code`` uses, its nested functions and lambdas included."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def starts_processes(
    func: object, module: types.ModuleType, seen: set[object] | None = None
) -> bool:
    """Whether ``func``, or a function of its own module it calls (at any depth), starts a process
    or sends a signal."""
    seen = set() if seen is None else seen
    code = getattr(func, "__code__", None)
    if code is None or func in seen:
        return False
    seen.add(func)
    names = _code_names(code)
    if names & PROCESS_NAMES:
        return True
    helpers = (getattr(module, name, None) for name in names)
    return any(
        inspect.isfunction(helper)
        and helper.__module__ == module.__name__
        and starts_processes(helper, module, seen)
        for helper in helpers
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark as slow every test that starts a process or sends a signal (see PROCESS_NAMES), and
    those of SLOW_TESTS."""
    for item in items:
        module = getattr(item, "module", None)
        func = getattr(item, "function", None)
        name = f"{item.path.name}::{getattr(func, '__name__', item.name)}"
        if name in SLOW_TESTS or (
            module is not None and func is not None and starts_processes(func, module)
        ):
            item.add_marker(pytest.mark.slow)
