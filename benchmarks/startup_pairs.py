"""Start-up of installed rlpapers against ``python -c "import typer"`` (and, optionally, against
another install), as the start-up targets in docs/performance.md are stated: whole processes,
run in turns A B A B, the median of the paired wall-time ratios (pairing keeps a ratio fair when
a shared machine's speed drifts), bytecode written as on a user's machine.

    python3 -m venv /tmp/v-new && /tmp/v-new/bin/pip install .         # not editable
    python3 -m venv /tmp/v-old && /tmp/v-old/bin/pip install OTHER_CHECKOUT
    python benchmarks/startup_pairs.py /tmp/v-new [--against /tmp/v-old] [--runs 30]

Each install gets its own data and index folders (a first run of each command warms them), on
the bundled corpus. Commands: ``search entropy``, ``list -f ids``, ``show qerl`` and
``export -f bibtex --ids FILE`` (three ids).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

COMMANDS = {
    "search entropy": ["search", "entropy"],
    "list -f ids": ["list", "-f", "ids"],
    "show qerl": ["show", "qerl"],
    "export --ids": ["export", "-f", "bibtex", "--ids", "{ids}"],
}


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def paired(
    a: list[str], b: list[str], env_a: dict[str, str], env_b: dict[str, str], runs: int
) -> tuple[float, float, float]:
    """(median A, median B, median of the A/B ratios) over ``runs`` pairs, after one of each."""
    timed(a, env_a)
    timed(b, env_b)
    pairs = [(timed(a, env_a), timed(b, env_b)) for _ in range(runs)]
    return (
        statistics.median(x for x, _ in pairs),
        statistics.median(y for _, y in pairs),
        statistics.median(x / y for x, y in pairs),
    )


def folders(tmp: Path, side: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for name in ("RLPAPERS_CORPUS", "RLPAPERS_CONFIG"):
        env.pop(name, None)
    env["NO_COLOR"] = "1"
    env["RLPAPERS_DATA_DIR"] = str(tmp / side / "data")
    env["RLPAPERS_INDEX_DIR"] = str(tmp / side / "index")
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("venv", type=Path, help="a virtual environment rlpapers is installed in")
    parser.add_argument("--against", type=Path, help="another one, to pair with")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = folders(tmp, "a")
        ids = tmp / "ids.txt"
        listed = subprocess.run(
            [str(args.venv / "bin" / "rlpapers"), "list", "-f", "ids"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        ids.write_text("\n".join(listed.stdout.split()[:3]) + "\n", encoding="utf-8")
        typer = [str(args.venv / "bin" / "python"), "-c", "import typer"]
        for label, command in COMMANDS.items():
            argv = [arg.format(ids=ids) for arg in command]
            mine = [str(args.venv / "bin" / "rlpapers"), *argv]
            a, b, ratio = paired(mine, typer, env, env, args.runs)
            line = f"{label}: {a * 1000:.1f} ms, import typer {b * 1000:.1f} ms: {ratio:.2f}x"
            if args.against:
                other = [str(args.against / "bin" / "rlpapers"), *argv]
                _, c, against = paired(mine, other, env, folders(tmp, "b"), args.runs)
                line += f"; {args.against.name} {c * 1000:.1f} ms: {against:.2f}x"
            print(line, flush=True)


if __name__ == "__main__":
    main()
