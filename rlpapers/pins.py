"""keys.yaml: pinned citation keys that travel with the corpus files.

``rlpapers keys --pin`` writes every paper's key into a ``keys.yaml`` beside its corpus file,
and a refresh reads it like any metadata file. The file is the user's as much as ours: they add
comments, other fields (``venue: ICML``) and other entries. So a pin rewrites only ``key:``
values, through ruamel.yaml's round-trip mode, which keeps comments, order, quoting and every
other field as written (PyYAML, which reads the metadata, drops comments when it writes).

- A paper that already has an entry, under any name that reaches it (its id, its content id or
  its key), gets its ``key:`` set there; other papers get a new entry at the end.
- A symlinked keys.yaml is written through to its target, the link kept (``files.save``).
- Concurrent pins of one folder are serialised by a lock file beside the real keys.yaml: each
  reads what the one before it wrote, so no entry is lost.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import ParseError

HEADER = (
    "# Citation keys pinned by `rlpapers keys --pin`: paper id -> key.\n"
    "# Read like any metadata file: keep it beside the corpus files so the keys travel with them.\n"
)


def write_keys(path: Path, pins: Iterable[tuple[str, str, Iterable[str]]]) -> int:
    """Pin each ``(target, key, other names of the paper)`` into the keys.yaml at ``path``;
    returns how many entries of the file set a key."""
    from filelock import FileLock

    from .files import save

    real = Path(os.path.realpath(path))
    with FileLock(str(real.parent / f".{real.name}.lock")):
        yaml, document, before = _load(real)
        entries = {str(n).lower(): e for n, e in document.items() if isinstance(e, dict)}
        for target, key, names in pins:
            _pin(document, entries, target, key, names)
        out = io.StringIO()
        yaml.dump(document, out)
        save(before + out.getvalue(), path, force=True)
    return sum(1 for value in document.values() if isinstance(value, dict) and "key" in value)


def _load(path: Path) -> tuple[Any, Any, str]:
    """The round-trip reader, the document, and the text to keep before it (the header for a
    new file; a file of comments only, which loads as nothing, kept whole)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    yaml = YAML()  # round trip
    yaml.preserve_quotes = True
    yaml.width = 4096
    if not path.exists():
        return yaml, CommentedMap(), HEADER
    try:
        text = path.read_text(encoding="utf-8-sig")
        document = yaml.load(text)
    except (OSError, UnicodeDecodeError) as error:
        raise ParseError(f"cannot read: {error}", str(path)) from None
    except YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark else None
        raise ParseError("invalid YAML; nothing was pinned", str(path), line) from None
    if document is None:
        return yaml, CommentedMap(), text if text.endswith("\n") or not text else text + "\n"
    if not isinstance(document, dict):
        raise ParseError("expected a mapping of paper ids or keys to fields", str(path), 1)
    return yaml, document, ""


def _pin(
    document: Any, entries: dict[str, Any], target: str, key: str, names: Iterable[str]
) -> None:
    """Set the paper's ``key:`` in its entry (``entries``: the entries by lower-case name), or
    add one for it."""
    from ruamel.yaml.comments import CommentedMap

    for name in (target, *names):
        entry = entries.get(name.lower())
        if entry is not None:
            entry["key"] = key
            return
    entry = CommentedMap(key=key)
    entry.fa.set_flow_style()
    document[target] = entry
    entries[target.lower()] = entry
