"""Choose the hybrid fusion on the tuning halves of Cranfield and CISI, then measure rlpapers'
own search modes next to bm25s.

    python benchmarks/semantic_eval.py            # the fusion grid, tuning halves only
    python benchmarks/semantic_eval.py --report   # + evaluation halves, all queries, p-values
    python benchmarks/semantic_eval.py --modes --report  # rlpapers' modes as a user runs them

The collections, their halves and their text come from ``judged.py``, as in ``relevance.py``:
each paper is "title. abstract" in the seed layout with its real title as metadata, queries
lower-cased without punctuation. The lexical side is rlpapers' own ranking (its top 100), the
dense side the shipped MiniLM int8 model over the stored papers (top 100); bm25s 0.3.16 runs on
the text rlpapers indexed. The fusion is chosen on the odd-numbered queries of both collections
pooled; ``--report`` shows the even-numbered ones, all queries and a paired sign-flip test
(10,000 flips) against bm25s, to report a choice already made.

Stores and vectors are kept in benchmarks/out/semantic-eval (a rerun embeds nothing); the
first run embeds 2,857 papers (several minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import judged
from judged import Judged, in_half
from relevance import (
    DEPTH,
    bm25s_search,
    indexed_texts,
    mean,
    ndcg,
    sign_flip_p,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out" / "semantic-eval"
WEIGHTS = [round(0.1 * i, 1) for i in range(1, 10)]
RRF_KS = (10, 30, 60)
PUBLIC = ("cranfield", "cisi")

Ranking = list[tuple[str, float]]
Fuse = Callable[[Ranking, Ranking], Ranking]


def fusions() -> dict[str, Fuse]:
    """The candidates: min-max, z-score and RRF (k 10, 30, 60), dense weight 0.1 to 0.9."""
    from rlpapers.semantic import fusion

    out: dict[str, Fuse] = {}
    for w in WEIGHTS:
        out[f"minmax w={w}"] = lambda lex, den, w=w: fusion.minmax(lex, den, w)
        out[f"zscore w={w}"] = lambda lex, den, w=w: zscore(lex, den, w)
        for k in RRF_KS:
            out[f"rrf{k} w={w}"] = lambda lex, den, w=w, k=k: fusion.rrf(lex, den, w, k)
    return out


def zscore(lexical: Ranking, dense: Ranking, weight: float) -> Ranking:
    """Z-score fusion (CombSUM of standardised scores, Montague and Aslam), a candidate the
    grid did not choose: each side's scores as z-scores over its own list, a document missing
    from one list given that list's lowest, ``weight`` the dense side's share."""
    from rlpapers.semantic import fusion

    def standardise(ranked: Ranking) -> dict[str, float]:
        scores = [s for _, s in ranked]
        centre = sum(scores) / len(scores) if scores else 0.0
        spread = (sum((s - centre) ** 2 for s in scores) / len(scores)) ** 0.5 if scores else 0.0
        return {doc: (s - centre) / spread if spread > 0 else 0.0 for doc, s in ranked}

    lex, den = standardise(lexical), standardise(dense)
    lex_low, den_low = min(lex.values(), default=0.0), min(den.values(), default=0.0)
    fused = {
        doc: weight * den.get(doc, den_low) + (1 - weight) * lex.get(doc, lex_low)
        for doc in {**lex, **den}
    }
    return fusion._ordered(fused, lexical, dense)


def library_of(collection: Judged) -> Any:
    """rlpapers over ``collection`` (written in the seed layout), its papers embedded."""
    from rlpapers import Library

    os.environ["RLPAPERS_DATA_DIR"] = str(OUT / "data")  # not the user's ledger
    judged.write_seed_layout(collection, OUT / collection.name)
    library = Library([OUT / collection.name], OUT / f"{collection.name}-index")
    library.embed()
    return library


def sides(collection: Judged, library: Any) -> dict[int, tuple[Ranking, Ranking, list[str]]]:
    """Query number -> (rlpapers' lexical top 100, the dense top 100, bm25s' top 100), as
    document ids."""
    to_doc = collection.to_doc
    with_texts = bm25s_search(collection, Path(), indexed_texts(collection, library))
    from rlpapers.request import SearchRequest

    vectors = library.vectors
    out = {}
    for number, text in collection.judged("all"):
        pairs, _ = library.index.matches(SearchRequest(text, DEPTH))
        lexical = [(to_doc[p.id], s) for p, s in pairs]
        dense = [(to_doc[pid], s) for pid, s in vectors.rank(vectors.query(text), DEPTH)]
        out[number] = (lexical, dense, with_texts(text))
    return out


def scored(collection: Judged, ranked: dict[int, list[str]]) -> dict[int, float]:
    return {n: ndcg(ids, collection.qrels[n]) for n, ids in ranked.items()}


def choose(everything: dict[str, tuple[Judged, dict[int, Any]]], report: bool) -> None:
    """The fusion grid on the pooled odd queries; the chosen one, and with ``report`` its
    figures on every half."""
    methods: dict[str, Callable[[Any], list[str]]] = {
        "bm25s": lambda s: s[2],
        "rlpapers lexical": lambda s: [d for d, _ in s[0]],
        "dense": lambda s: [d for d, _ in s[1]],
    }
    for name, fuse in fusions().items():
        methods[name] = lambda s, fuse=fuse: [d for d, _ in fuse(s[0], s[1])]
    table: dict[str, dict[str, list[float]]] = {}
    for name, method in methods.items():
        table[name] = {}
        for cname, (collection, per_query) in everything.items():
            found = scored(collection, {n: method(s) for n, s in per_query.items()})
            for half in ("odd", "even", "all"):
                keep = [v for n, v in sorted(found.items()) if in_half(n, half)]
                table[name][f"{cname} {half}"] = keep
                table[name].setdefault(f"pooled {half}", []).extend(keep)
    fused = [name for name in table if name not in ("bm25s", "rlpapers lexical", "dense")]
    best = sorted(fused, key=lambda name: -mean(table[name]["pooled odd"]))
    columns = [f"{c} odd" for c in everything] + ["pooled odd"]
    if report:
        columns += [f"{c} {h}" for h in ("even", "all") for c in everything]
        columns += ["pooled even", "pooled all"]
    print("| method | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for name in ["bm25s", "rlpapers lexical", "dense", *best[:8]]:
        cells = " | ".join(f"{mean(table[name][c]):.4f}" for c in columns)
        print(f"| {name} | {cells} |")
    chosen = best[0]
    print(f"\nchosen on the pooled odd queries: {chosen}")
    for half in ("odd", "even", "all") if report else ("odd",):
        for part in [*everything, "pooled"]:
            ours, base = table[chosen][f"{part} {half}"], table["bm25s"][f"{part} {half}"]
            p = sign_flip_p(ours, base)
            print(
                f"  {part} {half}: {mean(ours):.4f} vs bm25s {mean(base):.4f}, "
                f"{mean(ours) - mean(base):+.4f} (p = {p:.4f}, {len(ours)} queries)"
            )


def _ranked(library: Any, collection: Judged, query: str, mode: str) -> list[str]:
    """rlpapers' top 10 for ``query`` in ``mode``, as document ids; none for a query it
    refuses (an older version refused queries over 1,000 characters)."""
    from rlpapers import QueryError

    try:
        hits = library.search(query, 10, mode=mode)
    except QueryError:
        print(f"rlpapers refused a query ({mode})", file=sys.stderr)
        return []
    return [collection.to_doc[h.paper.id] for h in hits]


def modes_report(everything: dict[str, tuple[Judged, Any]], report: bool) -> None:
    """nDCG@10 of bm25s and rlpapers' lexical, hybrid and semantic modes, run as a user would."""
    halves = ("odd", "even", "all") if report else ("odd",)
    rows: dict[str, dict[str, list[float]]] = {}
    for cname, (collection, library) in everything.items():
        bm25 = bm25s_search(collection, Path(), indexed_texts(collection, library))
        queries = collection.judged("all")
        runs: dict[str, dict[int, list[str]]] = {"bm25s": {n: bm25(q) for n, q in queries}}
        for mode in ("lexical", "hybrid", "semantic"):
            runs[f"rlpapers {mode}"] = {
                n: _ranked(library, collection, q, mode) for n, q in queries
            }
        for name, ranked in runs.items():
            found = scored(collection, ranked)
            for half in halves:
                keep = [v for n, v in sorted(found.items()) if in_half(n, half)]
                rows.setdefault(name, {})[f"{cname} {half}"] = keep
                if cname in PUBLIC:
                    rows[name].setdefault(f"pooled {half}", []).extend(keep)
    columns = list(next(iter(rows.values())))
    print("| method | " + " | ".join(columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{mean(row[c]):.4f}" for c in columns) + " |")
    for name in ("rlpapers lexical", "rlpapers hybrid"):
        for column in (c for c in columns if c.startswith("pooled")):
            ours, base = rows[name][column], rows["bm25s"][column]
            print(
                f"{name} - bm25s, {column}: {mean(ours) - mean(base):+.4f} "
                f"(p = {sign_flip_p(ours, base):.4f})"
            )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--report", action="store_true", help="also the evaluation halves")
    parser.add_argument("--modes", action="store_true", help="measure rlpapers' search modes")
    parser.add_argument("--out", type=Path, help="where stores and vectors are kept")
    args = parser.parse_args()
    if args.out:
        global OUT
        OUT = args.out
    collections = [judged.cranfield(), judged.cisi()]
    libraries = {c.name: (c, library_of(c)) for c in collections}
    if args.modes:
        bundled = judged.bundled()
        libraries["bundled"] = (bundled, library_of_bundled(bundled))
        modes_report(libraries, args.report)
        return 0
    everything = {name: (c, sides(c, lib)) for name, (c, lib) in libraries.items()}
    choose(everything, args.report)
    return 0


def library_of_bundled(collection: Judged) -> Any:
    from rlpapers import Library

    library = Library([collection.folder], OUT / "bundled-index")
    library.embed()
    return library


if __name__ == "__main__":
    sys.exit(main())
