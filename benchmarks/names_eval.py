"""Measure how often the name extractor recovers the coined name of arXiv papers.

Ground truth: titles of the form "Name: description" whose Name also appears in the abstract
(about 28,000 of the 74,728 records in ../shared/corpora). Precision proxy: on titles without
such a name, how often the extractor names something anyway.

    python benchmarks/names_eval.py [--corpus PATH] [--sample N] [--show K]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from pathlib import Path

from rlpapers.parse.blocks import join_lines
from rlpapers.parse.names import extract_name

DEFAULT = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "corpora"
    / "arxiv-cs-2025-2026.jsonl.gz"
)
TITLED = re.compile(r"^([^:]{1,40}):\s")


def load(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT)
    parser.add_argument(
        "--sample", type=int, default=0, help="evaluate a random sample of N records"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=0, help="print K misses")
    args = parser.parse_args()
    records = list(load(args.corpus))
    if args.sample:
        records = random.Random(args.seed).sample(records, args.sample)
    hits = total = wrong = named_none = none_total = 0
    misses = []
    for record in records:
        abstract = join_lines(record["abstract"].split("\n"))
        match = TITLED.match(record["title"])
        got = extract_name(abstract)
        if match and match.group(1) in abstract:
            total += 1
            if got == match.group(1):
                hits += 1
            else:
                wrong += bool(got)
                at = abstract.find(match.group(1))
                misses.append((match.group(1), got, abstract[max(0, at - 200) : at + 150]))
        elif not match:
            none_total += 1
            named_none += bool(got)
    print(f"name recovered: {hits}/{total} = {hits / max(total, 1):.1%}")
    print(
        f"  wrong name given: {wrong} ({wrong / max(total, 1):.1%}), none given: {total - hits - wrong}"
    )
    print(
        f"untitled-name papers given a name: {named_none}/{none_total} = {named_none / max(none_total, 1):.1%}"
    )
    for truth, got, text in random.Random(1).sample(misses, min(args.show, len(misses))):
        print(f"\n[{truth}] got [{got}]\n  {text}")


if __name__ == "__main__":
    main()
