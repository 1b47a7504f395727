"""nDCG@10 of rlpapers' ranking against plain Whoosh BM25F, on tests/relevance.yaml.

    python benchmarks/relevance.py [--per-query]

The baseline is Whoosh as it comes: the same fields as TEXT with Whoosh's default analyser
(no stemming, no folding, no CJK handling), BM25F with default parameters and no field weights,
plain words OR-ed by MultifieldParser. Both rank the 40 bundled seed papers.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
JUDGMENTS = ROOT / "tests" / "relevance.yaml"
K = 10


def load_judgments(path: Path = JUDGMENTS) -> dict[str, dict[str, int]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def ndcg(ranked: list[str], grades: dict[str, int], k: int = K) -> float:
    gains = [grades.get(doc, 0) for doc in ranked[:k]]
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def evaluate(
    search: Callable[[str], list[str]], judgments: dict[str, dict[str, int]]
) -> dict[str, float]:
    return {query: ndcg(search(query), grades) for query, grades in judgments.items()}


def rlpapers_search(index_dir: Path) -> Callable[[str], list[str]]:
    from rlpapers import Library

    library = Library(corpus=[ROOT / "seeds"], index_dir=index_dir)
    return lambda q: [hit.paper.id for hit in library.search(q, limit=K)]


def baseline_search(index_dir: Path) -> Callable[[str], list[str]]:
    from whoosh import qparser, scoring
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.filedb.filestore import FileStorage

    from rlpapers import load_corpus

    fields = ("name", "title", "abstract", "author", "category", "topic")
    schema = Schema(id=ID(stored=True), **{f: TEXT() for f in fields})
    ix = FileStorage(str(index_dir)).create_index(schema)
    with ix.writer() as writer:
        for p in load_corpus([ROOT / "seeds"]).papers:
            writer.add_document(
                id=p.id,
                name=p.name,
                title=p.title,
                abstract=p.abstract,
                author=" ".join(p.authors),
                category=" ".join(p.categories),
                topic=p.topic,
            )
    searcher = ix.searcher(weighting=scoring.BM25F())
    parser = qparser.MultifieldParser(list(fields), schema, group=qparser.OrGroup)
    return lambda q: [hit["id"] for hit in searcher.search(parser.parse(q), limit=K)]


def compare() -> tuple[dict[str, float], dict[str, float]]:
    judgments = load_judgments()
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as plain:
        return (
            evaluate(rlpapers_search(Path(ours)), judgments),
            evaluate(baseline_search(Path(plain)), judgments),
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--per-query", action="store_true")
    args = parser.parse_args()
    ours, plain = compare()
    if args.per_query:
        for query in ours:
            print(f"{ours[query]:.3f}  {plain[query]:.3f}  {query}")
    mean = lambda d: sum(d.values()) / len(d)  # noqa: E731
    print(
        f"queries: {len(ours)}  nDCG@{K}: rlpapers {mean(ours):.4f}  plain Whoosh BM25F {mean(plain):.4f}"
    )


if __name__ == "__main__":
    sys.exit(main())
