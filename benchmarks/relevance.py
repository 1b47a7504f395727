"""Search quality of rlpapers against two BM25 baselines, on the same text, in one run.

    python benchmarks/relevance.py [--cranfield PATH] [--per-query] [--titles-only]
                                   [--only bundled|cranfield|requests]

Three rankers see the same documents and the same queries:

- **rlpapers**: the real ``Library`` over a corpus folder, as a user would have it;
- **Whoosh**: plain Whoosh BM25F (default parameters) over one text field with its
  ``StemmingAnalyzer``, query words OR-ed;
- **bm25s**: bm25s with PyStemmer's English Snowball stemmer, its English stop words,
  k1 1.5, b 0.75 (its default, Lucene-style scoring).

Two judged sets:

- **bundled**: the 40 bundled seed papers and the judged queries in ``tests/relevance.yaml``
  (written with the ranker in view: a check that nothing regressed, not evidence of a gain);
- **cranfield**: the Cranfield collection (default ``../shared/relevance/cranfield`` beside the
  repository). Each document is written in the seed layout as one abstract block
  ``"title. abstract"``, and its real title is given through a metadata override
  (``metadata.yaml`` keyed by paper id), as a user with real papers would. Queries are numbered
  1..225 in file order (``cranqrel``'s numbering, not the ``.I`` numbers), lower-cased and
  stripped of punctuation; grades map 1→4, 2→3, 3→2, 4→1, -1→0; document 995 is a copy of 471
  and is dropped (its judgments count for 471);
- **requests**: the same Cranfield documents and judgments, each query wrapped in one of the
  request phrasings in ``REQUESTS`` ("i am interested in articles on ..."), taken in turn. Not
  a collection of its own: it shows how much a ranker loses when a query is worded as a request
  to a librarian, as the queries of some test collections are. The phrasings were written once,
  before any measurement, and are not tuned on.

With ``--titles-only`` the Cranfield sets keep only the title of every even-numbered document
(its abstract dropped), as in collections where many records have no abstract: a check that
the ranking does not depend on every paper having one.

Reported: nDCG@10 (gain 2^g - 1) and Recall@100 on the odd- and even-numbered queries and on all.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
JUDGMENTS = ROOT / "tests" / "relevance.yaml"
CRANFIELD = ROOT.parent / "shared" / "relevance" / "cranfield"
K = 10
DEPTH = 100
SYSTEMS = ("rlpapers", "Whoosh", "bm25s")
GAINS = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}
DUPLICATES = {"995": "471"}
#: How people word a request to a librarian or a search box; query n takes phrasing n mod 8.
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


@dataclass
class Collection:
    name: str
    texts: dict[str, str]  # document id -> its text as the file holds it
    queries: list[tuple[int, str]]  # (number, text)
    qrels: dict[int, dict[str, int]]  # query number -> document id -> grade
    folder: Path  # the corpus folder rlpapers reads
    to_doc: dict[str, str]  # rlpapers paper id -> document id


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


def evaluate(search: Search, collection: Collection) -> dict[int, tuple[float, float]]:
    """Query number -> (nDCG@10, Recall@100), over the queries that have judgments."""
    out = {}
    for number, text in collection.queries:
        grades = collection.qrels.get(number)
        if grades and any(g > 0 for g in grades.values()):
            ranked = search(text)
            out[number] = (ndcg(ranked, grades), recall(ranked, grades))
    return out


# --- collections -------------------------------------------------------------------------------


def load_judgments(path: Path = JUDGMENTS) -> dict[str, dict[str, int]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def bundled() -> Collection:
    from rlpapers import load_corpus

    folder = ROOT / "seeds"
    papers = load_corpus([folder]).papers
    judged = load_judgments()
    queries = list(enumerate(judged, 1))
    return Collection(
        "bundled",
        {p.id: p.abstract for p in papers},
        queries,
        {n: judged[q] for n, q in queries},
        folder,
        {p.id: p.id for p in papers},
    )


def _smart(path: Path) -> list[dict[str, str]]:
    """Records of a SMART-format file: ``.I n`` then ``.X`` sections."""
    records: list[dict[str, str]] = []
    section = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I "):
            records.append({"I": line[3:].strip()})
            section = ""
        elif re.fullmatch(r"\.[A-Z]", line.strip()):
            section = line.strip()[1]
            records[-1][section] = ""
        elif section:
            records[-1][section] += " " + line.strip()
    return [{k: " ".join(v.split()) for k, v in r.items()} for r in records]


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def cranfield(source: Path, folder: Path, titles_only: bool = False) -> Collection:
    """Cranfield in the seed layout; with ``titles_only``, even-numbered documents lose their
    abstract."""
    from rlpapers import parse_text

    texts: dict[str, str] = {}
    titles: dict[str, str] = {}
    for record in _smart(source / "cran.all.1400"):
        if record["I"] in DUPLICATES:
            continue
        title = record.get("T", "").rstrip(" .")
        abstract = "" if titles_only and int(record["I"]) % 2 == 0 else record.get("W", "")
        texts[record["I"]] = f"{title}. {abstract}".strip()
        titles[record["I"]] = title
    layout = "Cranfield\n\n" + "\n\n".join(texts.values()) + "\n"
    (folder / "cranfield.txt").write_text(layout, encoding="utf-8")
    papers = parse_text(layout, "cranfield.txt")
    if len(papers) != len(texts):
        raise SystemExit(f"cranfield: {len(papers)} papers parsed from {len(texts)} documents")
    to_doc = {p.id: doc for p, doc in zip(papers, texts, strict=True)}
    metadata = {p.id: {"title": titles[doc]} for p, doc in zip(papers, texts, strict=True)}
    (folder / "cranfield.yaml").write_text(yaml.safe_dump(metadata), encoding="utf-8")
    queries = [(n, _plain(r.get("W", ""))) for n, r in enumerate(_smart(source / "cran.qry"), 1)]
    qrels: dict[int, dict[str, int]] = {}
    for line in (source / "cranqrel").read_text(encoding="utf-8").splitlines():
        if line.strip():
            query, doc, grade = line.split()[:3]
            doc = DUPLICATES.get(doc, doc)
            judged = qrels.setdefault(int(query), {})
            judged[doc] = max(judged.get(doc, 0), GAINS[int(grade)])
    name = "cranfield, titles only for even documents" if titles_only else "cranfield"
    return Collection(name, texts, queries, qrels, folder, to_doc)


def requests(collection: Collection) -> Collection:
    """``collection`` with each query worded as a request (``REQUESTS``, in turn)."""
    queries = [(n, REQUESTS[n % len(REQUESTS)].format(q)) for n, q in collection.queries]
    name = collection.name.replace("cranfield", "requests")
    return replace(collection, name=name, queries=queries)


# --- rankers -----------------------------------------------------------------------------------


def rlpapers_search(collection: Collection, index_dir: Path) -> Search:
    from rlpapers import Library, QueryError

    library = Library(corpus=[collection.folder], index_dir=index_dir)

    def search(query: str) -> list[str]:
        try:
            hits = library.search(query, limit=DEPTH)
        except QueryError:
            return []
        return [collection.to_doc[hit.paper.id] for hit in hits]

    return search


def whoosh_search(collection: Collection, index_dir: Path) -> Search:
    from whoosh import qparser, scoring
    from whoosh.analysis import StemmingAnalyzer
    from whoosh.fields import ID, TEXT, Schema
    from whoosh.filedb.filestore import FileStorage

    schema = Schema(id=ID(stored=True), text=TEXT(analyzer=StemmingAnalyzer()))
    ix = FileStorage(str(index_dir)).create_index(schema)
    with ix.writer() as writer:
        for doc, text in collection.texts.items():
            writer.add_document(id=doc, text=text)
    searcher = ix.searcher(weighting=scoring.BM25F())
    parser = qparser.QueryParser("text", schema, group=qparser.OrGroup)
    return lambda q: [hit["id"] for hit in searcher.search(parser.parse(q), limit=DEPTH)]


def bm25s_search(collection: Collection, index_dir: Path) -> Search:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    docs = list(collection.texts)
    tokens = bm25s.tokenize(
        list(collection.texts.values()), stopwords="en", stemmer=stemmer, show_progress=False
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


RANKERS = {"rlpapers": rlpapers_search, "Whoosh": whoosh_search, "bm25s": bm25s_search}


# --- the comparison ----------------------------------------------------------------------------


def run(collection: Collection) -> dict[str, dict[int, tuple[float, float]]]:
    """System name -> query number -> (nDCG@10, Recall@100)."""
    out = {}
    for name in SYSTEMS:
        with tempfile.TemporaryDirectory() as index_dir:
            out[name] = evaluate(RANKERS[name](collection, Path(index_dir)), collection)
    return out


def compare() -> dict[str, dict[int, tuple[float, float]]]:
    """Every system on the bundled set (the test suite's check)."""
    return run(bundled())


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summary(results: dict[int, tuple[float, float]], half: str) -> tuple[float, float, int]:
    keep = [v for n, v in results.items() if half == "all" or (n % 2 == 1) == (half == "odd")]
    return mean([v[0] for v in keep]), mean([v[1] for v in keep]), len(keep)


def table(name: str, results: dict[str, dict[int, tuple[float, float]]]) -> list[str]:
    lines = [
        f"| {name} | queries | " + " | ".join(f"{s} nDCG@10 | {s} R@100" for s in SYSTEMS) + " |",
        "| --- | ---: | " + " | ".join("---: | ---:" for _ in SYSTEMS) + " |",
    ]
    for half in ("odd", "even", "all"):
        cells = [summary(results[s], half) for s in SYSTEMS]
        numbers = " | ".join(f"{n:.3f} | {r:.3f}" for n, r, _ in cells)
        lines.append(f"| {half} | {cells[0][2]} | {numbers} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cranfield", type=Path, default=CRANFIELD, help="Cranfield folder")
    parser.add_argument("--only", choices=("bundled", "cranfield", "requests"))
    parser.add_argument("--per-query", action="store_true", help="nDCG@10 of every query")
    parser.add_argument(
        "--titles-only", action="store_true", help="even-numbered Cranfield documents: title only"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        collections = []
        if args.only in (None, "bundled"):
            collections.append(bundled())
        if args.only in (None, "cranfield", "requests"):
            judged = cranfield(args.cranfield, Path(folder), args.titles_only)
            if args.only != "requests":
                collections.append(judged)
            collections.append(requests(judged))
        for collection in collections:
            results = run(collection)
            if args.per_query:
                for number, text in collection.queries:
                    scores = "  ".join(f"{results[s].get(number, (0, 0))[0]:.3f}" for s in SYSTEMS)
                    print(f"{number:4d}  {scores}  {text}")
            print("\n".join(table(collection.name, results)) + "\n")


if __name__ == "__main__":
    sys.exit(main())
