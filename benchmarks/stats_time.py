"""What `rlpapers stats` costs against a warm `rlpapers search`, whole processes, interleaved:
the first `stats` after the records changed (it computes and keeps its result), a repeated one
(the kept result), and a warm search.

    python benchmarks/stats_time.py --papers 3000 --runs 7
    python benchmarks/stats_time.py --corpus FOLDER --runs 3   # e.g. the 75k corpus of bench.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(env: dict[str, str], *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rlpapers", *args], env=env, capture_output=True)
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return time.perf_counter() - start


def forget_stats(index: Path) -> None:
    for kept in index.rglob("stats.json"):
        kept.unlink()


def measure(corpus: Path, scratch: Path, runs: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RLPAPERS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' machines write bytecode
    env |= {"RLPAPERS_DATA_DIR": str(scratch / "data"), "RLPAPERS_INDEX_DIR": str(scratch / "ix")}
    base = ("--corpus", str(corpus))
    timed(env, *base, "search", "policy")  # the build, and bytecode written
    times: dict[str, list[float]] = {"first stats": [], "stats": [], "search": []}
    for _ in range(runs):
        forget_stats(scratch / "ix")
        times["first stats"].append(timed(env, *base, "stats"))
        times["stats"].append(timed(env, *base, "stats"))
        times["search"].append(timed(env, *base, "search", "policy"))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=3000, help="arXiv papers to write")
    parser.add_argument("--corpus", type=Path, help="an existing corpus folder instead")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        corpus = args.corpus
        if corpus is None:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from metadata_refresh import write_corpus

            corpus = Path(scratch, "corpus")
            write_corpus(corpus, args.papers, metadata=False)
        got = measure(corpus.resolve(), Path(scratch), args.runs)
    search = got["search"]
    print(f"{corpus}: median of {args.runs} interleaved runs, seconds")
    for name, seconds in got.items():
        print(f"  {name:12} {seconds:6.2f}  ({seconds / search:.2f}x a warm search)")


if __name__ == "__main__":
    main()
