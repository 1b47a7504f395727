"""Finishing parsed records: copies of one abstract merged, ids, keys and metadata changes applied,
one record at a time in corpus order (so a corpus is finished as a stream)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import Paper


def finish(papers: list[Paper]) -> list[Paper]:
    """Merge copies and give keys to papers seen on their own, with no ledger (``rlpapers
    parse``): a preview of what the store will give them, not a promise."""
    from ..keys import base_key, keys_from_bases

    groups: dict[str, list[Paper]] = {}
    for paper in papers:
        groups.setdefault(paper.id, []).append(paper)
    merged = {pid: merge_copies(copies) for pid, copies in groups.items() if len(copies) > 1}
    # a bibliography entry's own key is its key (the store pins it)
    firsts = {pid: merged.get(pid, copies[0]) for pid, copies in groups.items()}
    bases = {pid: paper.key or base_key(paper) for pid, paper in firsts.items()}
    finisher = Finisher(keys_from_bases(bases), merged, {}, {})
    return [done for paper in papers if (done := finisher(paper)) is not None]


@dataclass
class Finisher:
    """Finishes records one at a time, in corpus order.

    Called with each parsed paper (by content id), it returns the finished record — its paper
    id (``ids``, default: the content id), key, merged copies and metadata changes — or None for
    a later copy of an abstract already returned (copies merge into the first).
    """

    keys: dict[str, str]
    merged: dict[str, Paper]
    changes: dict[str, dict[str, Any]]
    ids: dict[str, str]
    emitted: set[str] = field(default_factory=set)

    def __call__(self, paper: Paper) -> Paper | None:
        cid = paper.id
        if cid in self.merged:
            if cid in self.emitted:
                return None
            self.emitted.add(cid)
            paper = self.merged[cid]
        changes = self.changes.get(cid, {})
        if "title" in changes:
            changes = {**changes, "title_derived": False}  # the user gave it: no longer a guess
        return paper.with_changes(id=self.ids.get(cid, cid), key=self.keys[cid], **changes)


def merge_copies(copies: list[Paper]) -> Paper:
    """Copies of one abstract in several places, as one record listing every place. A field
    the first copy lacks is taken from a later one (a bibliography entry's real title, year,
    venue, links and tags for a text file's abstract)."""
    first = copies[0]
    for other in copies[1:]:
        first = first.with_changes(
            authors=first.authors or other.authors,
            authors_truncated=first.authors_truncated if first.authors else other.authors_truncated,
            categories=first.categories or other.categories,
            topic=first.topic or other.topic,
            sources=first.sources + tuple(s for s in other.sources if s not in first.sources),
            **_richer(first, other),
        )
    return first


def _richer(first: Paper, other: Paper) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if first.title_derived and other.title and not other.title_derived:
        out.update(title=other.title, title_derived=False)
    for name in ("year", "venue", "url", "doi", "note"):
        if not getattr(first, name) and getattr(other, name):
            out[name] = getattr(other, name)
    if other.tags and other.tags != first.tags:
        out["tags"] = tuple(dict.fromkeys(first.tags + other.tags))
    return out
