"""What semantic search costs: embedding speed, the extra time of a fresh hybrid search,
memory, store growth and dense top-100 latency at 75k papers.

    pip install -e '.[bench,semantic]'
    python benchmarks/semantic_bench.py [--sample 200] [--size 75000]

- Embedding speed is measured on the bundled corpus and on ``--sample`` arXiv abstracts, in one
  process with the model loaded; 10k and 75k are extrapolated from the sample rate (the model's
  cost per paper does not depend on corpus size).
- The 75k figures (memory, store growth, dense top-100) use a store of the real 75k arXiv
  records whose embeddings table is filled with random unit vectors of the model's shape,
  stored with the current model's tag and text digests: vector values do not change these costs,
  and embedding 75k abstracts on 2 cores takes hours.
- A fresh search is a new ``rlpapers`` process on a warm store (index built, vectors stored);
  hybrid minus lexical is what turning hybrid on costs per command.

Uses benchmarks/bench.py's corpus writer and process measurements; results go to stdout and
benchmarks/out/semantic.json. Shared machines drift: compare the numbers of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import (  # noqa: E402
    CORPUS,
    OUT,
    env_without_bytecode_block,
    load_records,
    rlpapers_cmd,
    synthetic_records,
    timed_process,
    write_corpus,
)

SEEDS = ROOT / "seeds"
RUNS = 5


def embedding_rate(papers: list[Any]) -> dict[str, float]:
    """Papers per second (wall and CPU) of the encoder on these papers' title and abstract."""
    from rlpapers.semantic import load_encoder
    from rlpapers.semantic.vectors import paper_text

    encoder = load_encoder()
    texts = [paper_text(p) for p in papers]
    encoder.embed(texts[:2])  # warm
    wall, cpu = time.perf_counter(), time.process_time()
    encoder.embed(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "papers": len(texts),
        "wall_s": wall,
        "estimate_s": encoder.seconds(len(texts)),  # what a search says before a long job
        "estimate_vs_real": encoder.seconds(len(texts)) / wall,
        "per_s": len(texts) / wall,
        "cpu_per_s": len(texts) / cpu,
    }


def fresh_search_overhead(index: Path) -> dict[str, float]:
    """Median wall time of a new process searching the bundled corpus, lexical vs hybrid."""
    from rlpapers import Library

    env = env_without_bytecode_block()
    env["RLPAPERS_DATA_DIR"] = str(index / "data")
    os.environ["RLPAPERS_DATA_DIR"] = env["RLPAPERS_DATA_DIR"]
    Library([SEEDS], index).embed()
    out: dict[str, float] = {}
    for mode in ("lexical", "hybrid", "semantic"):
        argv = rlpapers_cmd(
            "--corpus",
            str(SEEDS),
            "--index-dir",
            str(index),
            "search",
            "--mode",
            mode,
            "policy",
            "optimization",
            "-f",
            "ids",
        )
        timed_process(argv, env)  # warm
        runs = [timed_process(argv, env) for _ in range(RUNS)]
        out[f"{mode}_s"] = statistics.median(r["wall_s"] for r in runs)
        out[f"{mode}_cpu_s"] = statistics.median(r["cpu_s"] for r in runs)
        out[f"{mode}_peak_mb"] = statistics.median(r["peak_mb"] for r in runs)
    out["hybrid_extra_s"] = out["hybrid_s"] - out["lexical_s"]
    out["hybrid_extra_cpu_s"] = out["hybrid_cpu_s"] - out["lexical_cpu_s"]
    return out


def fill_random_vectors(library: Any) -> None:
    """Store a random unit vector for every paper, tagged as the current model's, so searches
    find nothing to embed."""
    from rlpapers.semantic.encoder import DIMENSIONS
    from rlpapers.semantic.vectors import STORED, Vectors, embedded_text, text_digest

    vectors = Vectors(library.store)
    table = library.store.embeddings
    rng = np.random.default_rng(0)
    rows = []
    for pid, title, abstract in table.texts():
        v = rng.standard_normal(DIMENSIONS).astype(np.float32)
        v /= np.linalg.norm(v)
        rows.append((pid, text_digest(embedded_text(title, abstract)), v.astype(STORED).tobytes()))
        if len(rows) == 5000:
            table.put(vectors.model, rows)
            rows = []
    if rows:
        table.put(vectors.model, rows)


def at_scale(size: int, sample: int, reuse: bool) -> dict[str, Any]:
    from rlpapers import Library
    from rlpapers.semantic.vectors import Vectors

    records = load_records(CORPUS) if CORPUS.is_file() else synthetic_records(size)
    corpus = write_corpus(records, OUT / f"corpus-{size}", size)
    index = OUT / f"semantic-{size}"
    if not reuse:
        shutil.rmtree(index, ignore_errors=True)
    env = env_without_bytecode_block()
    env["RLPAPERS_DATA_DIR"] = str(index / "data")
    os.environ["RLPAPERS_DATA_DIR"] = env["RLPAPERS_DATA_DIR"]
    library = Library([corpus], index)
    if not reuse:
        library.index.rebuild()
    library.store.embeddings.con.execute("DELETE FROM embeddings")
    library.store.con.execute("VACUUM")
    store_db = library.store.root / "store.db"
    library.store.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = store_db.stat().st_size
    fill_random_vectors(library)
    library.store.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    growth = (store_db.stat().st_size - before) / size
    rate = embedding_rate(list(library.papers[:sample]))

    fresh = Vectors(library.store)
    start = time.perf_counter()
    matrix = fresh.matrix
    load_s = time.perf_counter() - start
    queries = (
        np.random.default_rng(1).standard_normal((50, matrix.vectors.shape[1])).astype(np.float32)
    )
    fresh.rank(queries[0], 100)
    times = []
    for q in queries:
        start = time.perf_counter()
        fresh.rank(q, 100)
        times.append((time.perf_counter() - start) * 1000)

    memory = {}
    for mode in ("lexical", "hybrid"):
        argv = rlpapers_cmd(
            "--corpus",
            str(corpus),
            "--index-dir",
            str(index),
            "search",
            "--mode",
            mode,
            "policy",
            "-f",
            "ids",
        )
        timed_process(argv, env)
        memory[mode] = timed_process(argv, env)
    return {
        "papers": size,
        "store_bytes_per_paper": growth,
        "embedding_sample": rate,
        "embed_10k_min": 10_000 / rate["per_s"] / 60,
        "embed_75k_min": 75_000 / rate["per_s"] / 60,
        "matrix_load_s": load_s,
        "dense_top100_ms_p50": statistics.median(times),
        "dense_top100_ms_max": max(times),
        "lexical_peak_mb": memory["lexical"]["peak_mb"],
        "hybrid_peak_mb": memory["hybrid"]["peak_mb"],
        "hybrid_extra_mb": memory["hybrid"]["peak_mb"] - memory["lexical"]["peak_mb"],
        "lexical_fresh_s": memory["lexical"]["wall_s"],
        "hybrid_fresh_s": memory["hybrid"]["wall_s"],
        "lexical_fresh_cpu_s": memory["lexical"]["cpu_s"],
        "hybrid_fresh_cpu_s": memory["hybrid"]["cpu_s"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=200, help="abstracts to time the model on")
    parser.add_argument("--size", type=int, default=75_000, help="papers in the scale test")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the scale test's records and index from a past run",
    )
    args = parser.parse_args()
    from rlpapers import load_corpus

    OUT.mkdir(parents=True, exist_ok=True)
    bundled = embedding_rate(load_corpus([SEEDS]).papers)
    fresh = fresh_search_overhead(OUT / "semantic-seeds")
    scale = at_scale(args.size, args.sample, args.reuse)
    results = {"bundled_embedding": bundled, "fresh_search_bundled": fresh, "scale": scale}
    (OUT / "semantic.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
