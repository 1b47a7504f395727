"""What `rlpapers stats` costs against a warm `rlpapers search`, whole processes, interleaved:
the first `stats` after the records changed (it computes and keeps its result), a repeated one
(the kept result), and a warm search.

    python benchmarks/stats_time.py --papers 3000 --runs 7
    python benchmarks/stats_time.py --corpus FOLDER --runs 3   # e.g. the 75k corpus of bench.py
    python benchmarks/stats_time.py --papers 3000 --runs 7 --before DIR
    python benchmarks/stats_time.py --corpus FOLDER --data D --index I --runs 3 \
        --before DIR --before-data D2 --before-index I2   # folders already built, no build

With ``--before DIR`` (another checkout, e.g. ``git worktree add DIR <commit>``), DIR's code
runs too, on its own index of the same corpus, its runs interleaved with this checkout's.
``--data``/``--index`` (and ``--before-data``/``--before-index``) time data and index folders
already built for the corpus (a copy: each run rewrites the kept result), instead of building
new ones in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from metadata_refresh import timed, write_corpus  # noqa: E402


def forget_stats(index: Path) -> None:
    for kept in index.rglob("stats.json"):
        kept.unlink()


def environment(data: Path, index: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLPAPERS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' machines write bytecode
    return env | {"RLPAPERS_DATA_DIR": str(data), "RLPAPERS_INDEX_DIR": str(index)}


def measure(
    corpus: Path, folders: dict[str, tuple[Path, Path]], runs: int, before: Path | None = None
) -> dict[str, dict[str, float]]:
    """Median seconds of each kind of run, for this checkout ("now") and ``before``, each on
    its (data, index) folders."""
    codes = {"now": ROOT} if before is None else {"before": before, "now": ROOT}
    envs = {name: environment(*folders[name]) for name in codes}
    base = ("--corpus", str(corpus))
    for name, env in envs.items():
        timed(codes[name], env, *base, "search", "policy")  # the build, and bytecode written
    times = {name: {"first stats": [], "stats": [], "search": []} for name in codes}
    for _ in range(runs):
        for name, env in envs.items():
            forget_stats(folders[name][1])
            code = codes[name]
            times[name]["first stats"].append(timed(code, env, *base, "stats"))
            times[name]["stats"].append(timed(code, env, *base, "stats"))
            times[name]["search"].append(timed(code, env, *base, "search", "policy"))
    return {
        name: {kind: statistics.median(values) for kind, values in kinds.items()}
        for name, kinds in times.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=3000, help="arXiv papers to write")
    parser.add_argument("--corpus", type=Path, help="an existing corpus folder instead")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--before", type=Path, help="another checkout to run alongside")
    for who in ("", "before-"):
        parser.add_argument(f"--{who}data", type=Path, help=f"{who}data folder already built")
        parser.add_argument(f"--{who}index", type=Path, help=f"{who}index folder already built")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        corpus = args.corpus
        if corpus is None:
            corpus = Path(scratch, "corpus")
            write_corpus(corpus, args.papers, metadata=False)
        before = args.before.resolve() if args.before else None
        folders = _folders(args, Path(scratch))
        got = measure(corpus.resolve(), folders, args.runs, before)
    print(f"{corpus}: median of {args.runs} interleaved runs, seconds")
    for name, kinds in got.items():
        search = kinds["search"]
        for kind, seconds in kinds.items():
            print(f"  {name:6} {kind:12} {seconds:6.2f}  ({seconds / search:.2f}x a warm search)")


def _folders(args: argparse.Namespace, scratch: Path) -> dict[str, tuple[Path, Path]]:
    """Each checkout's (data, index) folders: those given, else new ones under ``scratch``."""
    given = {"now": (args.data, args.index), "before": (args.before_data, args.before_index)}
    if any((data is None) != (index is None) for data, index in given.values()):
        raise SystemExit("give a data folder and an index folder, or neither")
    now, before = given["now"][0], given["before"][0]
    if now and not args.corpus:
        raise SystemExit("folders already built need --corpus, the corpus they were built from")
    if now and args.before and not before:
        raise SystemExit("give --before-data and --before-index too (a copy of their own)")
    if now and before and set(given["now"]) & set(given["before"]):
        raise SystemExit("each checkout needs folders of its own (a copy)")
    return {
        name: (data, index) if data else (scratch / name / "data", scratch / name / "ix")
        for name, (data, index) in given.items()
    }


if __name__ == "__main__":
    main()
