"""Re-keying on request, and the old keys it leaves behind.

A key, once given, stays: a new rule or a user's key format applies to papers first seen after
it. ``rlpapers keys --rederive`` shows what the rule (or format) would give each paper whose key
is not pinned (no ``key:`` in a metadata file names it), and ``--apply`` gives those keys. The
key a paper had becomes an old key (the ledger's ``old_keys``): it still finds the paper
wherever a key is accepted (``show``, ``--ids``, ``similar``, ``key:`` in a query), and no
export ever prints it. A new key is never one that another paper holds or once held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .key_format import KeyFormat
    from .model import Paper
    from .querylang import Lexeme
    from .store import Store
    from .store.ledger import IdentityLedger


@dataclass(frozen=True)
class Rekey:
    """A paper's key now, and the one the rule would give it."""

    id: str
    old: str
    new: str


def proposals(
    papers: Iterable[Paper],
    pinned: set[str],
    holder: Callable[[str], str | None],
    format: KeyFormat | None = None,
) -> list[Rekey]:
    """The papers, in the order given, whose key the rule (or ``format``) would change: each
    unpinned paper's base key from its record (metadata title, year and name included), or the
    first free form of it (b, c, …). ``holder`` tells which paper holds or once held a key; a
    paper may take back a key it held before."""
    from .keys import base_key, key_suffix

    proposed: set[str] = set()  # lower-case keys given in this run
    out = []
    for paper in papers:
        if paper.id in pinned or not paper.key:
            continue
        base = base_key(paper, format)
        n = 0
        while True:
            candidate = base + key_suffix(n)
            n += 1
            if candidate.lower() == paper.key.lower():
                break
            if candidate.lower() not in proposed and holder(candidate) in (None, paper.id):
                break
        proposed.add(candidate.lower())
        if candidate.lower() != paper.key.lower():
            out.append(Rekey(paper.id, paper.key, candidate))
    return out


def with_current_keys(
    query: str, lexemes: Sequence[Lexeme], current: Callable[[str], str | None]
) -> str:
    """``query`` with each ``key:OLD`` word (``+key:``, ``-key:`` too) naming an old key
    replaced by the paper's current key (``current``: old key -> current key, or None), read
    from the query's ``lexemes``: a wildcard, a phrase or a key inside a phrase is left as
    written."""
    out = query
    for lexeme in reversed(lexemes):  # from the end, so earlier positions stay right
        field, _, value = lexeme.text.lstrip("+-").partition(":")
        if lexeme.kind != "word" or field.lower() != "key" or not value:
            continue
        now = None if any(char in value for char in "*?~") else current(value)
        if now:
            end = lexeme.pos + len(lexeme.text)
            out = out[: end - len(value)] + now + out[end:]
    return out


def pinned(store: Store) -> set[str]:
    """The papers whose key a metadata file sets (``key:``, as ``keys --pin`` writes it) or a
    bibliography entry gives (its own key, as if pinned)."""
    from .metadata import read_metadata
    from .readers import format_of, read_file

    out = set()
    for path in store.metadata:
        if not path.is_file():
            continue
        for override in read_metadata(path).overrides:
            if "key" in override.values:
                pid = store.ledger.resolve(override.target.strip())
                if pid is not None:
                    out.add(pid)
    for path in store.files:
        if format_of(path.name) is not None and path.is_file():
            for paper in read_file(path, store.encoding):
                pid = store.ledger.resolve(paper.id) if paper.key else None
                if pid is not None:
                    out.add(pid)
    return out


def rederive(store: Store, apply: bool = False) -> list[Rekey]:
    """What re-keying would change in this corpus (``proposals``), by the store's key format
    or the default rule; with ``apply``, the new keys are given in one ledger transaction
    (the old ones become old keys) and the records are finished again with them."""
    papers = list(store.papers())
    skip = pinned(store)
    ledger = store.ledger
    if not apply:
        return proposals(papers, skip, ledger.holder, store.key_format)
    with ledger.transaction():  # holders cannot change under it
        found = proposals(papers, skip, ledger.holder, store.key_format)
        for change in found:
            ledger.give_key(change.id, change.new)
    if found:
        store.refresh(force=True)
    return found


def current_keys_in(query: str, lexemes: Sequence[Lexeme], ledger: IdentityLedger) -> str:
    """``query`` with each ``key:OLD`` naming the paper's current key (``with_current_keys``),
    as the ledger knows them."""

    def current(old: str) -> str | None:
        pid = ledger.holder(old)
        if pid is None:
            return None
        now = ledger.keys_of([pid]).get(pid) or ""
        return now if now and now.lower() != old.lower() else None

    return with_current_keys(query, lexemes, current)
