"""Parse the first arXiv records as the build does, time it, and compare with an earlier run.

    python benchmarks/parse_check.py --write before.jsonl       # with the code before a change
    python benchmarks/parse_check.py --compare before.jsonl     # with the code after it

The first ``--size`` (10,000) records of ../shared/corpora are written in the seed layout
(bench.py's monthly files), each file is parsed (``parse_file``) and the whole is finished
(``store.finish``: ids and keys), all in this process. Every field of every record goes to the
JSON lines file (``--write``) or is compared with it (``--compare``): names, titles, authors,
ids and keys are what a paper's identity is made of, so a change that makes parsing faster must
leave all of them as they were. Prints the CPU time of the parse, in milliseconds a paper (the
best of ``--rounds``), and the records that differ, if any (exit 1 then).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def parse_corpus(folder: Path) -> tuple[list[Any], float]:
    """The finished records of every seed file in ``folder`` and the CPU seconds it took."""
    from rlpapers.parse import parse_file
    from rlpapers.store.finish import finish

    start = time.process_time()
    papers = []
    for path in sorted(folder.glob("*.txt")):
        papers.extend(parse_file(path))
    done = finish(papers)
    return done, time.process_time() - start


def as_json(paper: Any) -> str:
    return json.dumps(dataclasses.asdict(paper), ensure_ascii=False, sort_keys=True)


def differences(before: list[str], after: list[str]) -> list[str]:
    """One line a record that is not what it was (and one for a count that changed)."""
    found = []
    if len(before) != len(after):
        found.append(f"{len(before)} records before, {len(after)} now")
    for n, (old, new) in enumerate(zip(before, after, strict=False)):
        if old != new:
            a, b = json.loads(old), json.loads(new)
            fields = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            shown = "; ".join(f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in fields[:3])
            found.append(f"record {n} ({a.get('id')}): {shown}")
    return found


def main() -> int:
    from bench import CORPUS, OUT, load_records, write_corpus

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="parses timed; the best is shown")
    parser.add_argument("--out", type=Path, default=OUT)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--write", type=Path, help="write the records here (JSON lines)")
    what.add_argument("--compare", type=Path, help="compare the records with this file")
    args = parser.parse_args()
    folder = write_corpus(
        load_records(args.corpus, args.size), args.out / f"parse-corpus-{args.size}", args.size
    )
    times = []
    for _ in range(max(1, args.rounds)):
        papers, seconds = parse_corpus(folder)
        times.append(seconds)
    lines = [as_json(paper) for paper in papers]
    print(f"{len(lines)} records, parse {min(times) / len(lines) * 1000:.3f} ms a paper (CPU)")
    if args.write:
        args.write.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    before = args.compare.read_text(encoding="utf-8").splitlines()
    found = differences(before, lines)
    for line in found[:20]:
        print(line)
    print("equal: every record" if not found else f"{len(found)} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
