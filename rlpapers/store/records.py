"""Records as the store keeps them: JSON text of a paper's fields, read back as a ``Paper``.

The store's reads, its lookups and its refresh all decode records here; none of them imports
the store package itself for it."""

from __future__ import annotations

from typing import Any

from ..model import Paper
from .db import Garbled, loads


def paper_of(data: str) -> Paper:
    """A record as the store keeps it (JSON text) back as a Paper; ``Garbled`` when it is no
    paper's record."""
    return stored_paper(loads(data, dict, "record"))


def stored_paper(row: dict[str, Any]) -> Paper:
    """``Paper.from_dict`` for a record or parse row the store wrote; ``Garbled`` if damaged."""
    try:
        return Paper.from_dict(row)
    except ValueError as error:
        raise Garbled(f"garbled record ({error})") from None
