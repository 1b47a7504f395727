"""Choose the hybrid fusion on Cranfield: tune on the odd-numbered queries, check on the even ones.

    python benchmarks/semantic_eval.py [--cranfield DIR]

The lexical side is bm25s (Snowball stemmer, English stop words, k1 1.5, b 0.75), the dense side
the shipped MiniLM int8 model over "title. abstract"; both contribute their top 100. Queries are
numbered 1..225 in file order (cranqrel's numbering). Grades map 1→4, 2→3, 3→2, 4→1, -1→0 and
nDCG@10 uses the gain 2^g - 1, as benchmarks/relevance.py does. A paired sign-flip test
(10,000 random flips) gives the p-value of each method's difference from bm25s.

Document vectors are cached in benchmarks/out/ (keyed by the model hash), so a rerun takes
seconds; the first one embeds 1,400 abstracts (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CRANFIELD = ROOT.parent / "shared" / "relevance" / "cranfield"
OUT = ROOT / "benchmarks" / "out"
K = 10
DEPTH = 100
GAIN = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}
WEIGHTS = [round(0.1 * i, 1) for i in range(1, 10)]
RRF_KS = (10, 30, 60)

Ranking = list[tuple[str, float]]


def read_smart(path: Path) -> list[dict[str, str]]:
    """Records of a SMART file: ``.I n`` opens one, ``.T``/``.A``/``.B``/``.W`` open fields."""
    records: list[dict[str, str]] = []
    field = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I"):
            records.append({"I": line[2:].strip()})
            field = ""
        elif re.fullmatch(r"\.[TABW]", line.strip()):
            field = line.strip()[1]
            records[-1][field] = ""
        elif field:
            records[-1][field] += " " + line.strip()
    return [{k: " ".join(v.split()) for k, v in r.items()} for r in records]


def load_cranfield(folder: Path) -> tuple[dict[str, str], list[str], dict[int, dict[str, int]]]:
    """Documents (id → "title. abstract"), queries in file order, judgments by query number."""
    docs = {
        r["I"]: f"{r.get('T', '')}. {r.get('W', '')}" for r in read_smart(folder / "cran.all.1400")
    }
    queries = [r.get("W", "") for r in read_smart(folder / "cran.qry")]
    qrels: dict[int, dict[str, int]] = {}
    for line in (folder / "cranqrel").read_text().split("\n"):
        parts = line.split()
        if len(parts) >= 3:
            qrels.setdefault(int(parts[0]), {})[parts[1]] = GAIN.get(int(parts[2]), 0)
    return docs, queries, qrels


def ndcg(ranked: list[str], grades: dict[str, int], k: int = K) -> float:
    gains = [grades.get(doc, 0) for doc in ranked[:k]]
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def clean_query(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def bm25s_rankings(docs: dict[str, str], queries: list[str]) -> list[Ranking]:
    import bm25s
    import Stemmer

    ids = list(docs)
    stemmer = Stemmer.Stemmer("english")
    corpus = bm25s.tokenize(
        list(docs.values()), stopwords="en", stemmer=stemmer, show_progress=False
    )
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index(corpus, show_progress=False)
    out = []
    for query in queries:
        tokens = bm25s.tokenize(
            [clean_query(query)], stopwords="en", stemmer=stemmer, show_progress=False
        )
        rows, scores = retriever.retrieve(tokens, k=DEPTH, show_progress=False)
        out.append([(ids[r], float(s)) for r, s in zip(rows[0], scores[0], strict=True) if s > 0])
    return out


def dense_rankings(docs: dict[str, str], queries: list[str]) -> list[Ranking]:
    from rlpapers.semantic import load_encoder
    from rlpapers.semantic.dense import top_k

    encoder = load_encoder()
    cache = OUT / f"cranfield-{encoder.model_hash[:12]}.npy"
    if cache.is_file():
        matrix = np.load(cache)
    else:
        matrix = encoder.embed(list(docs.values()))
        OUT.mkdir(parents=True, exist_ok=True)
        np.save(cache, matrix)
    ids = list(docs)
    query_vectors = encoder.embed(queries)
    return [[(ids[r], s) for r, s in top_k(matrix, q, DEPTH)] for q in query_vectors]


def fusions() -> dict[str, Callable[[Ranking, Ranking], Ranking]]:
    """The candidate fusions: min-max and RRF (k 10, 30, 60), dense weight 0.1 to 0.9."""
    from rlpapers.semantic import fusion

    out: dict[str, Callable[[Ranking, Ranking], Ranking]] = {}
    for w in WEIGHTS:
        out[f"minmax w={w}"] = lambda lex, den, w=w: fusion.minmax(lex, den, w)
        for k in RRF_KS:
            out[f"rrf{k} w={w}"] = lambda lex, den, w=w, k=k: fusion.rrf(lex, den, w, k)
    return out


def sign_flip_p(a: list[float], b: list[float], rounds: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference under random sign flips."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    observed = abs(sum(diffs))
    rng = random.Random(seed)
    hits = sum(
        abs(sum(d if rng.random() < 0.5 else -d for d in diffs)) >= observed - 1e-12
        for _ in range(rounds)
    )
    return (hits + 1) / (rounds + 1)


def scores(
    rank: Callable[[int], list[str]], qrels: dict[int, dict[str, int]], numbers: list[int]
) -> list[float]:
    return [ndcg(rank(n), qrels[n]) for n in numbers]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cranfield", type=Path, default=DEFAULT_CRANFIELD)
    args = parser.parse_args()

    docs, queries, qrels = load_cranfield(args.cranfield)
    lexical = bm25s_rankings(docs, queries)
    dense = dense_rankings(docs, queries)
    judged = [n for n in range(1, len(queries) + 1) if qrels.get(n)]
    odd = [n for n in judged if n % 2]
    even = [n for n in judged if not n % 2]

    def ids(ranking: Ranking) -> list[str]:
        return [doc for doc, _ in ranking]

    methods: dict[str, Callable[[int], list[str]]] = {
        "bm25s": lambda n: ids(lexical[n - 1]),
        "dense": lambda n: ids(dense[n - 1]),
    }
    for name, fuse in fusions().items():
        methods[name] = lambda n, fuse=fuse: ids(fuse(lexical[n - 1], dense[n - 1]))

    print(
        f"queries: {len(judged)} judged ({len(odd)} odd for tuning, {len(even)} even for checking)"
    )
    print(f"{'method':<18} {'odd':>7} {'even':>7} {'all':>7}")
    table = {
        name: {
            part: scores(rank, qrels, nums)
            for part, nums in (("odd", odd), ("even", even), ("all", judged))
        }
        for name, rank in methods.items()
    }
    for name, parts in table.items():
        print(f"{name:<18} " + " ".join(f"{mean(parts[p]):7.4f}" for p in ("odd", "even", "all")))
    fused = [name for name in table if name not in ("bm25s", "dense")]
    best = max(fused, key=lambda name: mean(table[name]["odd"]))
    base = table["bm25s"]
    print(f"\nchosen on the odd queries: {best}")
    for part in ("odd", "even", "all"):
        gain = mean(table[best][part]) - mean(base[part])
        p = sign_flip_p(table[best][part], base[part])
        print(
            f"  {part:<4} {mean(table[best][part]):.4f} vs bm25s {mean(base[part]):.4f}: {gain:+.4f} (p = {p:.4f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
