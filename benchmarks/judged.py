"""The judged collections every search-quality script reads, in one place.

- **cranfield** (``../shared/relevance/cranfield``): 1,400 aeronautics abstracts, 225 short
  questions, graded judgments. Queries are numbered 1..225 in file order (``cranqrel``'s
  numbering, not the ``.I`` numbers); grades map 1→4, 2→3, 3→2, 4→1, -1→0.
- **cisi** (``../shared/relevance/cisi``): 1,460 library-science abstracts, 112 requests of
  which 76 are judged, binary relevance. Queries keep their ``.I`` numbers (``CISI.REL``'s);
  the request is the ``.W`` part.
- **bundled**: the 40 bundled seed papers and the queries of ``tests/relevance.yaml``
  (grades 0-3), numbered 1.. in file order.

A SMART document becomes one paper of the seed layout: one abstract block
``"title. abstract"``, its real title given as metadata (``<file>.yaml`` keyed by paper id),
as a user with real papers would have them. A document whose text repeats an earlier one is
left out and its judgments count for the earlier one (Cranfield 995 = 471; two in CISI). A
document with no text at all (Cranfield 471) is left out of the layout: no engine can find it,
and its judgments stay, for every engine alike.
Queries are lower-cased and stripped of punctuation (``plain``): every engine gets the same
words, and none of them reads a request's colons, quotes or capitalised AND/OR/NOT as syntax.

The odd-numbered queries of each collection are the tuning half, the even-numbered ones the
evaluation half (``half``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "relevance"
JUDGMENTS = ROOT / "tests" / "relevance.yaml"
CRANFIELD_GAINS = {1: 4, 2: 3, 3: 2, 4: 1, -1: 0}


@dataclass
class Judged:
    """A judged collection: documents, queries, judgments, and (once written) the folder
    rlpapers reads with the map from its paper ids back to document ids."""

    name: str
    docs: dict[str, tuple[str, str]]  # document id -> (title, abstract)
    queries: list[tuple[int, str]]  # (number, text)
    qrels: dict[int, dict[str, int]]  # query number -> document id -> grade
    folder: Path | None = None
    to_doc: dict[str, str] = field(default_factory=dict)

    def judged(self, half: str = "all") -> list[tuple[int, str]]:
        """The queries with a relevant document, in ``half`` ("odd", "even" or "all")."""
        return [
            (n, q)
            for n, q in self.queries
            if any(g > 0 for g in self.qrels.get(n, {}).values()) and in_half(n, half)
        ]


def in_half(number: int, half: str) -> bool:
    return half == "all" or (number % 2 == 1) == (half == "odd")


def read_smart(path: Path, skip: str = "X") -> list[dict[str, str]]:
    """Records of a SMART-format file: ``.I n`` opens one, ``.T``/``.A``/``.W``/... open
    sections (a marker may carry trailing spaces); sections in ``skip`` are not text."""
    records: list[dict[str, str]] = []
    section = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I "):
            records.append({"I": line[3:].strip()})
            section = ""
        elif re.fullmatch(r"\.[A-Z]\s*", line):
            section = line.strip()[1]
            if section not in skip:
                records[-1].setdefault(section, "")
        elif section and section not in skip:
            records[-1][section] += " " + line.strip()
    return [{k: " ".join(v.split()) for k, v in r.items()} for r in records]


def plain(text: str) -> str:
    """A query as every engine gets it: lower case, punctuation as spaces."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _documents(records: list[dict[str, str]]) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """Document id -> (title, abstract), and the ids of repeated documents -> the first one."""
    docs: dict[str, tuple[str, str]] = {}
    first: dict[str, str] = {}
    repeats: dict[str, str] = {}
    for record in records:
        title = record.get("T", "").rstrip(" .")
        abstract = record.get("W", "")
        text = " ".join(f"{title}. {abstract}".split())
        if text in first:
            repeats[record["I"]] = first[text]
            continue
        first[text] = record["I"]
        docs[record["I"]] = (title, abstract)
    return docs, repeats


def cranfield(folder: Path = SHARED / "cranfield") -> Judged:
    docs, repeats = _documents(read_smart(folder / "cran.all.1400"))
    queries = [(n, plain(r.get("W", ""))) for n, r in enumerate(read_smart(folder / "cran.qry"), 1)]
    qrels: dict[int, dict[str, int]] = {}
    for line in (folder / "cranqrel").read_text(encoding="utf-8").splitlines():
        if line.strip():
            query, doc, grade = line.split()[:3]
            doc = repeats.get(doc, doc)
            judged = qrels.setdefault(int(query), {})
            judged[doc] = max(judged.get(doc, 0), CRANFIELD_GAINS[int(grade)])
    return Judged("cranfield", docs, queries, qrels)


def cisi(folder: Path = SHARED / "cisi") -> Judged:
    docs, repeats = _documents(read_smart(folder / "CISI.ALL"))
    queries = [(int(r["I"]), plain(r.get("W", ""))) for r in read_smart(folder / "CISI.QRY")]
    qrels: dict[int, dict[str, int]] = {}
    for line in (folder / "CISI.REL").read_text(encoding="utf-8").splitlines():
        if line.strip():
            query, doc = line.split()[:2]
            qrels.setdefault(int(query), {})[repeats.get(doc, doc)] = 1
    return Judged("cisi", docs, queries, qrels)


def bundled(path: Path = JUDGMENTS) -> Judged:
    """The bundled papers (ids as rlpapers gives them) and ``tests/relevance.yaml``."""
    from rlpapers import load_corpus

    papers = load_corpus([ROOT / "seeds"]).papers
    judged = load_judgments(path)
    queries = list(enumerate(judged, 1))
    return Judged(
        "bundled",
        {p.id: (p.title, p.abstract) for p in papers},
        queries,
        {n: judged[q] for n, q in queries},
        ROOT / "seeds",
        {p.id: p.id for p in papers},
    )


def load_judgments(path: Path = JUDGMENTS) -> dict[str, dict[str, int]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def write_seed_layout(collection: Judged, folder: Path, titles_only: bool = False) -> Judged:
    """``collection`` written in the seed layout in ``folder`` (one abstract block per
    document, the real titles in a metadata sidecar); sets ``folder`` and ``to_doc``. With
    ``titles_only``, even-numbered documents keep their title only (a check that the ranking
    does not lean on every paper having an abstract)."""
    from rlpapers import parse_text

    folder.mkdir(parents=True, exist_ok=True)
    texts = {}
    for doc, (title, abstract) in collection.docs.items():
        if not (title.strip() or abstract.strip()):
            continue
        dropped = titles_only and doc.isdigit() and int(doc) % 2 == 0
        texts[doc] = " ".join(f"{title}. {'' if dropped else abstract}".split())
    name = f"{collection.name}.txt"
    layout = f"{collection.name.title()}\n\n" + "\n\n".join(texts.values()) + "\n"
    (folder / name).write_text(layout, encoding="utf-8")
    papers = parse_text(layout, name)
    by_text = {text: doc for doc, text in texts.items()}
    to_doc = {p.id: by_text.get(" ".join(p.abstract.split()), "") for p in papers}
    if len(papers) != len(texts) or "" in to_doc.values():
        raise SystemExit(f"{collection.name}: {len(papers)} papers parsed from {len(texts)}")
    metadata = {p.id: {"title": collection.docs[to_doc[p.id]][0]} for p in papers}
    (folder / f"{collection.name}.yaml").write_text(yaml.safe_dump(metadata), encoding="utf-8")
    collection.folder = folder
    collection.to_doc = to_doc
    return collection
