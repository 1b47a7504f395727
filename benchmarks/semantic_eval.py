"""Choose the hybrid fusion on Cranfield (tune on odd queries, check on even), then measure
rlpapers' own search modes next to bm25s on both judged sets.

    python benchmarks/semantic_eval.py [--cranfield DIR]          # choose the fusion
    python benchmarks/semantic_eval.py --modes [--cranfield DIR]  # nDCG@10 of the modes

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
import os
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from relevance import ndcg  # one definition of the measure, beside this script

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
        rows, scores = retriever.retrieve(tokens, k=min(DEPTH, len(ids)), show_progress=False)
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


def seeds_texts() -> dict[str, str]:
    from rlpapers import load_corpus

    return {p.id: f"{p.title}. {p.abstract}" for p in load_corpus([ROOT / "seeds"]).papers}


def write_cranfield_corpus(docs: dict[str, str], folder: Path) -> dict[str, str]:
    """Cranfield in the seed layout (one abstract block per document, "title. abstract");
    returns abstract text -> document number, to map rlpapers' ids back."""
    folder.mkdir(parents=True, exist_ok=True)
    blocks = [" ".join(text.split()) for text in docs.values()]
    (folder / "cranfield.txt").write_text("Cranfield\n\n" + "\n\n".join(blocks) + "\n")
    by_text: dict[str, str] = {}
    for number, text in zip(docs, blocks, strict=True):
        by_text.setdefault(text, number)
    return by_text


def mode_rankings(
    library: object, queries: list[str], mode: str, to_doc: Callable[[object], str]
) -> list[list[str]]:
    return [
        [to_doc(h.paper) for h in library.search(q, limit=K, mode=mode)]  # type: ignore[attr-defined]
        for q in queries
    ]


def retune(
    library: Any, queries: list[str], qrels: dict[int, dict[str, int]], by_text: dict[str, str]
) -> None:
    """The fusion grid again, with rlpapers' own lexical top 100 and dense top 100: chosen on
    the odd-numbered queries, reported on the even ones."""
    to_doc = lambda pid, papers: by_text.get(" ".join(papers[pid].abstract.split()), "")  # noqa: E731
    vectors = library.vectors
    lexical, dense = [], []
    for query in queries:
        pairs, _ = library.index.matches(query, DEPTH, None)
        lexical.append([(by_text.get(" ".join(p.abstract.split()), ""), s) for p, s in pairs])
        ranked = vectors.rank(vectors.query(query), DEPTH)
        papers = library.store.fetch(pid for pid, _ in ranked)
        dense.append([(to_doc(pid, papers), s) for pid, s in ranked])
    judged = [n for n in range(1, len(queries) + 1) if qrels.get(n)]
    odd = [n for n in judged if n % 2]
    even = [n for n in judged if not n % 2]
    table = {}
    for name, fuse in fusions().items():
        ranked = [[d for d, _ in fuse(lexical[i], dense[i])] for i in range(len(queries))]
        table[name] = (
            mean([ndcg(ranked[n - 1], qrels[n]) for n in odd]),
            mean([ndcg(ranked[n - 1], qrels[n]) for n in even]),
        )
    best = sorted(table, key=lambda name: -table[name][0])[:5]
    print("rlpapers lexical + dense, best five on the odd queries (odd, even):", file=sys.stderr)
    for name in best:
        print(f"  {name:<14} {table[name][0]:.4f} {table[name][1]:.4f}", file=sys.stderr)


def modes_report(cranfield: Path) -> None:
    """nDCG@10 of bm25s and rlpapers' lexical, hybrid and semantic modes on both judged sets."""
    from rlpapers import Library

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from judged import load_judgments

    modes = ("lexical", "hybrid", "semantic")
    rows: dict[str, dict[str, float]] = {}
    # kept between runs: the stores keep their vectors, so a rerun embeds nothing
    tmp = str(OUT / "modes")
    os.environ["RLPAPERS_DATA_DIR"] = str(OUT / "modes" / "data")  # not the user's ledger
    # the 40 bundled papers, tests/relevance.yaml
    judgments = load_judgments()
    texts = seeds_texts()
    queries = list(judgments)
    lexical = bm25s_rankings(texts, queries)
    rows["bm25s"] = {
        "bundled": mean(
            [ndcg([d for d, _ in r], judgments[q]) for r, q in zip(lexical, queries, strict=True)]
        )
    }
    library = Library([ROOT / "seeds"], Path(tmp) / "seeds-index")
    library.embed()
    for mode in modes:
        ranked = mode_rankings(library, queries, mode, lambda p: p.id)  # type: ignore[attr-defined]
        rows[f"rlpapers {mode}"] = {
            "bundled": mean([ndcg(r, judgments[q]) for r, q in zip(ranked, queries, strict=True)])
        }

    # Cranfield: all queries, and the even-numbered ones (not used to choose the fusion)
    docs, cqueries, qrels = load_cranfield(cranfield)
    by_text = write_cranfield_corpus(docs, Path(tmp) / "cranfield")
    library = Library([Path(tmp) / "cranfield"], Path(tmp) / "cranfield-index")
    start = time.perf_counter()
    library.embed()
    print(
        f"embedded Cranfield ({len(docs)} documents) in {time.perf_counter() - start:.0f} s",
        file=sys.stderr,
    )
    judged = [n for n in range(1, len(cqueries) + 1) if qrels.get(n)]
    even = [n for n in judged if not n % 2]
    clean = [clean_query(q) for q in cqueries]
    base = bm25s_rankings(docs, cqueries)
    per_method: dict[str, list[list[str]]] = {"bm25s": [[d for d, _ in r] for r in base]}
    for mode in modes:
        per_method[f"rlpapers {mode}"] = mode_rankings(
            library,
            clean,
            mode,
            lambda p: by_text.get(" ".join(p.abstract.split()), ""),  # type: ignore[attr-defined]
        )
    retune(library, clean, qrels, by_text)
    for name, rankings in per_method.items():
        scores_all = [ndcg(rankings[n - 1], qrels[n]) for n in judged]
        scores_even = [ndcg(rankings[n - 1], qrels[n]) for n in even]
        rows[name]["cranfield all"] = mean(scores_all)
        rows[name]["cranfield even"] = mean(scores_even)
        rows[name]["_even"] = scores_even  # type: ignore[assignment]
    print(
        "| method | 40 bundled papers | Cranfield (225) | Cranfield even (112) | p vs bm25s (even) |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, row in rows.items():
        p = "" if name == "bm25s" else f"{sign_flip_p(row['_even'], rows['bm25s']['_even']):.4f}"  # type: ignore[arg-type]
        print(
            f"| {name} | {row['bundled']:.3f} | {row['cranfield all']:.3f} | {row['cranfield even']:.3f} | {p} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cranfield", type=Path, default=DEFAULT_CRANFIELD)
    parser.add_argument("--modes", action="store_true", help="measure rlpapers' search modes")
    args = parser.parse_args()
    if args.modes:
        modes_report(args.cranfield)
        return 0

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
