"""Write the preset dictionary the record store compresses records with
(``rlpapers/store/records.zdict``): the 1,000 commonest words and word pairs of 10,000 arXiv
abstracts (records 30,000 to 39,999 of the shared corpus), the commonest last, as zlib wants them,
then the JSON field names of a record.

    python benchmarks/records_zdict.py

The dictionary is part of the store's format: rows compressed with one dictionary cannot be read
with another (each row's CRC-32 tells). Writing a different one needs a new store ``VERSION`` and
an upgrade of the stored rows; ``tests/test_records.py`` pins its hash.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ARXIV = ROOT.parent / "shared" / "corpora" / "arxiv-cs-2025-2026.jsonl.gz"
OUT = ROOT / "rlpapers" / "store" / "records.zdict"
ENTRIES = 1000
FIELDS = (
    '"title_derived":true,"id":"","key":"","title":"","name":"","abstract":"","source":"",'
    '"line":,"sources":[":"],"links":[""],"url":"https://arxiv.org/abs/","doi":"10.","note":"",'
    '"authors_truncated":true'
)


def main() -> None:
    counts: Counter[str] = Counter()
    with gzip.open(ARXIV, "rt", encoding="utf-8") as lines:
        for n, line in enumerate(lines):
            if n >= 40_000:
                break
            if n >= 30_000:
                words = json.loads(line)["abstract"].split()
                counts.update(words)
                counts.update(f"{a} {b}" for a, b in zip(words, words[1:], strict=False))
    common = [text for text, _ in counts.most_common(ENTRIES)]
    OUT.write_text(" ".join(reversed(common)) + " " + FIELDS, encoding="utf-8")
    print(f"{OUT}: {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
