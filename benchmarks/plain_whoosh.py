"""Plain Whoosh over the benchmark's text: the engine's own cost, the baseline of the build.

    python benchmarks/plain_whoosh.py DOCS.jsonl INDEX_DIR   # what bench.py times

One document a paper with the fields the arXiv records give directly (abstract, authors,
categories), analysed with rlpapers' own analyzers (``text_analyzer`` for the abstract,
``name_analyzer`` for authors and categories, positions kept as rlpapers keeps them), no stored
field, written by two processes into several segments (``procs=2, multisegment=True``,
``limitmb=128``). No parsing: the text comes from the records bench.py writes in the seed
layout, so what rlpapers' build costs beyond this is parsing, the record store and its own
fields (derived names and titles, topic, source).

Whoosh here is Whoosh as it ships: the analyzers are imported without ``rlpapers.index``'s
package (which makes Whoosh write no pickles and read none, ``index/plainfiles.py``), so the
baseline keeps Whoosh's own file formats and costs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def documents(records: list[dict[str, Any]], size: int) -> list[dict[str, str]]:
    """The first ``size`` papers of bench.py's corpus (repeated with the same copy marker)."""
    out = []
    for i in range(size):
        record = records[i % len(records)]
        copy = i // len(records)
        abstract = " ".join(record["abstract"].split()) + (f" [copy {copy + 1}]" if copy else "")
        out.append(
            {
                "abstract": abstract,
                "author": "\n".join(record["authors"][:12]),
                "category": "\n".join(record["categories"]),
            }
        )
    return out


def write_documents(records: list[dict[str, Any]], size: int, path: Path) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for doc in documents(records, size):
            handle.write(json.dumps(doc) + "\n")
    return path


def _analysis() -> Any:
    """``rlpapers.index.analysis``, without running ``rlpapers/index/__init__.py``."""
    import types

    import rlpapers

    if "rlpapers.index" not in sys.modules:
        package = types.ModuleType("rlpapers.index")
        package.__path__ = [str(Path(rlpapers.__file__).parent / "index")]
        sys.modules["rlpapers.index"] = package
    import rlpapers.index.analysis as analysis

    return analysis


def schema() -> Any:
    from whoosh.fields import TEXT, Schema

    analysis = _analysis()
    text_analyzer, name_analyzer = analysis.text_analyzer, analysis.name_analyzer

    return Schema(
        abstract=TEXT(analyzer=text_analyzer()),
        author=TEXT(analyzer=name_analyzer()),
        category=TEXT(analyzer=name_analyzer()),
    )


def build(docs: Path, folder: Path) -> None:
    from whoosh import index

    folder.mkdir(parents=True, exist_ok=True)
    ix = index.create_in(str(folder), schema())
    writer = ix.writer(procs=2, multisegment=True, limitmb=128)
    with docs.open(encoding="utf-8") as handle:
        for line in handle:
            writer.add_document(**json.loads(line))
    writer.commit()


def main() -> None:
    build(Path(sys.argv[1]), Path(sys.argv[2]))


if __name__ == "__main__":
    main()
