"""Results worth keeping between runs, kept in the search view's live generation folder.

A result is kept with the store state it was computed from (the generation's manifest: store
instance and change counter, schema and Whoosh version), the rlpapers version that computed it
and what else it depends on, and is given back only for exactly that state. It is derived data
like the rest of the folder: a file that cannot be read, or reads as something other than what
was kept, is recomputed and written again, and a folder that cannot be written only means the
result is computed each time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..files import write_atomic


def read_json(path: Path) -> Any | None:
    """The JSON value of a small file of the view (a manifest, a kept result); None when it
    cannot be read as JSON. Only a regular file is read: a pipe planted in its place would
    block the command. RecursionError: a value nested too deeply."""
    try:
        if not path.is_file():
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def recall(folder: Path, name: str, key: dict[str, Any]) -> Any | None:
    """The value kept as ``name`` for ``key`` (None: none, another state, or unreadable)."""
    kept = read_json(folder / f"{name}.json")
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    return kept.get("value")


def keep(folder: Path, name: str, key: dict[str, Any], value: Any) -> None:
    """Keep ``value`` (JSON data) as ``name`` for ``key``; a folder that cannot take it is left."""
    data = json.dumps({"key": key, "value": value}, ensure_ascii=False).encode("utf-8")
    try:
        write_atomic(folder / f"{name}.json", data)
    except OSError:
        pass
