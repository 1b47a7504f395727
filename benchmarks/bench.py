"""rlpapers benchmarks: index build, refresh, search latency and start-up, beside bm25s.

    pip install -e '.[bench]'
    python benchmarks/bench.py                      # 10k, 75k and 150k records (tens of minutes)
    python benchmarks/bench.py --sizes 10000 --quick  # a quick look
    python benchmarks/bench.py --sizes 200 --smoke  # what the test suite runs

The arXiv records (../shared/corpora, 74,728 of them) are written in the seed layout, one file per
month: a header line, then per paper a category line, an author line and the abstract as arXiv
wraps it. 150k repeats the records with a marker appended to each abstract, so ids differ.
Everything is measured in one run, so compare ratios: absolute times drift on shared machines.
Each build is set beside plain Whoosh over the same abstracts, authors and categories
(benchmarks/plain_whoosh.py: rlpapers' analyzers, two processes, no stored field), the engine's
own cost. Results go to benchmarks/out/results.json, a table on stdout and benchmarks/out/scaling.png.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
NAN = float("nan")  # a figure this run did not measure
OUT = ROOT / "benchmarks" / "out"
CORPUS = ROOT.parent / "shared" / "corpora" / "arxiv-cs-2025-2026.jsonl.gz"
QUERIES = [
    "reinforcement learning", "policy optimization", "entropy regularization", "offline RL",
    "reward model", "diffusion policy", "large language models reasoning", "GRPO", "exploration",
    "multi-agent", "safe reinforcement learning", "preference optimization", "world model",
    "vision language action", "curriculum learning", "model-based RL", "imitation learning",
    "quantization", "speculative decoding", "retrieval augmented generation", "graph neural networks",
    "contrastive learning", "knowledge distillation", "test-time scaling", "chain of thought",
    "hallucination", "robot manipulation", "autonomous driving", "federated learning", "benchmark",
    "transformer attention", "mixture of experts", "low-rank adaptation", "Q-learning",
    "actor critic", "Monte Carlo tree search", "bandits regret", "inverse reinforcement learning",
    "human feedback", "tool use agents", "code generation", "mathematical reasoning",
    "image segmentation", "3D gaussian splatting", "video generation", "medical imaging",
    "time series forecasting", "adversarial robustness", "privacy", "energy efficiency",
]  # fmt: skip


# --- corpus preparation -------------------------------------------------------------------------


def load_records(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            records.append(json.loads(line))
            if limit and len(records) >= limit:
                break
    return records


def synthetic_records(n: int) -> list[dict[str, Any]]:
    """Stand-in records for the smoke test, where the arXiv file may be absent."""
    rng = random.Random(0)
    words = "policy reward agent entropy learning model offline online value gradient".split()
    return [
        {
            "date": f"2025-{1 + i % 12:02d}-01",
            "categories": ["cs.LG", "cs.AI"],
            "authors": [f"Ada Lovelace{i}", "Alan Turing"],
            "abstract": f"We propose Method{i}, a method. "
            + " ".join(rng.choice(words) for _ in range(80))
            + ".",
        }
        for i in range(n)
    ]


def write_corpus(records: list[dict[str, Any]], folder: Path, size: int) -> Path:
    """Write ``size`` records (repeating with a marker beyond the source) as monthly seed files."""
    if folder.is_dir() and (folder / ".complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    months: dict[str, list[str]] = defaultdict(list)
    for i in range(size):
        record = records[i % len(records)]
        copy = i // len(records)
        abstract = record["abstract"] + (f" [copy {copy + 1}]" if copy else "")
        wrapped = "\n".join(textwrap.wrap(" ".join(abstract.split()), 80))
        authors = ", ".join(record["authors"][:12]) + (
            ", et al." if len(record["authors"]) > 12 else ""
        )
        block = f"{' · '.join(record['categories'])}\n\n{authors}\n\n{wrapped}"
        months[f"{record['date'][:7]}-{copy}"].append(block)
    for month, blocks in sorted(months.items()):
        text = f"arXiv cs {month}\n\n" + "\n\n".join(blocks) + "\n"
        (folder / f"arxiv-{month}.txt").write_text(text, encoding="utf-8")
    (folder / ".complete").write_text("")
    return folder


# --- measuring ----------------------------------------------------------------------------------


class Peak:
    """Peak memory of a process and its children, sampled every 50 ms: the sum of their PSS
    (proportional set size, so pages that forked workers share are counted once), or of their
    RSS where PSS is not available."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.process, *self.process.children(recursive=True)]
                self.peak = max(self.peak, sum(_memory(p) for p in procs))
            except psutil.Error:
                pass
            time.sleep(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _memory(process: Any) -> int:
    try:
        return process.memory_full_info().pss
    except (AttributeError, NotImplementedError):
        return process.memory_info().rss
    except Exception:  # the process ended between listing and reading
        return 0


def timed_process(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> dict[str, float]:
    """Wall time, CPU time (user+sys of the children) and peak memory of one command."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak = Peak(proc.pid)
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    rss = peak.stop()
    after = os.times()
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} failed: {err.decode()[-2000:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {"wall_s": wall, "cpu_s": cpu, "peak_mb": rss / 2**20}


def env_without_bytecode_block() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' machines write bytecode
    env["NO_COLOR"] = "1"
    return env


def median_runtime(argv: list[str], runs: int, env: dict[str, str]) -> float:
    subprocess.run(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )  # warm caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rlpapers_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "rlpapers", *args]


def bench_rlpapers(
    corpus: Path, index: Path, runs: int, build_only: bool = False
) -> dict[str, Any]:
    env = env_without_bytecode_block()
    env["RLPAPERS_DATA_DIR"] = str(index.with_name(index.name + "-data"))  # a fresh ledger
    shutil.rmtree(index, ignore_errors=True)
    shutil.rmtree(env["RLPAPERS_DATA_DIR"], ignore_errors=True)
    result: dict[str, Any] = {}
    build = timed_process(
        rlpapers_cmd("--corpus", str(corpus), "--index-dir", str(index), "index"), env
    )
    result["build"] = build | {"index_mb": folder_size(index) / 2**20}
    if build_only:
        return result
    search = rlpapers_cmd(
        "--corpus", str(corpus), "--index-dir", str(index), "search", "policy", "-f", "ids"
    )
    result["refresh_nochange_s"] = timed_process(search, env)["wall_s"]
    result["refresh_one_file_s"] = _one_file_refresh(corpus, search, env)
    result["search_warm"] = _warm_latency(corpus, index)
    result["search_cold_s"] = median_runtime(search, runs, env)
    return result


def _one_file_refresh(corpus: Path, search: list[str], env: dict[str, str]) -> float:
    victim = sorted(corpus.glob("*.txt"))[len(list(corpus.glob("*.txt"))) // 2]
    original = victim.read_bytes()
    extra = b"\n\ncs.LG \xc2\xb7 cs.AI\n\nAda Lovelace, Alan Turing\n\nWe propose ZebraRL, a benchmark refresh probe.\n"
    try:
        victim.write_bytes(original + extra)
        return timed_process(search, env)["wall_s"]
    finally:
        victim.write_bytes(original)
        timed_process(search, env)  # back to the original state


def _warm_latency(corpus: Path, index: Path) -> dict[str, float]:
    from rlpapers import Library

    os.environ["RLPAPERS_DATA_DIR"] = str(index.with_name(index.name + "-data"))
    library = Library(corpus=[corpus], index_dir=index)
    library.search("warm up", limit=10)
    times = []
    for query in QUERIES:
        start = time.perf_counter()
        library.search(query, limit=10)
        times.append((time.perf_counter() - start) * 1000)
    return {"p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95)}


def bench_plain_whoosh(records: list[dict[str, Any]], size: int, out: Path) -> dict[str, float]:
    """Wall, CPU and peak memory of plain Whoosh indexing the same text (plain_whoosh.py)."""
    from plain_whoosh import write_documents

    docs = write_documents(records, size, out / f"whoosh-docs-{size}.jsonl")
    index = out / f"whoosh-{size}"
    shutil.rmtree(index, ignore_errors=True)
    script = ROOT / "benchmarks" / "plain_whoosh.py"
    build = timed_process([sys.executable, str(script), str(docs), str(index)])
    return build | {"index_mb": folder_size(index) / 2**20}


def bench_bm25s(corpus: Path) -> dict[str, Any]:
    """bm25s over the same abstracts, tokenised its default way (stop words, no stemmer)."""
    import bm25s

    from rlpapers.parse import parse_file
    from rlpapers.store.files import corpus_files

    texts = [p.abstract for f in corpus_files([corpus]) for p in parse_file(f)]
    start = time.perf_counter()
    cpu0 = time.process_time()
    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    build = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    times = []
    for query in QUERIES:
        t0 = time.perf_counter()
        q = bm25s.tokenize([query], stopwords="en", show_progress=False)
        retriever.retrieve(q, k=10, show_progress=False)
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "build_s": build,
        "build_cpu_s": cpu,
        "p50_ms": statistics.median(times),
        "p95_ms": percentile(times, 0.95),
    }


def bench_startup(runs: int, out: Path) -> dict[str, float]:
    env = env_without_bytecode_block()
    env["RLPAPERS_INDEX_DIR"] = str(out / "index-seeds")
    env["RLPAPERS_DATA_DIR"] = str(out / "data-seeds")
    env.pop("RLPAPERS_CORPUS", None)
    base = median_runtime([sys.executable, "-c", "pass"], runs, env)
    typer_import = median_runtime([sys.executable, "-c", "import typer"], runs, env)
    helped = median_runtime(rlpapers_cmd("--help"), runs, env)
    search = median_runtime(rlpapers_cmd("search", "entropy"), runs, env)
    listed = median_runtime(rlpapers_cmd("list", "--format", "ids"), runs, env)
    refs = out / "refs.txt"
    refs.write_text("qerl\nzhan_tecrl\npcl\n")
    exported = median_runtime(
        rlpapers_cmd("export", "--format", "bibtex", "--ids", str(refs)), runs, env
    )
    script = shutil.which("rlpapers")
    search_script = median_runtime([script, "search", "entropy"], runs, env) if script else search
    return {
        "import_typer_s": typer_import,
        "list_s": listed,
        "export_ids_s": exported,
        "list_vs_typer": listed / typer_import,
        "export_ids_vs_typer": exported / typer_import,
        "search_vs_typer": search / typer_import,
        "python_pass_s": base,
        "help_s": helped,
        "search_s": search,
        "search_script_s": search_script,
        "help_ratio": helped / base,
        "search_ratio": search / base,
        "search_script_ratio": search_script / base,
    }


# --- report -------------------------------------------------------------------------------------


def table(results: dict[str, Any]) -> str:
    lines = []
    s = results.get("startup", {})
    if s:
        lines.append(
            f"start-up (median of {results['runs']}): python -c pass {s['python_pass_s'] * 1000:.0f} ms; "
            f"--help {s['help_s'] * 1000:.0f} ms ({s['help_ratio']:.1f}x); "
            f"search on the seeds {s['search_s'] * 1000:.0f} ms ({s['search_ratio']:.1f}x; "
            f"console script {s['search_script_ratio']:.1f}x)"
        )
    if "import_typer_s" in s:
        lines.append(
            f"against python -c 'import typer' ({s['import_typer_s'] * 1000:.0f} ms): "
            f"list --format ids {s['list_vs_typer']:.2f}x, export --ids {s['export_ids_vs_typer']:.2f}x, "
            f"search {s['search_vs_typer']:.2f}x"
        )
    header = (
        "records",
        "build s",
        "cpu s",
        "peak MB",
        "index MB",
        "bm25s s",
        "build/bm25s",
        "whoosh s",
        "whoosh cpu s",
        "build/whoosh",
        "refresh 1 file s",
        "no-change s",
        "p50 ms",
        "p95 ms",
        "bm25s p50 ms",
        "cold search s",
    )
    lines.append(" | ".join(header))
    for size, row in sorted(results["sizes"].items(), key=lambda kv: int(kv[0])):
        r, b = row["rlpapers"], row["bm25s"]
        w = row.get("whoosh") or {"wall_s": NAN, "cpu_s": NAN}
        cells = (
            size,
            f"{r['build']['wall_s']:.1f}",
            f"{r['build']['cpu_s']:.1f}",
            f"{r['build']['peak_mb']:.0f}",
            f"{r['build']['index_mb']:.0f}",
            f"{b['build_s']:.1f}",
            f"{r['build']['wall_s'] / b['build_s']:.2f}",
            f"{w['wall_s']:.1f}",
            f"{w['cpu_s']:.1f}",
            f"{r['build']['wall_s'] / w['wall_s']:.2f}",
            f"{r.get('refresh_one_file_s', NAN):.2f}",
            f"{r.get('refresh_nochange_s', NAN):.2f}",
            f"{r.get('search_warm', {}).get('p50_ms', NAN):.1f}",
            f"{r.get('search_warm', {}).get('p95_ms', NAN):.1f}",
            f"{b['p50_ms']:.1f}",
            f"{r.get('search_cold_s', NAN):.2f}",
        )
        lines.append(" | ".join(str(c) for c in cells))
    return "\n".join(lines)


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(results["sizes"], key=int)
    xs = [int(s) for s in sizes]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(
        xs,
        [results["sizes"][s]["rlpapers"]["build"]["wall_s"] for s in sizes],
        "o-",
        label="rlpapers (Whoosh)",
    )
    left.plot(xs, [results["sizes"][s]["bm25s"]["build_s"] for s in sizes], "s--", label="bm25s")
    left.set(xlabel="records", ylabel="full index build, s", title="Build time")
    right.plot(
        xs,
        [results["sizes"][s]["rlpapers"]["search_warm"]["p50_ms"] for s in sizes],
        "o-",
        label="rlpapers p50",
    )
    right.plot(
        xs,
        [results["sizes"][s]["rlpapers"]["search_warm"]["p95_ms"] for s in sizes],
        "o:",
        label="rlpapers p95",
    )
    right.plot(
        xs, [results["sizes"][s]["bm25s"]["p50_ms"] for s in sizes], "s--", label="bm25s p50"
    )
    right.set(xlabel="records", ylabel="query latency, ms (warm)", title="Search latency")
    from matplotlib.ticker import FuncFormatter

    for axis in (left, right):
        axis.grid(alpha=0.3)
        axis.legend()
        axis.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 1000:.0f}k"))
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 75_000, 150_000])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--runs", type=int, default=15, help="runs per start-up and cold-search median"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--smoke", action="store_true", help="synthetic records, few runs, no plot")
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument(
        "--build-only", action="store_true", help="only the builds (rlpapers, plain Whoosh, bm25s)"
    )
    parser.add_argument("--replot", action="store_true", help="redraw the plot from results.json")
    args = parser.parse_args()
    if args.replot:
        results = json.loads((args.out / "results.json").read_text())
        print(table(results))
        plot(results, args.out / "scaling.png")
        return
    args.out.mkdir(parents=True, exist_ok=True)
    runs = 3 if args.smoke or args.quick else args.runs
    records = synthetic_records(max(args.sizes)) if args.smoke else load_records(args.corpus)
    results: dict[str, Any] = {"runs": runs, "machine": machine(), "sizes": {}}
    if not args.build_only:
        results["startup"] = bench_startup(runs, args.out)
    for size in args.sizes:
        corpus = write_corpus(records, args.out / f"corpus-{size}", size)
        print(f"measuring {size} records…", file=sys.stderr)
        results["sizes"][str(size)] = {
            "rlpapers": bench_rlpapers(corpus, args.out / f"index-{size}", runs, args.build_only),
            "bm25s": bench_bm25s(corpus),
            "whoosh": bench_plain_whoosh(records, size, args.out),
        }
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    print(table(results))
    if not (args.smoke or args.build_only):
        plot(results, args.out / "scaling.png")


def machine() -> dict[str, Any]:
    import platform

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


if __name__ == "__main__":
    main()
