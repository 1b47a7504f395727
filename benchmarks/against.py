"""Build, refresh and memory of this checkout against another one, in one run, on one corpus.

    python benchmarks/against.py OTHER_CHECKOUT [--size 10000] [--rounds 3]

OTHER_CHECKOUT is another checkout of rlpapers (``git worktree add DIR <commit>``). Each side runs
as ``python -m rlpapers`` from its own folder, so each imports its own code, with its own index
folder and a fresh ledger; the sides take turns, round after round, so that a busy machine slows
both alike. The corpus is the arXiv records written as bench.py writes them. Per round and side:

- **build**: ``rlpapers index`` from nothing: wall and CPU time, and peak memory as bench.py
  measures it (the PSS of the process and its workers, sampled every 50 ms);
- **no change**: ``rlpapers search policy -f ids --limit 10`` when nothing changed;
- **refresh**: the same search after one corpus file gained a paper (then the file is put back).

Printed: the median of each figure per side, and this checkout's median over the other's.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench

PROBE = b"\n\ncs.LG \xc2\xb7 cs.AI\n\nAda Lovelace, Alan Turing\n\nWe propose ZebraRL, a refresh probe.\n"


def one_round(side: Path, corpus: Path, work: Path) -> dict[str, float]:
    index, data = work / "index", work / "data"
    shutil.rmtree(index, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    env = bench.env_without_bytecode_block() | {"RLPAPERS_DATA_DIR": str(data)}
    base = ["--corpus", str(corpus), "--index-dir", str(index)]
    build = bench.timed_process(bench.rlpapers_cmd(*base, "index"), env, cwd=side)
    # --limit 10: the same output on both sides (before issue 11, -f ids printed the first 10
    # hits by default; now it prints every match, 3,927 ids at 75k)
    search = bench.rlpapers_cmd(*base, "search", "policy", "-f", "ids", "--limit", "10")
    same = bench.timed_process(search, env, cwd=side)
    victim = sorted(corpus.glob("*.txt"))[len(list(corpus.glob("*.txt"))) // 2]
    original = victim.read_bytes()
    try:
        victim.write_bytes(original + PROBE)
        refresh = bench.timed_process(search, env, cwd=side)
    finally:
        victim.write_bytes(original)
    return {
        "build wall s": build["wall_s"],
        "build CPU s": build["cpu_s"],
        "build peak MB": build["peak_mb"],
        "no change s": same["wall_s"],
        "refresh one file s": refresh["wall_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("other", type=Path, help="another checkout of rlpapers")
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=bench.CORPUS)
    args = parser.parse_args()
    sides = {"this": bench.ROOT, "other": args.other.resolve()}
    corpus = bench.write_corpus(
        bench.load_records(args.corpus), bench.OUT / f"corpus-{args.size}", args.size
    )
    figures: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            for name, side in sides.items():
                print(f"round {n + 1}: {name}", file=sys.stderr)
                figures[name].append(one_round(side, corpus, Path(tmp) / name))
    print(f"| {args.size:,} records, median of {args.rounds} | this | other | this / other |")
    print("| --- | ---: | ---: | ---: |")
    for measure in figures["this"][0]:
        this, other = (statistics.median(r[measure] for r in figures[s]) for s in sides)
        print(f"| {measure} | {this:.2f} | {other:.2f} | {this / other:.2f}x |")


if __name__ == "__main__":
    main()
