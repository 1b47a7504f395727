"""Key assignment when many papers share one base key, against the same count with distinct ones.

Author-less papers whose derived titles share their first word all want the base key ``paper``
(``paper``, ``paperb``, ``paperc`` …). Each build runs in a fresh process, the two kinds taking
turns, and the medians' ratio is printed: the target is at most 1.2 (see docs/performance.md).

    python benchmarks/key_collisions.py --papers 10000 --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUILD = """
import os, sys, time
from pathlib import Path
from rlpapers import Library
folder = Path(sys.argv[1])
start = time.perf_counter()
with Library([folder / "corpus"]) as lib:
    keys = [p.key for p in lib.papers]
assert len(set(keys)) == len(keys)
print(time.perf_counter() - start, keys[-1])
"""


def write_corpus(folder: Path, papers: int, shared: bool) -> None:
    (folder / "corpus").mkdir(parents=True)
    with open(folder / "corpus" / "papers.txt", "w", encoding="utf-8") as out:
        out.write("Topic\n\n")
        for i in range(papers):
            word = "Paper" if shared else f"Zq{i}x"
            out.write(f"{word} models number {i} quantity {i * 7} and {i * 13} measured here.\n\n")


def build(folder: Path) -> tuple[float, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "RLPAPERS_DATA_DIR": str(folder / "data"),
        "RLPAPERS_INDEX_DIR": str(folder / "index"),
        "XDG_CONFIG_HOME": str(folder / "config"),  # no config file
    }
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(folder)], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    seconds, last = done.stdout.split()
    return float(seconds), last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {"shared": [], "distinct": []}
    last = {}
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(args.rounds):
            for kind in times:
                folder = Path(scratch) / f"{kind}-{n}"
                write_corpus(folder, args.papers, kind == "shared")
                seconds, last[kind] = build(folder)
                times[kind].append(seconds)
    shared, distinct = (statistics.median(times[k]) for k in ("shared", "distinct"))
    print(f"{args.papers} papers, {args.rounds} rounds, median build (records and keys):")
    print(f"  one shared base key: {shared:.2f} s (last key {last['shared']})")
    print(f"  distinct base keys:  {distinct:.2f} s")
    print(f"  ratio shared/distinct: {shared / distinct:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
