"""Warm search latency of several checkouts of rlpapers, on the same corpus, in one run.

    python benchmarks/search_latency.py BASE_CHECKOUT [--size 75000] [--rounds 5] [--config FILE]
                                        [--long] [--index DIR] [--tail N]

Compares this checkout with others (for example a ``git worktree`` of the commit before a
change): the arXiv records are written as in ``bench.py``, each checkout builds its own index
(once: kept in ``benchmarks/out/latency-*``), then each checkout's ``Library.search(q, limit=10)``
is timed over ``bench.QUERIES`` in a warm process, the checkouts taking turns for several rounds
so that load on a shared machine falls on all of them alike (the order turns round each round).
Prints the p50, p95 and p95/p50 of each checkout over all rounds, each one's p50 as a ratio of
the first, and with ``--tail N`` the N slowest queries (median ms in each checkout).
``--index DIR``: one index every checkout reads (``bench.py``'s ``out/index-75000``, its ledger
in ``DIR-data`` beside it, as ``bench.py`` leaves them) instead of one built for each.

``--long`` then times long queries in this checkout alone, warm, wall and CPU time: the 112
CISI requests (``judged.py``; a median of about 50 words) and three paragraphs of 50, 300 and
3,000 words (the words of the first arXiv abstracts, punctuation dropped), three times each.
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


_LONG_TIMER = """
import json, os, sys, time
sys.path[:0] = [sys.argv[4]]
sys.path += sys.argv[5].split(os.pathsep)
from rlpapers import Library
library = Library(corpus=[sys.argv[1]], index_dir=sys.argv[2])
library.search("policy", limit=10)
out = []
for query in json.loads(sys.argv[3]):
    start, cpu = time.perf_counter(), time.process_time()
    library.search(query, limit=10)
    out.append(((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000))
print(json.dumps(out))
"""


def paragraphs(records: list[dict[str, object]], sizes: tuple[int, ...]) -> list[str]:
    """The first ``n`` words of the arXiv abstracts, in order, for each ``n`` in ``sizes``."""
    from rlpapers.querylang import text_query

    words: list[str] = []
    for record in records:
        words += text_query(str(record["abstract"])).split()
        if len(words) >= max(sizes):
            break
    return [" ".join(words[:n]) for n in sizes]


def long_queries(corpus: Path, index: Path, records: list[dict[str, object]]) -> None:
    import judged

    requests = [text for _, text in judged.cisi().queries]
    texts = paragraphs(records, (50, 300, 3000))
    out = json.loads(python_in(ROOT, _LONG_TIMER, str(corpus), str(index), json.dumps(requests)))
    walls = [wall for wall, _ in out]
    cpus = [cpu for _, cpu in out]
    print(
        f"CISI requests ({len(requests)}): wall p50 {statistics.median(walls):.0f} ms, "
        f"p95 {percentile(walls, 0.95):.0f} ms; CPU p50 {statistics.median(cpus):.0f} ms, "
        f"p95 {percentile(cpus, 0.95):.0f} ms"
    )
    for text in texts:
        out = json.loads(
            python_in(ROOT, _LONG_TIMER, str(corpus), str(index), json.dumps([text] * 3))
        )
        print(
            f"{len(text.split())} words ({len(text):,} characters): wall "
            + ", ".join(f"{wall / 1000:.2f}" for wall, _ in out)
            + " s; CPU "
            + ", ".join(f"{cpu / 1000:.2f}" for _, cpu in out)
            + " s"
        )


def python_in(
    checkout: Path, code: str, *args: str, config: Path | None = None, data: Path | None = None
) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RLPAPERS_CONFIG"}
    if data is not None:
        env["RLPAPERS_DATA_DIR"] = str(data)
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
    parser.add_argument(
        "--long", action="store_true", help="also time long queries (this checkout)"
    )
    parser.add_argument("--index", type=Path, help="one built index for every checkout")
    parser.add_argument("--tail", type=int, default=0, help="show the N slowest queries")
    args = parser.parse_args()
    records = load_records(args.corpus) if args.long or not args.index else []
    checkouts = [ROOT, *[p.resolve() for p in args.others]]
    if args.index:
        corpus = args.index.parent / f"corpus-{args.size}"
        indexes = [args.index.resolve()] * len(checkouts)
    else:
        corpus = write_corpus(records, OUT / f"corpus-{args.size}", args.size)
        indexes = [OUT / f"latency-{args.size}-{i}" for i in range(len(checkouts))]
    data = args.index.with_name(args.index.name + "-data").resolve() if args.index else None
    configs = [args.config] + [None] * len(args.others)
    runs = list(zip(checkouts, indexes, configs, strict=True))
    for checkout, index, config in runs:
        python_in(
            checkout,
            _TIMER,
            str(corpus),
            str(index),
            json.dumps(QUERIES[:1]),
            config=config,
            data=data,
        )
    times: list[list[float]] = [[] for _ in checkouts]
    for turn in range(args.rounds):
        order = list(enumerate(runs))
        for i, (checkout, index, config) in order if turn % 2 == 0 else reversed(order):
            out = python_in(
                checkout,
                _TIMER,
                str(corpus),
                str(index),
                json.dumps(QUERIES),
                config=config,
                data=data,
            )
            times[i].extend(json.loads(out))
    report(checkouts, times, args.tail)
    if args.long:
        long_queries(corpus, indexes[0], records)


def report(checkouts: list[Path], times: list[list[float]], tail: int) -> None:
    if not times[0]:
        return
    base = statistics.median(times[0])
    for checkout, values in zip(checkouts, times, strict=True):
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        print(
            f"{checkout.name}: p50 {p50:.1f} ms  p95 {p95:.1f} ms  p95/p50 {p95 / p50:.2f}  "
            f"({p50 / base:.2f}x the first)"
        )
    per_query = [
        {q: statistics.median(values[i :: len(QUERIES)]) for i, q in enumerate(QUERIES)}
        for values in times
    ]
    for query in sorted(QUERIES, key=lambda q: -per_query[0][q])[:tail]:
        print("  " + "  ".join(f"{one[query]:7.1f}" for one in per_query) + f"  {query}")


if __name__ == "__main__":
    main()
