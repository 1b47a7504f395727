"""Warm search latency of several checkouts of rlpapers, on the same corpus, in one run.

    python benchmarks/search_latency.py BASE_CHECKOUT [--size 75000] [--rounds 5] [--config FILE]

Compares this checkout with others (for example a ``git worktree`` of the commit before a
change): the arXiv records are written as in ``bench.py``, each checkout builds its own index
(once: kept in ``benchmarks/out/latency-*``), then each checkout's ``Library.search(q, limit=10)``
is timed over ``bench.QUERIES`` in a warm process, the checkouts taking turns for several rounds
so that load on a shared machine falls on all of them alike. Prints the p50 and p95 of each
checkout over all rounds, and each one's p50 as a ratio of the first.
"""

from __future__ import annotations

import argparse
import json
import os
import site
import statistics
import subprocess
import sys
from pathlib import Path

from bench import CORPUS, OUT, QUERIES, load_records, percentile, write_corpus

ROOT = Path(__file__).resolve().parents[1]
_SITE = os.pathsep.join(site.getsitepackages())

# Run with ``python -S``: site-packages are added by hand, without their ``.pth`` files, so an
# editable install of one checkout does not shadow the checkout under test.
_TIMER = """
import json, os, sys, time
sys.path[:0] = [sys.argv[4]]
sys.path += sys.argv[5].split(os.pathsep)
from rlpapers import Library
assert sys.modules["rlpapers"].__file__.startswith(sys.argv[4])
library = Library(corpus=[sys.argv[1]], index_dir=sys.argv[2])
queries = json.loads(sys.argv[3])
for query in queries[:5]:
    library.search(query, limit=10)
times = []
for query in queries:
    start = time.perf_counter()
    library.search(query, limit=10)
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps(times))
"""


def python_in(checkout: Path, code: str, *args: str, config: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RLPAPERS_CONFIG"}
    if config is not None:
        env["RLPAPERS_CONFIG"] = str(config)
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, *args, str(checkout), _SITE],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("others", type=Path, nargs="+", help="other checkouts to compare")
    parser.add_argument("--size", type=int, default=75_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--config",
        type=Path,
        help="a config file for this checkout's runs only (e.g. 'search: {rerank: 0}')",
    )
    args = parser.parse_args()
    corpus = write_corpus(load_records(args.corpus), OUT / f"corpus-{args.size}", args.size)
    checkouts = [ROOT, *[p.resolve() for p in args.others]]
    indexes = [OUT / f"latency-{args.size}-{i}" for i in range(len(checkouts))]
    configs = [args.config] + [None] * len(args.others)
    runs = list(zip(checkouts, indexes, configs, strict=True))
    for checkout, index, config in runs:
        python_in(checkout, _TIMER, str(corpus), str(index), json.dumps(QUERIES[:1]), config=config)
    times: list[list[float]] = [[] for _ in checkouts]
    for _ in range(args.rounds):
        for i, (checkout, index, config) in enumerate(runs):
            out = python_in(
                checkout, _TIMER, str(corpus), str(index), json.dumps(QUERIES), config=config
            )
            times[i].extend(json.loads(out))
    base = statistics.median(times[0])
    for checkout, values in zip(checkouts, times, strict=True):
        p50 = statistics.median(values)
        print(
            f"{checkout.name}: p50 {p50:.1f} ms  p95 {percentile(values, 0.95):.1f} ms  "
            f"({p50 / base:.2f}x the first)"
        )


if __name__ == "__main__":
    main()
