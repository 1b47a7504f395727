"""What metadata costs a refresh and an export: 3,000 arXiv papers in 5 files with a metadata.yaml
of their real titles, years, URLs and tags (about 0.5 MB) and a pinned keys.yaml, against the same
corpus without them.

    python benchmarks/metadata_refresh.py [--papers 3000] [--runs 5] [--before DIR]

Printed, as medians of whole-process runs (``python -m rlpapers``, so DIR, another checkout made
with ``git worktree add DIR <commit>``, runs its own code in the same run):
- a refresh after ``touch`` of one text file (``list -f ids``), with and without the metadata;
- ``export -f yaml`` against ``export -f json`` of every paper.
Targets (docs/performance.md): the refresh at most 2x the one without metadata, the YAML export
at most 3x the JSON one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARXIV = ROOT.parent / "shared" / "corpora" / "arxiv-cs-2025-2026.jsonl.gz"


def arxiv_records(count: int) -> list[dict]:
    """The first ``count`` records of the shared arXiv corpus."""
    records = []
    with gzip.open(ARXIV, "rt", encoding="utf-8") as lines:
        for line in lines:
            records.append(json.loads(line))
            if len(records) == count:
                break
    return records


def write_corpus(folder: Path, count: int, metadata: bool) -> None:
    folder.mkdir(parents=True)
    records = arxiv_records(count)
    per_file = -(-count // 5)
    for n in range(5):
        with open(folder / f"part{n}.txt", "w", encoding="utf-8") as out:
            out.write("Papers\n\n")
            for r in records[n * per_file : (n + 1) * per_file]:
                out.write(" · ".join(r["categories"]) + "\n\n" + ", ".join(r["authors"][:8]))
                out.write("\n\n" + " ".join(r["abstract"].split()) + "\n\n")
    if metadata:
        from rlpapers.parse import paper_id

        with open(folder / "metadata.yaml", "w", encoding="utf-8") as out:
            for r in records:
                pid = paper_id(" ".join(r["abstract"].split()))
                entry = {
                    "title": r["title"],
                    "year": int(r["date"][:4]),
                    "url": r["url"],
                    "tags": r["categories"][:2],
                }
                out.write(f"{json.dumps(pid)}: {json.dumps(entry, ensure_ascii=False)}\n")


def timed(checkout: Path, env: dict[str, str], *args: str) -> float:
    """Seconds of one ``python -m rlpapers`` run of ``checkout``'s code (``-m`` imports the
    package from the working folder first, so ``cwd`` chooses the checkout)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rlpapers", *args], cwd=checkout, env=env, capture_output=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(done.stderr.decode())
    return time.perf_counter() - start


def measure(checkout: Path, scratch: Path, corpus: Path, runs: int) -> dict[str, float]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RLPAPERS_")},
        "RLPAPERS_DATA_DIR": str(scratch / "data"),
        "RLPAPERS_INDEX_DIR": str(scratch / "index"),
        "XDG_CONFIG_HOME": str(scratch / "config"),
        "PYTHONPATH": str(checkout),
    }
    base = ("--corpus", str(corpus))
    timed(checkout, env, *base, "list", "-f", "ids")  # the first build
    if (corpus / "metadata.yaml").exists():
        timed(checkout, env, *base, "keys", "--pin")
    refresh = []
    for _ in range(runs):
        os.utime(corpus / "part2.txt")
        refresh.append(timed(checkout, env, *base, "list", "-f", "ids"))
    out = {"refresh": statistics.median(refresh)}
    for fmt in ("yaml", "json"):
        out[fmt] = statistics.median(
            timed(checkout, env, *base, "export", "-f", fmt) for _ in range(runs)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout, measured in the same run")
    args = parser.parse_args()
    sides = {"this": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory() as scratch:
        for kind in ("plain", "metadata"):
            write_corpus(Path(scratch, kind), args.papers, kind == "metadata")
        print(f"{args.papers} papers, median of {args.runs} runs, seconds")
        for name, checkout in sides.items():
            figures = {
                kind: measure(
                    checkout, Path(scratch, f"{name}-{kind}"), Path(scratch, kind), args.runs
                )
                for kind in ("plain", "metadata")
            }
            plain, meta = figures["plain"], figures["metadata"]
            print(
                f"{name}: refresh after touch {meta['refresh']:.2f} with metadata, "
                f"{plain['refresh']:.2f} without ({meta['refresh'] / plain['refresh']:.2f}x, "
                f"target <= 2); export yaml {meta['yaml']:.2f}, json {meta['json']:.2f} "
                f"({meta['yaml'] / meta['json']:.2f}x, target <= 3)"
            )


if __name__ == "__main__":
    main()
