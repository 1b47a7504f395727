"""Golden files: each tests/data/parse/<case>.txt beside the records it must give (<case>.json).

Rewrite the expected files after an intended change with ``RLPAPERS_REGEN=1 pytest`` and review
the diff.
"""

from __future__ import annotations

import json
import os
import warnings

import pytest

from rlpapers.parse import parse_file
from rlpapers.store.finish import finish

from .conftest import DATA

CASES = sorted(
    p for p in (DATA / "parse").glob("*.txt") if p.stat().st_size and p.stem != "header_only"
)


def records(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [p.to_dict() for p in finish(parse_file(path))]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_parser_golden(case):
    expected_path = case.with_suffix(".json")
    got = records(case)
    if os.environ.get("RLPAPERS_REGEN"):
        expected_path.write_text(
            json.dumps(got, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    assert got == expected
