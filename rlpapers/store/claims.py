"""Keys that metadata and bibliography files give papers: a ``key:`` claimed as the paper's
current key, and ``old_keys:`` kept as keys the paper had before (a ``keys.yaml`` pinned on
another machine carries them, so a draft citing an old key, or a metadata entry naming one,
still finds the paper on a fresh data folder)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ParseError, ParseWarning
from ..keys import SAFE_KEY, SAFE_KEY_TEXT
from ..metadata import Override
from .ledger import IdentityLedger

if TYPE_CHECKING:
    from .files import FileState


def merged(pairs: list[tuple[str, Override]], warn: bool) -> dict[str, dict[str, Any]]:
    """Paper id -> the fields its overrides set, later files winning; with ``warn``, two
    overrides that set one field of one paper differently are named in a warning."""
    out: dict[str, dict[str, Any]] = {}
    origin: dict[tuple[str, str], Override] = {}
    for pid, override in pairs:
        values = out.setdefault(pid, {})
        for name, value in override.values.items():
            earlier = origin.get((pid, name))
            if warn and earlier is not None and values[name] != value:
                message = (
                    f"{override.source}:{override.line}: sets {name} of paper {pid} to "
                    f"{value!r}, but {earlier.source}:{earlier.line} sets {values[name]!r}; "
                    f"using {value!r}"
                )
                warnings.warn(ParseWarning(message), stacklevel=2)
            values[name] = value
            origin[(pid, name)] = override
    return out


def claim_keys(ledger: IdentityLedger, pairs: list[tuple[str, Override]]) -> None:
    """Give each paper the key its overrides set (the last that sets one); a key another
    paper has or had is a ``ParseError`` naming the override."""
    # the override each paper's key comes from, found in one pass: a corpus of bibliography
    # files pins every paper's key
    sources = {pid: o for pid, o in pairs if "key" in o.values}
    current = ledger.keys_of(list(sources))
    for pid, values in merged(pairs, warn=False).items():
        key = values.get("key")
        if not key or current.get(pid) == key:  # the paper's key already: nothing to claim
            continue
        source = sources[pid]
        if not SAFE_KEY.fullmatch(key):
            raise ParseError(
                f"key {key!r} is not a safe citation key: use {SAFE_KEY_TEXT}",
                source.source,
                source.line,
            )
        holder = ledger.holder(key)
        if holder is not None and holder != pid:
            held = ledger.keys_of([holder]).get(holder, "")
            raise ParseError(
                f"key {key!r} already belongs to paper {holder} (now keyed {held!r}); "
                "a key once given never moves to another paper: choose another",
                source.source,
                source.line,
            )
        named = ledger.resolve(key)  # an id wins over a key in lookups: it would hide the key
        if named is not None and named != pid:
            raise ParseError(
                f"key {key!r} is an id of paper {named}: a key must not name another paper; "
                "choose another",
                source.source,
                source.line,
            )
        ledger.give_key(pid, key)


def keep_old_keys(ledger: IdentityLedger, pairs: list[tuple[str, Override]]) -> None:
    """Make each ``old_keys:`` entry an old key of its paper (it finds the paper, no export
    prints it) where no paper has had it; one another paper has or had stays that paper's,
    with a warning naming the override. Called once every paper has its current key."""
    wanted = [(pid, o) for pid, o in pairs if o.values.get("old_keys")]
    if not wanted:
        return
    current = ledger.keys_of([pid for pid, _ in wanted])
    for pid, override in wanted:
        for old in override.values["old_keys"]:
            holder = ledger.holder(old)
            if holder == pid or not current.get(pid):
                continue
            if holder is not None:
                message = (
                    f"{override.source}:{override.line}: old key {old!r} of paper {pid} "
                    f"belongs to paper {holder} here; it stays that paper's"
                )
                warnings.warn(ParseWarning(message), stacklevel=2)
                continue
            ledger.give_key(pid, old)  # the old key, then the current one again: the old
            ledger.give_key(pid, current[pid])  # one stays the paper's as an old key


def file_keys(
    corpus: list[FileState], rows: Callable[[str], list[dict[str, Any]]]
) -> list[tuple[str, Override]]:
    """(content id, a ``key`` override) for each paper a bibliography file of ``corpus`` gives
    its own key (``rows``: a file's parse rows, by path): the key is the paper's as if pinned.
    Two places giving one key to two papers are a ``ParseError`` naming both."""
    from ..readers import format_of
    from ..readers.record import named_by_key_alone

    out: list[tuple[str, Override]] = []
    given: dict[str, tuple[str, str, str]] = {}  # key -> (content id, where, who)
    for state in corpus:
        if format_of(state.name) is None:
            continue
        for row in rows(state.path):
            key, line = row.get("key"), row.get("line")
            if not isinstance(key, str) or not key:
                continue
            line = line if isinstance(line, int) else 0
            who = named_by_key_alone(row, key)
            first = given.setdefault(key, (row["id"], f"{state.name}:{line}", who))
            if first[0] != row["id"] or (who and first[2] and who != first[2]):
                raise ParseError(
                    f"key {key!r} is given to two papers, here and at {first[1]}; a key "
                    "names one paper: change one of them",
                    state.name,
                    line or None,
                )
            out.append((row["id"], Override(row["id"], {"key": key}, state.name, line)))
    return out
