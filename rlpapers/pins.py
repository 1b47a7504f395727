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
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ExportError, ParseError

if TYPE_CHECKING:
    from .model import Paper

HEADER = (
    "# Citation keys pinned by `rlpapers keys --pin`: paper id -> key.\n"
    "# Read like any metadata file: keep it beside the corpus files so the keys travel with them.\n"
)


def pin_corpus(
    files: Iterable[Path],
    keys: Iterable[tuple[str, str, str]],
    papers: Iterable[Paper],
    old: dict[str, str] | None = None,
) -> list[tuple[Path, int]]:
    """Pin every paper's key into a ``keys.yaml`` beside its corpus file or folder (``files``
    as the corpus names them; never into the bundled seeds), from ``keys`` ((id, key, corpus
    file) of every paper), with the keys it had before (``old``: old key -> paper id) as its
    ``old_keys``; returns each file written with its number of keys."""
    from .config import bundled_seeds
    from .ids import paper_id
    from .store.files import KEYS_FILE

    seeds = bundled_seeds().resolve()
    given = {str(p.resolve()): p for p in files}  # a symlink's folder, not its target's
    by_folder: dict[Path, list[Pin]] = {}
    by_id = {p.id: p for p in papers}
    before: dict[str, list[str]] = {}
    for old_key, pid in sorted((old or {}).items()):
        before.setdefault(pid, []).append(old_key)
    for pid, key, file in keys:
        folder = given.get(file, Path(file)).parent
        if folder.resolve() == seeds:
            continue
        # the content id: what a fresh ledger will know this paper by, unless it is the id
        # of another paper here (an abstract kept beside its edited version), which wins; a
        # paper without an abstract (a bibliography entry) is named by its own id
        abstract = by_id[pid].abstract if pid in by_id else ""
        cid = paper_id(abstract) if abstract else pid
        theirs = cid != pid and cid in by_id  # the content id is another paper's id
        target = pid if theirs else cid
        names = (pid, key) if theirs else (pid, cid, key)  # names an entry may have
        by_folder.setdefault(folder, []).append((target, key, names, before.get(pid, [])))
    return [
        (folder / KEYS_FILE, write_keys(folder / KEYS_FILE, pins))
        for folder, pins in by_folder.items()
    ]


#: One paper's pin: the name to write it under, its key, other names its entry may have, and
#: the keys it had before.
Pin = tuple[str, str, tuple[str, ...], list[str]]


def write_keys(path: Path, pins: Iterable[Pin]) -> int:
    """Pin each paper (``Pin``) into the keys.yaml at ``path``; returns how many entries of
    the file set a key."""
    from filelock import FileLock

    from .files import save

    real = Path(os.path.realpath(path))
    lock = FileLock(str(real.parent / f".{real.name}.lock"))
    try:
        lock.acquire()
    except OSError as error:
        raise ExportError(
            f"cannot pin keys into {path}: no lock file can be made beside it "
            f"({error.strerror or error}); nothing was written"
        ) from None
    try:
        yaml, document, before = _load(real)
        shared = Counter(id(e) for e in document.values() if isinstance(e, dict))
        entries: dict[str, tuple[Any, Any]] = {}  # an entry's own mapping, by lower-case name
        aliased: dict[str, tuple[Any, Any]] = {}  # a mapping shared through a YAML alias
        for n, e in document.items():
            if isinstance(e, dict):
                own = shared[id(e)] == 1 and not _anchored(e)
                (entries if own else aliased)[str(n).lower()] = (n, e)
        for pin in pins:
            _pin(document, entries, aliased, pin)
        out = io.StringIO()
        yaml.dump(document, out)
        text = before + out.getvalue()
        _check_comments(real, text)
        save(_as_written(real, text), path, force=True)
    finally:
        lock.release()
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
    document: Any,
    entries: dict[str, tuple[Any, Any]],
    aliased: dict[str, tuple[Any, Any]],
    pin: Pin,
) -> None:
    """Set the paper's ``key:`` (and ``old_keys:``, when it had others) in its entry
    (``entries``: name and mapping by lower-case name, for the entries that are a mapping of
    their own), or add one for it. An entry that shares its mapping with others through a
    YAML alias (``aliased``, ``*defaults``) gets a copy of it, its own: a key set in the
    shared mapping would pin every paper that uses it to one key."""
    from ruamel.yaml.comments import CommentedMap

    target, key, names, old = pin
    found = next((entries[n.lower()] for n in (target, *names) if n.lower() in entries), None)
    if found is None:
        name = next((n for n in (target, *names) if n.lower() in aliased), None)
        if name is not None:
            original, value = aliased.pop(name.lower())
            own = CommentedMap(value)
            own.fa.set_flow_style()
            document[original] = own
            found = entries[name.lower()] = (original, own)
    if found is None:
        entry = CommentedMap()
        entry.fa.set_flow_style()
        document[target] = entry
        found = entries[target.lower()] = (target, entry)
    found[1]["key"] = key
    if old:
        found[1]["old_keys"] = _flow(sorted({*_as_list(found[1].get("old_keys")), *old}))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, str | int) else [str(v) for v in value]


def _flow(items: list[str]) -> Any:
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _as_written(path: Path, text: str) -> str:
    """``text`` with the line endings and byte order mark of the file it replaces (a Windows
    editor's CRLF file stays CRLF, so a diff shows only the changed keys)."""
    try:
        old = path.read_bytes()
    except OSError:
        return text
    if b"\r\n" in old:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return ("\ufeff" + text) if old.startswith(b"\xef\xbb\xbf") else text


def _anchored(entry: Any) -> bool:
    anchor = getattr(entry, "anchor", None)
    return bool(getattr(anchor, "value", None))


#: A comment: ``#`` at a line's start or after white space, outside quotes (approximately:
#: quoted strings are taken out first).
_QUOTED = re.compile(r"'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\"")
_COMMENT = re.compile(r"(?:^|\s)(#.*)$")


def _check_comments(path: Path, text: str) -> None:
    """Refuse to write a keys.yaml that would lose a comment the user wrote (ruamel.yaml keeps
    comments, but not those inside a ``{…}`` mapping written over several lines)."""
    if not path.exists():
        return
    written = path.read_text(encoding="utf-8-sig")
    for number, line in enumerate(written.splitlines(), 1):
        found = _COMMENT.search(_QUOTED.sub("", line))
        if found and found.group(1).strip() not in text:
            raise ParseError(
                "a pin would lose the comment on this line (comments inside a {…} mapping "
                "cannot be kept): write that entry in block style; nothing was pinned",
                str(path),
                number,
            )
