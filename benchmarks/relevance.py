"""Search quality of rlpapers against two BM25 baselines, on the same text, in one run.

    python benchmarks/relevance.py [--only cranfield,cisi,bundled] [--report] [--per-query]
                                   [--set NAME=VALUE ...] [--requests] [--titles-only]

Three engines see exactly the same documents and the same queries (``judged.py`` loads them):

- **rlpapers**: the real ``Library`` over a corpus folder in the seed layout, as a user would
  have it;
- **Whoosh**: Whoosh's BM25F (default parameters) with its ``StemmingAnalyzer``, over the same
  fields rlpapers ranks (title, abstract, and one field for authors, categories and topic),
  query words OR-ed over them;
- **bm25s** 0.3.16: PyStemmer's English Snowball stemmer, its English stop words, k1 1.5,
  b 0.75 (Lucene-style scoring), over the same fields joined into one text.

The baselines' text is read from the papers rlpapers indexed (title, abstract, authors,
categories, topic), so no engine sees more than another. rlpapers' derived ``name`` (a few
words taken from the title or abstract) is the one field they lack: it repeats words they have.

By default only the **tuning halves** are printed: the odd-numbered queries of each collection.
Every ranking choice is made on them (Cranfield and CISI together). ``--report`` adds the
evaluation halves (even-numbered queries), all queries, the two public collections pooled, and
a paired sign-flip test of rlpapers against bm25s: look at it only to report a choice already
made. ``--set ranking.NAME=VALUE`` changes a constant of ``rlpapers.index.ranking`` (or
``feedback``, ``query``, ``schema``) for this run, for trying a setting without editing the code
(``--set feedback.WEIGHT=0.5``, ``--set feedback.MIN_WORDS=1000000`` for no feedback).

``--requests`` adds the **designed-for** set: Cranfield's queries wrapped in request phrasings
("i am interested in articles on ..."). Its wording words are in the query stop words, added in
the same change as the set: it shows those words are ignored, and is no evidence of quality.
``--titles-only`` keeps only the title of every even-numbered Cranfield and CISI document.

Reported: nDCG@10 (gain 2^g - 1) and Recall@100.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import judged
from judged import Judged, in_half

K = 10
DEPTH = 100
SYSTEMS = ("rlpapers", "Whoosh", "bm25s")
COLLECTIONS = ("cranfield", "cisi", "bundled")
#: Query n of the designed-for set takes phrasing n mod 8.
REQUESTS = (
    "i am interested in articles on {}",
    "what papers exist which deal with {}",
    "please find documents about {}",
    "i would like to see literature concerning {}",
    "give me publications dealing with {}",
    "are there any reports available on {}",
    "i need references regarding {}",
    "looking for papers that discuss {}",
)

Search = Callable[[str], list[str]]
Results = dict[str, dict[int, tuple[float, float]]]  # system -> query -> (nDCG@10, R@100)


# --- measures ----------------------------------------------------------------------------------


def ndcg(ranked: list[str], grades: dict[str, int], k: int = K) -> float:
    gains = [grades.get(doc, 0) for doc in ranked[:k]]
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall(ranked: list[str], grades: dict[str, int], k: int = DEPTH) -> float:
    relevant = {doc for doc, grade in grades.items() if grade > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


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


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def evaluate(search: Search, collection: Judged, half: str) -> dict[int, tuple[float, float]]:
    """Query number -> (nDCG@10, Recall@100), over the judged queries of ``half``."""
    out = {}
    for number, text in collection.judged(half):
        grades = collection.qrels[number]
        ranked = search(text)
        out[number] = (ndcg(ranked, grades), recall(ranked, grades))
    return out


# --- engines -----------------------------------------------------------------------------------


def indexed_texts(collection: Judged, library: Any) -> dict[str, tuple[str, str, str]]:
    """Document id -> (title, abstract, the rest: authors, categories, topic) as rlpapers
    indexed them: what the baselines are given."""
    out = {}
    for paper in library.papers:
        rest = "\n".join([*paper.authors, *paper.categories, paper.topic or ""])
        out[collection.to_doc[paper.id]] = (paper.title, paper.abstract, rest)
    return out


def rlpapers_search(collection: Judged, library: Any) -> Search:
    from rlpapers import QueryError

    def search(query: str) -> list[str]:
        try:
            hits = library.search(query, limit=DEPTH, snippets=False)
        except QueryError as error:
            print(f"rlpapers refused a query: {error}", file=sys.stderr)
            return []
        return [collection.to_doc[hit.paper.id] for hit in hits]

    return search


def whoosh_search(
    collection: Judged, index_dir: Path, texts: dict[str, tuple[str, str, str]]
) -> Search:
    from whoosh import qparser, scoring
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.filedb.filestore import FileStorage

    fields = ("title", "abstract", "rest")
    analyzer = StemmingAnalyzer()
    schema = Schema(id=ID(stored=True), **{name: TEXT(analyzer=analyzer) for name in fields})
    ix = FileStorage(str(index_dir)).create_index(schema)
    with ix.writer() as writer:
        for doc, values in texts.items():
            writer.add_document(id=doc, **dict(zip(fields, values, strict=True)))
    searcher = ix.searcher(weighting=scoring.BM25F())
    parser = qparser.MultifieldParser(list(fields), schema, group=qparser.OrGroup)
    return lambda q: [hit["id"] for hit in searcher.search(parser.parse(q), limit=DEPTH)]


def bm25s_search(
    collection: Judged, index_dir: Path, texts: dict[str, tuple[str, str, str]]
) -> Search:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    docs = list(texts)
    tokens = bm25s.tokenize(
        ["\n".join(parts) for parts in texts.values()],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    retriever = bm25s.BM25(k1=1.5, b=0.75)
    retriever.index(tokens, show_progress=False)
    depth = min(DEPTH, len(docs))

    def search(query: str) -> list[str]:
        words = bm25s.tokenize(
            [query], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )[0]
        if not words:
            return []
        found, scores = retriever.retrieve([words], k=depth, show_progress=False)
        return [docs[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0]

    return search


BASELINES = {"Whoosh": whoosh_search, "bm25s": bm25s_search}


# --- the comparison ----------------------------------------------------------------------------


def run(collection: Judged, half: str = "all", systems: Iterable[str] = SYSTEMS) -> Results:
    """System name -> query number -> (nDCG@10, Recall@100), every engine on the same text."""
    from rlpapers import Library

    out: Results = {}
    with tempfile.TemporaryDirectory() as scratch, _data_dir(Path(scratch) / "data"):
        with Library(corpus=[collection.folder], index_dir=Path(scratch) / "rlpapers") as library:
            texts = indexed_texts(collection, library)
            for name in systems:
                if name == "rlpapers":
                    search = rlpapers_search(collection, library)
                else:
                    index_dir = Path(scratch) / name
                    index_dir.mkdir()
                    search = BASELINES[name](collection, index_dir, texts)
                out[name] = evaluate(search, collection, half)
    return out


@contextmanager
def _data_dir(folder: Path) -> Iterator[None]:
    """``RLPAPERS_DATA_DIR`` set to ``folder`` meanwhile: the run never touches the user's
    identity ledger."""
    before = os.environ.get("RLPAPERS_DATA_DIR")
    os.environ["RLPAPERS_DATA_DIR"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["RLPAPERS_DATA_DIR"]
        else:
            os.environ["RLPAPERS_DATA_DIR"] = before


def compare() -> Results:
    """Every engine on every query of the bundled set (the test suite's check)."""
    return run(judged.bundled())


def load(name: str, folder: Path, titles_only: bool = False) -> Judged:
    if name == "bundled":
        return judged.bundled()
    collection = judged.cranfield() if name == "cranfield" else judged.cisi()
    return judged.write_seed_layout(collection, folder / name, titles_only)


def requests(collection: Judged) -> Judged:
    """``collection`` with each query worded as a request (``REQUESTS``, in turn)."""
    queries = [(n, REQUESTS[n % len(REQUESTS)].format(q)) for n, q in collection.queries]
    name = f"{collection.name} as requests (designed-for)"
    return replace(collection, name=name, queries=queries)


def row(label: str, results: Results, numbers: list[int]) -> str:
    cells = []
    for system in SYSTEMS:
        found = [results[system][n] for n in numbers]
        cells.append(f"{mean(v[0] for v in found):.3f} | {mean(v[1] for v in found):.3f}")
    return f"| {label} | {len(numbers)} | " + " | ".join(cells) + " |"


def table(name: str, results: Results, halves: tuple[str, ...]) -> list[str]:
    lines = [
        f"| {name} | queries | " + " | ".join(f"{s} nDCG@10 | {s} R@100" for s in SYSTEMS) + " |",
        "| --- | ---: | " + " | ".join("---: | ---:" for _ in SYSTEMS) + " |",
    ]
    numbers = sorted(results[SYSTEMS[0]])
    for half in halves:
        lines.append(row(half, results, [n for n in numbers if in_half(n, half)]))
    return lines


def pooled(everything: dict[str, Results], names: list[str], halves: tuple[str, ...]) -> list[str]:
    """The collections in ``names`` pooled query by query, with the sign-flip p-value of
    rlpapers against bm25s."""
    lines = [f"pooled {' + '.join(names)} (nDCG@10):"]
    for half in halves:
        scores = {
            system: [
                v[0]
                for name in names
                for n, v in sorted(everything[name][system].items())
                if in_half(n, half)
            ]
            for system in SYSTEMS
        }
        gain = mean(scores["rlpapers"]) - mean(scores["bm25s"])
        p = sign_flip_p(scores["rlpapers"], scores["bm25s"])
        figures = "  ".join(f"{s} {mean(scores[s]):.4f}" for s in SYSTEMS)
        lines.append(
            f"  {half:<4} {len(scores['bm25s'])} queries: {figures}  "
            f"rlpapers - bm25s {gain:+.4f} (p = {p:.4f})"
        )
    return lines


def apply_settings(settings: list[str]) -> None:
    """``module.NAME=VALUE`` for modules of ``rlpapers.index``: a Python literal each."""
    import ast
    import importlib

    for setting in settings:
        target, _, value = setting.partition("=")
        module, _, name = target.rpartition(".")
        loaded = importlib.import_module(f"rlpapers.index.{module}")
        if not hasattr(loaded, name):
            raise SystemExit(f"--set: rlpapers.index.{module} has no {name}")
        setattr(loaded, name, ast.literal_eval(value))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default=",".join(COLLECTIONS), help="collections, comma-separated"
    )
    parser.add_argument("--report", action="store_true", help="also the evaluation halves")
    parser.add_argument("--per-query", action="store_true", help="nDCG@10 of every query")
    parser.add_argument("--set", action="append", default=[], help="ranking.NAME=VALUE")
    parser.add_argument("--requests", action="store_true", help="add the designed-for set")
    parser.add_argument("--titles-only", action="store_true", help="even documents: title only")
    args = parser.parse_args()
    apply_settings(args.set)
    halves = ("odd", "even", "all") if args.report else ("odd",)
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - set(COLLECTIONS)
    if unknown:
        raise SystemExit(f"--only: unknown collection(s) {', '.join(sorted(unknown))}")
    everything: dict[str, Results] = {}
    with tempfile.TemporaryDirectory() as folder:
        collections = [load(name, Path(folder), args.titles_only) for name in names]
        if args.requests and "cranfield" in names:
            collections.append(requests(collections[names.index("cranfield")]))
        for collection in collections:
            results = run(collection, "all" if args.report else "odd")
            everything[collection.name] = results
            if args.per_query:
                for number, text in collection.judged("all" if args.report else "odd"):
                    scores = "  ".join(f"{results[s][number][0]:.3f}" for s in SYSTEMS)
                    print(f"{collection.name} {number:4d}  {scores}  {text[:100]}")
            print("\n".join(table(collection.name, results, halves)) + "\n")
    public = [name for name in ("cranfield", "cisi") if name in everything]
    if public:
        print("\n".join(pooled(everything, public, halves)))


if __name__ == "__main__":
    sys.exit(main())
