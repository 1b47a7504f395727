"""Start-up hygiene: what a warm search imports, and what it does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import json, sys
import rlpapers.cli.app
base = set(sys.modules)
from rlpapers.library import Library
lib = Library()
hits = lib.search("entropy")
loaded = set(sys.modules)
import asyncio, urllib.request, html, random, tempfile
print(json.dumps({
    "hits": len(hits),
    "deferred_loaded": sorted(
        m for m in ("asyncio", "urllib.request", "http.client", "whoosh.lang.morph_en", "hashlib",
                    "_hashlib", "whoosh.sorting", "whoosh.automata.lev", "mmap", "whoosh.query.ranges",
                    "whoosh.query.wrappers", "whoosh.query.nested", "whoosh.query.qcolumns",
                    "whoosh.query.spans") if m in loaded
    ),
    "query_parser": "whoosh.qparser" in loaded,
    "rich": any(m == "rich" or m.startswith("rich.") for m in loaded),
    "yaml": "yaml" in loaded,
    "parser": "rlpapers.parse.names" in loaded,
    "real_asyncio": hasattr(asyncio, "get_event_loop"),
    "real_urllib": hasattr(urllib.request, "urlopen"),
    "real_variations": __import__("whoosh.query.terms").query.terms.variations("policy") != [],
    "real_later": hasattr(html, "unescape") and hasattr(random, "shuffle")
    and hasattr(tempfile, "mkdtemp")
    and __import__("whoosh.compat").compat.htmlescape("<a>") == "&lt;a&gt;"
    and __import__("whoosh.util").util.random_name(4) != "",
    "real_md5": __import__("whoosh.filedb.filetables").filedb.filetables.md5_hash(b"policy")
    == int(__import__("hashlib").md5(b"policy").hexdigest(), 16) & 0xFFFFFFFF,
    "real_sorting": __import__("whoosh.collectors").collectors.sorting.FieldFacet("year") is not None,
    "real_lev": bool(__import__("whoosh.codec.base").codec.base.lev.levenshtein_automaton),
    "real_spans": __import__("whoosh.query").query.SpanNear.__module__ == "whoosh.query.spans",
}))
"""


def test_warm_search_imports_only_what_it_uses(isolated):
    env = {
        "RLPAPERS_INDEX_DIR": str(isolated / "index"),
        "RLPAPERS_DATA_DIR": str(isolated / "data"),  # never the user's own ledger
        "PATH": "",
        "NO_COLOR": "1",
    }
    subprocess.run(
        [sys.executable, "-c", 'from rlpapers import Library; Library().search("entropy")'],
        env=env,
        check=True,
    )
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True
    )
    report = json.loads(out.stdout)
    assert report["hits"] >= 1
    # Whoosh's unused asyncio, urllib.request, OpenSSL (md5 comes from _md5), sorting, fuzzy
    # automata, mmap and query types stay unloaded
    assert report["deferred_loaded"] == []
    assert not report["rich"] and not report["yaml"] and not report["parser"]
    assert not report["query_parser"]  # a query of plain words never needs Whoosh's parser
    assert (
        report["real_asyncio"]
        and report["real_urllib"]
        and report["real_variations"]
        and report["real_later"]
        and report["real_md5"]
        and report["real_sorting"]
        and report["real_lev"]
        and report["real_spans"]
    )  # and later imports get the real modules, and Whoosh's bound names work


def _child_env(home: Path) -> dict[str, str]:
    """A child process's whole environment: its own home, index and data folders, no PATH."""
    return {
        "RLPAPERS_INDEX_DIR": str(home / "index"),
        "RLPAPERS_DATA_DIR": str(home / "data"),
        "PATH": "",
        "HOME": str(home),
    }


PROBE_RUN = """
import json, sys
from rlpapers.cli import main
sys.argv = ["rlpapers", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _warm_run(isolated: Path, *argv: str) -> tuple[str, set[str]]:
    """A command's output and the modules it loaded, run in a fresh process after a first
    run of it has built what it needs."""
    env = _child_env(isolated)
    run = [sys.executable, "-c", PROBE_RUN, *argv]
    subprocess.run(run, env=env, check=True, capture_output=True)
    out = subprocess.run(run, env=env, check=True, capture_output=True, text=True)
    return out.stdout, set(json.loads(out.stderr.splitlines()[-1]))


def test_a_warm_cli_search_leaves_whoosh_s_writing_modules_unloaded(isolated):
    """Modules Whoosh imports for writing an index, sampling or highlighting (``html``,
    ``random``, ``calendar``, ``tempfile``, ``queue``) stay unloaded by a search that writes
    nothing; the probe above checks that Whoosh's names bound to them still work."""
    stdout, loaded = _warm_run(isolated, "search", "entropy")  # tsv lines, in a pipe
    assert stdout.count("\t") >= 10
    assert "whoosh.searching" in loaded
    assert not loaded & {"html", "random", "calendar", "tempfile", "queue"}
    assert not loaded & {"hashlib", "_hashlib", "whoosh.sorting", "whoosh.automata.lev", "mmap"}
    assert not loaded & {"whoosh.query.ranges", "whoosh.query.spans", "whoosh.query.nested"}
    assert "csv" not in loaded  # the tsv lines need the CSV exporter's cells, not its writer
    assert not loaded & TYPER_DEFERRED  # cli/_lightimport


#: What Typer's and Click's import would load and a run does not use (cli/_lightimport).
TYPER_DEFERRED = {"subprocess", "selectors", "difflib", "tokenize", "ipaddress", "bz2", "lzma"}

PROBE_LATER = """
import sys
from rlpapers.cli import main
sys.argv = ["rlpapers", "search", "entropy"]
try:
    main()
except SystemExit:
    pass
unloaded = sorted(m for m in %r if m in sys.modules)
from rlpapers import querylang, text
compiled = [f.__name__ for f in (text._surrogates, text._controls, querylang._text_word,
                                 querylang.family) if f.cache_info().currsize]
import importlib.util, inspect, json, linecache, shutil, urllib.parse
import typer.core, typer.main
print(json.dumps({
    "unloaded": unloaded,
    "compiled": compiled,
    "shutil": [shutil._BZ2_SUPPORTED, shutil._LZMA_SUPPORTED],
    "compression": [importlib.util.find_spec(m) is not None for m in ("_bz2", "_lzma")],
    "bracketed": urllib.parse.urlsplit("http://[::1]:8080/x").port,
    "line": linecache.getline(inspect.__file__, 1),
    "source": inspect.getsource(main).splitlines()[0],
    "close": typer.core.get_close_matches("serch", ["search", "show"]),
    "subprocess": typer.main.subprocess.DEVNULL == __import__("subprocess").DEVNULL,
}), file=sys.stderr)
"""


def test_what_typer_s_import_leaves_unloaded_works_when_used(isolated):
    """A warm search leaves the modules in ``TYPER_DEFERRED`` unloaded (and compiles none of
    the regular expressions only other runs use), and each works as the real one afterwards: archives shutil offers, IPv6 hosts, reading source code, did-you-mean,
    subprocess through Typer."""
    env = _child_env(isolated)
    run = [sys.executable, "-c", PROBE_LATER % (sorted(TYPER_DEFERRED),)]
    subprocess.run(run, env=env, check=True, capture_output=True)
    done = subprocess.run(run, env=env, check=True, capture_output=True, text=True)
    report = json.loads(done.stderr.splitlines()[-1])
    assert report["unloaded"] == [] and done.stdout.strip()
    assert report["compiled"] == []  # patterns a search never uses are compiled on first use
    assert report["shutil"] == report["compression"]
    assert report["bracketed"] == 8080
    assert report["line"] and report["source"].startswith("def main(")
    assert report["close"] == ["search"] and report["subprocess"]


def test_the_lazy_query_package_is_what_whoosh_s_own_would_be():
    """``whoosh.query`` is made lazily (``_lightimport.LAZY_PACKAGES``), on the knowledge that
    its ``__init__`` star-imports exactly these submodules in this order: a Whoosh whose
    ``__init__`` does anything else fails here. Fully loaded, it holds the very names and
    objects the real ``__init__`` would bind."""
    import importlib.util

    import rlpapers.index  # noqa: F401  (imports Whoosh, the lazy way)
    from rlpapers.index._lightimport import LAZY_PACKAGES

    for name, subs in LAZY_PACKAGES.items():
        spec = importlib.util.find_spec(name)
        source = Path(spec.origin).read_text(encoding="utf-8")
        lines = [ln for ln in source.splitlines() if ln.strip() and not ln.startswith("#")]
        assert lines == [f"from {name}.{sub} import *" for sub in subs]
        package = sys.modules[name]
        names = set(dir(package))  # loads every submodule
        real: dict[str, object] = {}
        exec(compile(source, spec.origin, "exec"), real)
        public = {k: v for k, v in real.items() if not k.startswith("_") and k not in subs}
        mine = {k: v for k, v in vars(package).items() if not k.startswith("_") and k not in subs}
        assert mine == public and set(public) <= names
        for sub in subs:  # the submodule, unless a later star-import bound its name to another
            assert getattr(package, sub) is real.get(sub, sys.modules[f"{name}.{sub}"])


def test_a_warm_list_loads_no_parser_platformdirs_or_whoosh(isolated):
    stdout, loaded = _warm_run(isolated, "list", "--format", "ids")
    assert len(stdout.split()) == 40
    heavy = {"platformdirs", "whoosh", "yaml", "rlpapers.parse.blocks", "rlpapers.parse.names"}
    assert not loaded & heavy
    # looking papers up (show, export --ids) and the ledger (a refresh) are not listing
    assert not loaded & {"rlpapers.store.find", "rlpapers.lookup", "rlpapers.store.ledger"}
    assert "rlpapers.text" not in loaded  # output that encodes cleanly needs no repair
    # finishing records and reading overrides belong to a refresh; no option asked for filters
    refresh_only = {"rlpapers.store.finish", "rlpapers.metadata", "rlpapers.filters"}
    assert not loaded & (refresh_only | {"rlpapers.corpus"})
    assert "rlpapers.hit" not in loaded  # only searches make hits
    # Typer's unused imports (cli/_lightimport); Click's own parsing of ``-f`` loads difflib
    assert not loaded & (TYPER_DEFERRED - {"difflib"})


@pytest.mark.skipif(sys.platform != "linux", reason="the direct reading is Linux's")
@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/ada"},
        {"HOME": "/home/ada/"},
        {"HOME": "/"},
        {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/x/conf", "XDG_DATA_HOME": "/x/data"},
        {"HOME": "/home/ada", "XDG_CACHE_HOME": "relative/cache", "XDG_DATA_HOME": ""},
        {"HOME": "relative", "XDG_CACHE_HOME": "/x/cache"},
    ],
)
def test_user_folders_are_the_ones_platformdirs_names(monkeypatch, env):
    import platformdirs

    from rlpapers.config import APP, user_path

    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "ANDROID_DATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for kind in ("config", "data", "cache"):
        try:
            expected = getattr(platformdirs, f"user_{kind}_path")(APP)
        except RuntimeError:  # platformdirs finds no home: we ask it too, and fail the same way
            with pytest.raises(RuntimeError):
                user_path(kind)
            continue
        assert user_path(kind) == expected, kind


def test_a_run_builds_only_the_command_it_runs():
    import typer.main

    from rlpapers.cli.app import GROUP_VALUE_OPTIONS, app
    from rlpapers.cli.dispatch import app_for, command_in

    whole = typer.main.get_command(app)
    valued = {o for p in whole.params if not getattr(p, "is_flag", True) for o in p.opts}
    assert valued == set(GROUP_VALUE_OPTIONS)  # command_in skips exactly these options' values
    assert command_in(["--corpus", "list", "search", "x"]) == "search"
    assert command_in(["-c", "show", "--index-dir", "i", "--version"]) is None
    assert command_in(["search", "x", "--corpus", "c"]) == "search"
    assert command_in(["--", "show", "k"]) == "show"
    assert command_in(["lst"]) is None and command_in([]) is None
    assert (
        command_in(["--help", "search"]) is None and command_in(["-c", "x", "-h", "list"]) is None
    )
    assert command_in(["search", "--help"]) == "search"  # the command's own help
    one = typer.main.get_command(app_for(["--encoding", "cp1252", "export", "q"]))
    assert list(one.commands) == ["export"]
    # shell completion's options are the whole app's (building them costs every run)
    assert not {"--install-completion", "--show-completion"} & {
        o for p in one.params for o in p.opts
    }
    assert {"--install-completion", "--show-completion"} <= {
        o for p in whole.params for o in p.opts
    }
    assert command_in(["--show-completion", "search"]) is None
    assert command_in(["--install-completion=bash", "list"]) is None
    assert typer.main.get_command(app_for(["--help"])).commands.keys() == whole.commands.keys()


# --- what a run opens, it closes ----------------------------------------------------------------------

RUNS = [
    ["list", "--format", "ids"],
    ["export", "--ids", "-"],
    ["show", "qerl"],
    ["search", "entropy"],
    ["keys"],
]


def test_a_run_closes_its_databases_itself(isolated):
    """The run closes the store and the ledger it opened, rather than leave them to the
    collector (a connection left open leaves its -wal). ``cli.main`` freezes the collector at
    exit, so no last collection would close them."""
    env = _child_env(isolated)
    for args in RUNS:
        done = subprocess.run(
            [sys.executable, "-m", "rlpapers", *args],
            env=env,
            input="qerl\npcl\n",
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, (args, done.stderr)
        assert done.stdout.strip()
        left = [p.name for p in isolated.rglob("*") if p.name.endswith(("-wal", "-shm"))]
        assert left == [], args


MAIN_PROBE = """
import atexit, gc, sys
from rlpapers.cli import main
atexit.register(lambda: print("at exit", gc.get_freeze_count() > 0, file=sys.stderr))
for args in (["--help"], ["list", "-f", "ids"], ["no-such-command"], ["list", "-f", "ids"]):
    sys.argv = ["rlpapers", *args]
    try:
        main()
    except SystemExit:
        pass
    print(gc.isenabled(), gc.get_freeze_count(), file=sys.stderr)
"""


@pytest.mark.parametrize("collecting", [True, False])
def test_main_leaves_the_collector_as_it_found_it_until_exit(isolated, collecting):
    """``main`` turns the collector off while the app starts and freezes every object only at
    exit: called again and again in one process, it changes nothing a caller would see."""
    env = _child_env(isolated)
    probe = MAIN_PROBE if collecting else "import gc; gc.disable()\n" + MAIN_PROBE
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith(("True", "False", "at"))]
    assert lines == [f"{collecting} 0"] * 4 + ["at exit True"], done.stderr


COLLECTIONS_PROBE = """
import gc, json, sys
from rlpapers.cli import dispatch, main
seen = []
gc.callbacks.append(lambda phase, info: phase == "start" and seen.append(info["generation"]))
made = dispatch.app_for
def app_for(args):
    app = made(args)
    def run(**options):
        during = {"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()[0]}
        try:
            app(**options)
        finally:
            during["collections"] = seen[:]
            print(json.dumps(during), file=sys.stderr)
    return run
dispatch.app_for = app_for
sys.argv = ["rlpapers", *sys.argv[1:]]
del seen[:]
try:
    main()
except SystemExit:
    pass
print(json.dumps({"after": [gc.get_freeze_count(), gc.get_threshold()[0]]}), file=sys.stderr)
"""


def test_a_warm_search_leaves_start_up_out_of_the_collector_s_reach(isolated):
    """Start-up's objects (Typer, Click, the app: tens of thousands, made with the collector
    off) are frozen while the command runs, and the collector starts after ``RUN_THRESHOLD``
    allocations rather than 700: a warm search on the bundled corpus starts no collection
    (the first collection after start-up would walk every object it made, and each second-
    generation one walks them again: about 10 ms of a search). Afterwards the collector is
    as it was."""
    from rlpapers.cli import RUN_THRESHOLD

    env = _child_env(isolated)
    run = [sys.executable, "-c", COLLECTIONS_PROBE, "search", "entropy", "--format", "ids"]
    subprocess.run(run, env=env, check=True, capture_output=True)
    done = subprocess.run(run, env=env, check=True, capture_output=True, text=True)
    during, after = (json.loads(line) for line in done.stderr.splitlines()[-2:])
    assert done.stdout.split()
    assert during["frozen"] > 10_000 and during["threshold"] == RUN_THRESHOLD
    assert during["collections"] == []
    assert after == {"after": [0, 700]}


def test_a_closed_library_opens_again_when_read():
    from rlpapers import Library

    with Library() as lib:
        first = lib.get("qerl")
        lib.search("entropy")
        store, index = lib.store, lib.index
    assert "con" not in store.__dict__ and index._searcher is None
    assert lib.get("qerl") == first  # a later call opens the store again
    from rlpapers import SearchRequest

    index.search(SearchRequest("entropy"))  # so does the index taken before
    lib.close()  # and closing again reaches what was opened again
    assert "con" not in store.__dict__ and index._searcher is None


ZEBRAFISH = (
    "\n\nDeep Learning · Biology\n\nAda Lovelace\n\nWe propose ZebrafishRL, a reinforcement "
    "learning method that teaches simulated zebrafish to swim against a current.\n"
)


def test_a_closed_library_sees_the_corpus_and_the_index_as_they_are_now(seeds_copy):
    """Opening again is opening anew: an edit made while the library was closed shows, and a
    search view another process rebuilt meanwhile is read, not taken for damage."""
    import warnings

    from rlpapers import Library
    from rlpapers.errors import IndexNotice

    from .conftest import run

    lib = Library(corpus=[seeds_copy])
    assert lib.search("entropy") and not lib.search("zebrafishrl")
    lib.close()
    with (seeds_copy / "003_9c520f58a50b3392.txt").open("a", encoding="utf-8") as file:
        file.write(ZEBRAFISH)
    assert [hit.paper.key for hit in lib.search("zebrafishrl")] == ["lovelace_zebrafishrl"]
    lib.close()
    run("--corpus", seeds_copy, "index")  # another process builds a new view, the old one goes
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndexNotice)
        assert lib.search("entropy")
    lib.close()


def test_a_lazy_search_read_after_close_says_so(isolated):
    from rlpapers import Library

    with Library() as lib:
        ids = lib.search_ids("model", limit=None)
        hits = lib.iter_search("model", limit=None)
    for stream in (ids, hits):
        with pytest.raises(ValueError, match="after its index was closed"):
            list(stream)


def test_a_lazy_search_closed_between_its_pages_says_so(monkeypatch):
    """The second page of an unlimited search comes from the first page's searcher: a library
    closed in between does not quietly open a new one."""
    import rlpapers.index as index
    from rlpapers import Library

    monkeypatch.setattr(index, "FIRST_PAGE", 5)
    monkeypatch.setattr(index, "RANK_ALL_UPTO", 0)
    lib = Library()
    everything = list(lib.search_ids("model", limit=None))
    assert len(everything) > 5
    stream = lib.search_ids("model", limit=None)
    assert [next(stream) for _ in range(5)] == everything[:5]
    lib.close()
    with pytest.raises(ValueError, match="after its index was closed"):
        list(stream)
    assert lib.index._searcher is None
