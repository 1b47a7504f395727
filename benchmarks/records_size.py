"""The record store on disk and what reading it costs: the sizes of store.db, its records table
and the search view beside plain Whoosh's index of the same text, and whole-process times of
`export -f json` and `list -f ids` (every record read), for this checkout and another one.

    python benchmarks/records_size.py --papers 10000 --runs 9 --before DIR

10,000 arXiv papers in 5 files with a metadata.yaml of their real titles, years, URLs and tags
(``metadata_refresh.write_corpus``); DIR is another checkout (``git worktree add DIR <commit>``),
its runs interleaved with this checkout's, each on its own index of the same corpus.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from metadata_refresh import arxiv_records, timed, write_corpus  # noqa: E402
from plain_whoosh import build, write_documents  # noqa: E402
from stats_time import environment  # noqa: E402

COMMANDS = {"export -f json": ("export", "-f", "json"), "list -f ids": ("list", "-f", "ids")}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def sizes(index: Path) -> dict[str, float]:
    """MB of store.db (checkpointed), of its records table and of the search view."""
    store = next(index.rglob("store.db"))
    con = sqlite3.connect(store)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    table = con.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'records'").fetchone()[0]
    per = con.execute("SELECT avg(length(data)) FROM records").fetchone()[0]
    con.close()
    view = folder_bytes(store.parent / "view")
    mb = 1e6
    return {
        "store.db": store.stat().st_size / mb,
        "records": table / mb,
        "bytes a record": per,
        "view": view / mb,
    }


def plain_whoosh(papers: int, scratch: Path) -> float:
    docs = write_documents(arxiv_records(papers), papers, scratch / "docs.jsonl")
    build(docs, scratch / "plain")
    return folder_bytes(scratch / "plain") / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", type=Path, help="another checkout to run alongside")
    args = parser.parse_args()
    codes = {"now": ROOT} if args.before is None else {"before": args.before.resolve(), "now": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        corpus = scratch / "corpus"
        write_corpus(corpus, args.papers, metadata=True)
        base = ("--corpus", str(corpus))
        envs = {name: environment(scratch / name) for name in codes}
        for name, env in envs.items():
            timed(codes[name], env, *base, "search", "policy")  # the build
        times: dict[str, dict[str, list[float]]] = {n: {c: [] for c in COMMANDS} for n in codes}
        for _ in range(args.runs):
            for name, env in envs.items():
                for label, command in COMMANDS.items():
                    times[name][label].append(timed(codes[name], env, *base, *command))
        plain = plain_whoosh(args.papers, scratch)
        print(f"{args.papers} papers; plain Whoosh's index {plain:.1f} MB")
        for name in codes:
            got = sizes(scratch / name / "ix")
            together = got["store.db"] + got["view"]
            print(
                f"  {name:6} store.db {got['store.db']:.1f} MB (records {got['records']:.1f} MB, "
                f"{got['bytes a record']:.0f} B a record), view {got['view']:.1f} MB: "
                f"{together / plain:.2f}x plain Whoosh"
            )
            for label, values in times[name].items():
                print(f"  {name:6} {label:15} {statistics.median(values):.3f} s (median)")


if __name__ == "__main__":
    main()
