"""The one rule for finding a paper by what a user typed.

In order: an exact id, an exact key (case-insensitive), a unique id prefix of at least
``MIN_PREFIX`` characters, then any id or key the paper had before (the identity ledger keeps
them). Ids are compared in lower case. A reference that names nothing gets the closest keys as a
did-you-mean. ``Lookup`` says how to ask a store; the rule is written once, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .errors import NotFoundError
from .model import Paper
from .refs import shown

MIN_PREFIX = 4
SUGGEST_FOR = 20  # unknown references that get a did-you-mean; the rest are only counted


class Lookup:
    """What the rule needs from a store of records. Subclasses answer the questions."""

    def by_id(self, ref: str) -> Paper | None:
        raise NotImplementedError

    def by_key(self, ref: str) -> Paper | None:
        raise NotImplementedError

    def by_prefix(self, ref: str) -> list[Paper]:
        """Up to two papers whose id starts with ``ref``."""
        raise NotImplementedError

    def by_former(self, ref: str) -> Paper | None:
        """The paper that once had this id or key."""
        return None

    def ids_and_keys(self) -> Iterator[tuple[str, str]]:
        raise NotImplementedError

    def many(self, ids: list[str]) -> dict[str, Paper]:
        raise NotImplementedError

    # --- the rule -----------------------------------------------------------------------------

    def get(self, ref: str) -> Paper:
        ref = ref.strip()
        low = ref.lower()
        paper = self.by_id(low) or self.by_key(ref)
        if paper is None and len(low) >= MIN_PREFIX:
            found = self.by_prefix(low)
            if len(found) > 1:
                raise NotFoundError(f"{shown(ref)!r} is ambiguous: it starts more than one id")
            paper = found[0] if found else None
        paper = paper or self.by_former(ref)
        if paper is None:  # quoted by its start: a reference may be a pasted page
            raise NotFoundError(not_found_message(shown(ref), self.suggest(ref)))
        return paper

    def suggest(self, ref: str) -> str | None:
        keys = [key for _, key in self.ids_and_keys()]
        return closest_key(ref, keys)


def not_found_message(ref: str, suggestion: str | None) -> str:
    hint = f'; did you mean "{suggestion}"?' if suggestion else ""
    if not hint and 0 < len(ref) < MIN_PREFIX and ref.isalnum():
        hint = f" (an id prefix needs at least {MIN_PREFIX} characters)"
    return f"no paper with id or key {ref!r}{hint}"


def closest_key(ref: str, keys: list[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(ref.strip().lower(), keys, n=1, cutoff=0.6)
    return found[0] if found else None


def resolve_many(
    lookup: Lookup, refs: Iterable[str]
) -> tuple[list[Paper], list[tuple[str, str | None]]]:
    """Resolve many references by the same rule in near-linear time: the ids and keys are read
    once, prefixes are found by bisection. Papers come back in the order first asked, each once;
    unknown references come back with a did-you-mean for the first ``SUGGEST_FOR``."""
    by_id: dict[str, str] = {}
    by_key: dict[str, str] = {}
    for known, key in lookup.ids_and_keys():
        by_id[known] = known
        by_key.setdefault(key.lower(), known)
    ordered = sorted(by_id)
    wanted: dict[str, None] = {}
    unknown: list[str] = []
    for ref in refs:
        ref = ref.strip()
        low = ref.lower()
        pid = by_id.get(low) or by_key.get(low) or _unique_prefix(ordered, low)
        if pid is None:
            former = lookup.by_former(ref)
            pid = former.id if former else None
        if pid is None:
            unknown.append(ref)
        else:
            wanted.setdefault(pid)
    found = lookup.many(list(wanted))
    papers = [found[pid] for pid in wanted if pid in found]
    keys = list(by_key)
    named = [
        (ref, closest_key(ref, keys) if n < SUGGEST_FOR else None) for n, ref in enumerate(unknown)
    ]
    return papers, named


def _unique_prefix(ordered: list[str], ref: str) -> str | None:
    if len(ref) < MIN_PREFIX:
        return None
    import bisect

    at = bisect.bisect_left(ordered, ref)
    hits = [pid for pid in ordered[at : at + 2] if pid.startswith(ref)]
    return hits[0] if len(hits) == 1 else None


class MemoryLookup(Lookup):
    """The rule over papers held in memory (``load_corpus``)."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        self.papers = {p.id: p for p in papers}
        self.keys = {p.key.lower(): p for p in self.papers.values()}

    def by_id(self, ref: str) -> Paper | None:
        return self.papers.get(ref)

    def by_key(self, ref: str) -> Paper | None:
        return self.keys.get(ref.lower())

    def by_prefix(self, ref: str) -> list[Paper]:
        return [p for pid, p in self.papers.items() if pid.startswith(ref)][:2]

    def ids_and_keys(self) -> Iterator[tuple[str, str]]:
        return ((p.id, p.key) for p in self.papers.values())

    def many(self, ids: list[str]) -> dict[str, Paper]:
        return {pid: self.papers[pid] for pid in ids if pid in self.papers}
