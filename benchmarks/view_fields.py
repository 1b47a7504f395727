"""What the search view holds, field by field, beside plain Whoosh.

    python benchmarks/view_fields.py [--size 10000]

Parses the first ``--size`` arXiv records of ../shared/corpora as bench.py lays them out, then
writes each field of the view's schema into an index of its own (one writer, one segment) three
ways: as the view writes it (``rlpapers.index.postings``: compact positions and codec), with
Whoosh's own ``Positions`` format and codec (the view before schema 11), and without positions.
Prints the size of each in MB; the sum of the abstract, author and category fields written
Whoosh's way is what plain Whoosh indexes (bench.py's baseline), the rest is what the view holds
beyond it.
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def documents(size: int, out: Path) -> list[dict[str, Any]]:
    from bench import CORPUS, load_records, write_corpus

    from rlpapers.index.schema import document
    from rlpapers.parse import parse_file
    from rlpapers.store.finish import finish

    folder = write_corpus(load_records(CORPUS, size), out / f"parse-corpus-{size}", size)
    papers = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(folder.glob("*.txt")):
            papers.extend(parse_file(path))
    return [document(paper) for paper in finish(papers)]


def written_size(field: str, form: Any, codec: Any, docs: list[dict[str, Any]]) -> int:
    """Bytes of an index holding ``field`` alone, written with ``form`` and ``codec``."""
    from whoosh.fields import Schema
    from whoosh.filedb.filestore import FileStorage

    from rlpapers.index.schema import schema

    folder = Path(tempfile.mkdtemp(prefix="view-field-"))
    try:
        spec = copy.deepcopy(schema()[field])
        if form is not None:
            spec.format = form
        ix = FileStorage(str(folder), supports_mmap=False).create_index(Schema(**{field: spec}))
        writer = ix.writer(limitmb=128, codec=codec)
        for doc in docs:
            if field in doc:
                writer.add_document(**{field: doc[field]})
        writer.commit()
        return sum(f.stat().st_size for f in folder.iterdir())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    from bench import OUT
    from whoosh.codec.whoosh3 import W3Codec
    from whoosh.formats import Frequency, Positions

    from rlpapers.index.postings import CompactCodec, spill_with_marshal
    from rlpapers.index.schema import schema

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    spill_with_marshal()
    docs = documents(args.size, OUT)
    fields = schema()
    mb = 1024 * 1024
    print("| field | the view | Whoosh's positions and codec | no positions |")
    print("| --- | ---: | ---: | ---: |")
    totals = [0, 0]
    for name in fields.names():
        form = fields[name].format
        keeps = form.supports("positions")
        view = written_size(name, None, CompactCodec(), docs)
        old = Positions(field_boost=form.field_boost) if keeps else None
        whoosh = written_size(name, old, W3Codec(), docs)
        bare = written_size(name, Frequency(field_boost=form.field_boost), CompactCodec(), docs)
        totals = [totals[0] + view, totals[1] + whoosh]
        cells = [f"{view / mb:.2f}", f"{whoosh / mb:.2f}", f"{bare / mb:.2f}" if keeps else "–"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"| all | {totals[0] / mb:.2f} | {totals[1] / mb:.2f} | |")


if __name__ == "__main__":
    main()
