"""YAML: the same records as JSON, through ``yaml.safe_dump`` with unicode kept."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .json_ import records


def export(papers: Iterable[Any]) -> str:
    import yaml

    return yaml.safe_dump(records(papers), allow_unicode=True, sort_keys=False, width=100)
