"""Start-up time of ordinary runs, this checkout against another (interleaved, so that a busy
machine slows both alike): ``python -c pass``, ``rlpapers --help`` and ``rlpapers search entropy``
on the bundled corpus, bytecode written as on a user's machine (PYTHONDONTWRITEBYTECODE unset).

    python benchmarks/startup.py [--before DIR] [--runs 21]

DIR is another checkout of rlpapers (``git worktree add DIR <commit>``); each side runs as
``python -m rlpapers`` from its own folder, so each imports its own code.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"python -c pass": None, "--help": ["--help"], "search entropy": ["search", "entropy"]}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    sides = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("RLPAPERS_CORPUS", None)
    env["NO_COLOR"] = "1"
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for side, cwd in sides.items():
            env_side = {**env, "RLPAPERS_INDEX_DIR": str(Path(tmp) / side)}
            for cmd in COMMANDS.values():  # warm: bytecode, index
                argv = (
                    [sys.executable, "-c", "pass"]
                    if cmd is None
                    else [sys.executable, "-m", "rlpapers", *cmd]
                )
                timed(argv, cwd, env_side)
        for _ in range(args.runs):
            for side, cwd in sides.items():
                env_side = {**env, "RLPAPERS_INDEX_DIR": str(Path(tmp) / side)}
                for name, cmd in COMMANDS.items():
                    argv = (
                        [sys.executable, "-c", "pass"]
                        if cmd is None
                        else [sys.executable, "-m", "rlpapers", *cmd]
                    )
                    times.setdefault((side, name), []).append(timed(argv, cwd, env_side))
    for side in sides:
        base = statistics.median(times[(side, "python -c pass")])
        parts = []
        for name in COMMANDS:
            value = statistics.median(times[(side, name)])
            parts.append(f"{name} {value * 1000:.1f} ms ({value / base:.1f}x)")
        print(f"{side}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
