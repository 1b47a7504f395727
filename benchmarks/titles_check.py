"""Check derived titles on arXiv abstracts: none may end in an ellipsis or a cut word, or be
longer than 200 characters (``rlpapers.parse.titles.title_problems``).

    python benchmarks/titles_check.py [--corpus PATH] [--sample 1000] [--show 10]

Prints how many titles have a problem (the target is 0) and a few examples of titles and of the
problems found. The test suite checks the bundled papers and synthetic cases; this is the check
on real abstracts it cannot depend on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from rlpapers.parse.titles import derive_title, title_problems

DEFAULT = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "corpora"
    / "arxiv-cs-2025-2026.jsonl.gz"
)


def abstracts(path: Path, sample: int) -> list[str]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            out.append(" ".join(json.loads(line)["abstract"].split()))
            if len(out) >= sample:
                break
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT)
    parser.add_argument("--sample", type=int, default=1000, help="the first N abstracts")
    parser.add_argument("--show", type=int, default=10, help="examples to print")
    args = parser.parse_args()
    texts = abstracts(args.corpus, args.sample)
    bad = []
    lengths = []
    for text in texts:
        _, title = derive_title(text)
        lengths.append(len(title))
        problems = title_problems(title, text)
        if problems:
            bad.append((title, problems))
    lengths.sort()
    print(f"{len(texts)} abstracts: {len(bad)} titles with a problem")
    print(f"title length: median {lengths[len(lengths) // 2]}, longest {lengths[-1]} characters")
    for title, problems in bad[: args.show]:
        print(f"  {title!r}: {'; '.join(problems)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
