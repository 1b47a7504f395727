"""JSON and JSON Lines: the records' stable schema (see ``rlpapers.model.SCHEMA_FIELDS``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


def records(items: Iterable[Any]) -> list[dict[str, Any]]:
    """Papers or hits as dicts (hits add score, rank and snippet)."""
    return [item.to_dict() for item in items]


def export_json(papers: Iterable[Any]) -> str:
    return json.dumps(records(papers), ensure_ascii=False, indent=2) + "\n"


def export_jsonl(papers: Iterable[Any]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records(papers))
