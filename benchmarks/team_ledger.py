"""The identity ledger on a PostgreSQL server against the data folder's SQLite ledger.

    pip install -e '.[test,bench]'
    python benchmarks/team_ledger.py                    # 10k first build, 8 members on 10k
    python benchmarks/team_ledger.py --sizes 10000 75000 --members 8
    python benchmarks/team_ledger.py --sizes 0 --members 8    # only the members

1. A first build (``rlpapers keys`` on a fresh data and index folder: hash, parse, give ids and
   keys, write the records) of each size, with the SQLite ledger and with the ledger on the
   server, alternating in one run (``--rounds`` each, the median reported).
2. ``--members`` processes at once, each with its own data and index folder and a corpus of
   60% of the 10k corpus's monthly files (chosen with a fixed seed, so they overlap), against
   one server ledger, and the same members each with their own SQLite ledger (``--rounds``
   each, the engines alternating). Checked: every
   member ends with the server's id -> key map, no key is given twice, no paper is lost.

A throwaway server is started in a temporary folder with ``.ci/pg-server`` (fsync on, as a
lab's server would run), unless ``--server URL`` names one whose role may make databases. The
records are the arXiv records ``benchmarks/bench.py`` uses, in the same seed layout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import CORPUS, OUT, ROOT, load_records, write_corpus


def database(server: str) -> str:
    """A new database on the server; its URL."""
    import psycopg

    name = f"bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(server)._replace(path=f"/{name}"))


def start(member: Path, corpus: list[Path], ledger: str | None) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "RLPAPERS_DATA_DIR": str(member / "data"),
        "RLPAPERS_INDEX_DIR": str(member / "index"),
        "RLPAPERS_CONFIG": str(member / "none.yaml"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.pop("RLPAPERS_LEDGER", None)
    if ledger:
        env["RLPAPERS_LEDGER"] = ledger
    member.mkdir(parents=True, exist_ok=True)
    (member / "none.yaml").write_text("", encoding="utf-8")
    argv = [sys.executable, "-m", "rlpapers"]
    for path in corpus:
        argv += ["--corpus", str(path)]
    return subprocess.Popen(
        [*argv, "keys"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(process: subprocess.Popen[str]) -> dict[str, str]:
    out, err = process.communicate()
    if process.returncode:
        raise SystemExit(f"rlpapers exited {process.returncode}: {err}")
    return {line.split("\t")[0]: line.split("\t")[1] for line in out.splitlines()}


def first_build(corpus: Path, work: Path, ledger: str | None) -> float:
    folder = work / f"build-{uuid.uuid4().hex[:8]}"
    began = time.perf_counter()
    finish(start(folder, [corpus], ledger))
    seconds = time.perf_counter() - began
    shutil.rmtree(folder)
    return seconds


def builds(corpus: Path, work: Path, server: str, rounds: int) -> dict[str, Any]:
    times: dict[str, list[float]] = {"sqlite": [], "postgresql": []}
    for n in range(rounds):
        order = ["sqlite", "postgresql"] if n % 2 == 0 else ["postgresql", "sqlite"]
        for engine in order:
            ledger = database(server) if engine == "postgresql" else None
            times[engine].append(first_build(corpus, work, ledger))
            print(f"  {engine}: {times[engine][-1]:.1f} s", file=sys.stderr)
    medians = {engine: statistics.median(found) for engine, found in times.items()}
    return {"seconds": times, "median": medians, "ratio": medians["postgresql"] / medians["sqlite"]}


def members(corpus: Path, work: Path, server: str, count: int, rounds: int) -> dict[str, Any]:
    """``count`` members at once, ``rounds`` times per engine, the engines alternating."""
    out: dict[str, Any] = {"rounds": []}
    for n in range(rounds):
        order = ("postgresql", "sqlite") if n % 2 == 0 else ("sqlite", "postgresql")
        out["rounds"].append(members_once(corpus, work, server, count, order))
    for engine in ("postgresql", "sqlite"):
        walls = [found[engine]["wall_s"] for found in out["rounds"]]
        out[f"{engine}_median_wall_s"] = statistics.median(walls)
    return out


def members_once(
    corpus: Path, work: Path, server: str, count: int, order: tuple[str, ...]
) -> dict[str, Any]:
    files = sorted(corpus.glob("*.txt"))
    rng = random.Random(31)
    chosen = [sorted(rng.sample(files, max(1, round(len(files) * 0.6)))) for _ in range(count)]
    out: dict[str, Any] = {"files": len(files), "per_member_files": len(chosen[0])}
    for engine in order:
        ledger = database(server) if engine == "postgresql" else None
        folder = work / f"members-{engine}"
        began = time.perf_counter()
        processes = [start(folder / f"m{n}", chosen[n], ledger) for n in range(count)]
        maps = [finish(process) for process in processes]
        seconds = time.perf_counter() - began
        papers: dict[str, set[str]] = {}
        for found in maps:
            for pid, key in found.items():
                papers.setdefault(pid, set()).add(key)
        keys = [key for found in papers.values() for key in found]
        out[engine] = {
            "wall_s": round(seconds, 1),
            "papers": len(papers),
            "papers_per_member": statistics.median(len(found) for found in maps),
            "ids_with_one_key": sum(len(found) == 1 for found in papers.values()),
            "keys_given_twice": len(keys) - len({key.lower() for key in keys}),
        }
        if ledger:
            import psycopg

            with psycopg.connect(ledger) as con:
                (served,) = con.execute("SELECT count(*) FROM rlpapers.papers").fetchone() or (0,)
            out[engine]["server_papers"] = served
        shutil.rmtree(folder)
        print(f"  {count} members, {engine}: {out[engine]}", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--server", help="a PostgreSQL URL whose role may make databases")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    records = load_records(args.corpus)
    work = Path(tempfile.mkdtemp(prefix="rlpapers-team-"))
    server_dir = Path(tempfile.mkdtemp(prefix="rlpg-"))
    server_dir.chmod(0o755)
    server = args.server
    try:
        if not server:
            script = ROOT / ".ci" / "pg-server"
            found = subprocess.run(
                ["bash", str(script), "start", str(server_dir)], capture_output=True, text=True
            )
            if found.returncode:
                raise SystemExit(f"no server could be started: {found.stderr}")
            server = found.stdout.strip()
        results: dict[str, Any] = {"builds": {}}
        for size in [s for s in args.sizes if s]:
            corpus = write_corpus(records, args.out / f"corpus-{size}", size)
            print(f"first build, {size} records…", file=sys.stderr)
            results["builds"][str(size)] = builds(corpus, work, server, args.rounds)
        if args.members:
            corpus = write_corpus(records, args.out / "corpus-10000", 10_000)
            print(f"{args.members} members on 10000 records…", file=sys.stderr)
            results["members"] = members(corpus, work, server, args.members, args.rounds)
    finally:
        if not args.server:
            subprocess.run(["bash", str(ROOT / ".ci" / "pg-server"), "stop", str(server_dir)])
        shutil.rmtree(server_dir, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "team_ledger.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
