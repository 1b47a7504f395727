"""Ids and keys for a refresh's abstracts, from the identity ledger (``Identities``), and the
metadata overrides' field changes and key claims."""

from __future__ import annotations

import base64
import hashlib
import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ParseWarning
from ..metadata import Override
from .claims import claim_keys, keep_old_keys, merged
from .db import chunks
from .identity import Version, fingerprint, hashes, match_edits
from .join import Joining, remembered
from .ledger import IdentityLedger, PaperState
from .plan import Identity, Item, RecordState
from .records import paper_of, stored_paper

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

    from ..key_format import KeyFormat
    from ..model import Paper
    from .files import FileState


class Refreshing(Protocol):
    """What assigning ids and keys reads of the refresh it serves (``refresh.Refresh``)."""

    con: sqlite3.Connection
    states: list[FileState]
    warned: dict[str, set[str]]

    @property
    def ledger(self) -> IdentityLedger: ...

    def taught(self) -> bool: ...

    @property
    def key_format(self) -> KeyFormat | None: ...

    def rows(self, state_path: str) -> list[dict[str, Any]]: ...

    def prints(self, state_path: str, count: int) -> list[bytes] | None: ...


class Identities(Joining):
    """Ids and keys for the corpus's content ids, from the ledger, given once.

    Everything decided here is read from the ledger (and the corpus as it stands), never from
    the rebuildable records: a cleared index folder or a run over another corpus in between
    gives every paper the same id and key."""

    refresh: Refreshing

    def __init__(
        self,
        refresh: Refreshing,
        items: list[Item],
        previous: dict[str, RecordState],
        files: list[Path],
    ):
        self.refresh = refresh
        self.items = items
        self.previous = previous
        self.ledger = refresh.ledger
        self._prints: dict[str, bytes] = {}
        self._texts: dict[str, dict[str, str]] = {}  # file -> content id -> abstract
        # resolved path -> the corpus path as given (absolute, not a symlink's target): what
        # the ledger keeps, so that a link replaced by a file, or pointed elsewhere, is the
        # same place
        self._given = {str(f.resolve()): os.path.abspath(f) for f in files}
        self._files: dict[str, list[Item]] = {}
        self._first: dict[str, Item] = {}  # content id -> its first copy in corpus order
        self._early: dict[str, str] = {}  # ``join.Joining._early``
        for item in items:
            self._files.setdefault(item.file, []).append(item)
            self._first.setdefault(item.cid, item)

    def assign(
        self, overrides: list[Override], pinned: Sequence[tuple[str, Override]] = ()
    ) -> Identity:
        """Ids and keys; ``pinned`` are (content id, key override) pairs a corpus file gives
        (a bibliography entry's own key), claimed before the metadata's. One decision: on a
        ledger shared between machines, what was read is still true when it is written
        (``IdentityLedger.exclusive``)."""
        with self.ledger.exclusive():
            return self._assign(overrides, pinned)

    def _assign(
        self, overrides: list[Override], pinned: Sequence[tuple[str, Override]]
    ) -> Identity:
        cids = list(dict.fromkeys(item.cid for item in self.items))
        self._learn_from_store()
        known = self.ledger.ids_of(cids)
        biblio = self._biblio()
        kept_joins = remembered(known, biblio)  # entries joined to a text paper before
        rest = [cid for cid in cids if cid not in kept_joins]
        holders = _holders(rest, known, self.ledger)
        new = [cid for cid in rest if cid not in known]
        keyed = self._keyed(pinned, new, set(known.values()))
        unkeyed = [cid for cid in new if cid not in keyed]
        present = {*known.values(), *keyed.values()}
        edits = {**self._edits_of(unkeyed, present, known, biblio), **keyed}
        ids, split = self._ids(rest, known, holders, edits)
        ids.update(kept_joins)
        fresh = {cid for cid in new if cid not in edits}  # no id before this refresh
        joined = self._joins(cids, ids, fresh, biblio, overrides, pinned)
        bases: dict[str, str] = {}
        for item in self.items:
            bases.setdefault(item.cid, item.base)
        with self.ledger.transaction():
            for cid in new:  # a joined entry's content id becomes an alias of its paper
                self.ledger.add_paper(ids[cid], [cid])
            for cid in split:  # its own paper, found again by _fresh_id on the next refresh
                self.ledger.add_paper(ids[cid], [_split_alias(cid)])
            own = {cid: pid for cid, pid in ids.items() if cid not in joined}
            self._note_texts(own, self.ledger.states_of(set(own.values())), biblio)
            early = set(joined.values()) & set(new)
            for cid, key in self._early.items():  # before the entry's key: it becomes old
                if cid in early and self.ledger.holder(key) is None:
                    self.ledger.give_key(ids[cid], key)
            pins = [(ids[cid], override) for cid, override in pinned if cid in ids]
            first = [cid for cid in [*new, *split] if cid not in joined]
            changes = self._overrides(overrides, ids, bases, first, pins)
        keys = self.ledger.keys_of(set(own.values()))
        if lost := sorted(set(own.values()) - keys.keys()):  # its ids row names no paper row
            raise self.ledger.damaged(f"paper {lost[0]} is in table ids but not in table papers")
        return Identity(own, keys, changes, joined=joined)

    def _edits_of(
        self, new: list[str], present: set[str], known: dict[str, str], biblio: set[str]
    ) -> dict[str, str]:
        """``_edits`` of the newcomers. A paper the corpus holds only by bibliography entries
        whose latest text left the corpus (a joined text paper edited, or gone) may be continued
        by a newcomer of a text file, never by another entry."""
        texts = [cid for cid in new if cid not in biblio]
        untexted = self._untexted(known, biblio) if texts else set()
        if not untexted:
            return self._edits(new, present)
        entries = self._edits([cid for cid in new if cid in biblio], present)
        present = {*present, *entries.values()}
        return {**entries, **self._edits(texts, present - untexted)}

    def _ids(
        self,
        cids: list[str],
        known: dict[str, str],
        holders: dict[str, str],
        edits: dict[str, str],
    ) -> tuple[dict[str, str], list[str]]:
        """Content id -> paper id, and the known abstracts whose paper another abstract of the
        corpus holds (each gets a paper of its own)."""
        ids: dict[str, str] = {}
        owner: dict[str, str] = dict(holders)
        split: list[str] = []
        for cid in cids:
            if cid in known and holders[known[cid]] != cid:
                pid = self._fresh_id(cid, owner)
                split.append(cid)
            else:
                pid = known.get(cid) or edits.get(cid) or cid
            owner[pid] = cid
            ids[cid] = pid
        return ids, split

    def _keyed(
        self, pinned: Sequence[tuple[str, Override]], new: list[str], present: set[str]
    ) -> dict[str, str]:
        """Newcomer content id -> the paper its file's own key names, where that paper is
        absent from the corpus and either may have left a file of it (as for an edit) or had
        a text like this one (a library exported by rlpapers and read back as another
        corpus): the entry is that paper. Otherwise the key is claimed later, and a key the
        ledger gives another paper is an error."""
        candidates: dict[str, str] = {}
        newcomers = set(new)
        for cid, override in pinned:
            if cid in newcomers and cid not in candidates:
                holder = self.ledger.resolve(str(override.values["key"]))
                if holder is not None and holder not in present:
                    candidates[cid] = holder
        if not candidates:
            return {}
        left = {v.ref for v in self.ledger.absent(present, self._may_have_left())}
        texts = {v.ref: v for v in self.ledger.absent(present, lambda file, stamp: True)}
        out: dict[str, str] = {}
        for cid, holder in candidates.items():
            if holder in out.values():
                continue
            like = holder in texts and match_edits(self._versions([cid]), [texts[holder]])
            if holder in left or (like and like.get(cid) == holder):
                out[cid] = holder
        return out

    def _learn_from_store(self) -> None:
        """A ledger written before it kept fingerprints learns them from the stored records,
        while they still hold each paper's previous text (once; a ledger that has them all
        asks nothing more)."""
        if not self.previous or self.refresh.taught():
            return
        states = self.ledger.states_of(list(self.previous))
        missing = [pid for pid, state in states.items() if not state.printed]
        if not missing:
            return
        from ..ids import paper_id

        texts = _stored(self.refresh, missing)
        with self.ledger.transaction():
            for pid, abstract in texts.items():
                record = self.previous[pid]
                cid = paper_id(abstract)
                file = self._given.get(record.file, record.file)
                self.ledger.note_text(pid, cid, fingerprint(abstract), file, record.ordinal)

    def _edits(self, new: list[str], present: set[str]) -> dict[str, str]:
        """Newcomer content id -> the paper it continues: one the ledger knows that is absent
        and last stood in a file of this corpus, or in a file that is gone (renamed, deleted).
        A paper whose file still stands outside this corpus lives in another corpus sharing
        the ledger: an edited copy of it here is a paper of its own."""
        if not new:
            return {}
        absent = self.ledger.absent(present, self._may_have_left())
        if not absent:
            return {}
        return match_edits(self._versions(new), absent)

    def _may_have_left(self) -> Callable[[str, str | None], bool]:
        """Whether a paper may have left its last file (by the file and its stamp then): it is
        a file of this corpus, or gone, or changed since the paper was seen in it. An unchanged
        file elsewhere still holds it: it lives in another corpus sharing the ledger."""
        ours = {*self._given.values(), *self._given}  # every corpus file, as given or resolved

        def where(file: str, stamp: str | None) -> bool:
            return file in ours or stamp is None or _stamp_of(file) != stamp

        return where

    def _versions(self, cids: Iterable[str]) -> list[Version]:
        return [
            Version(cid, item.file, item.ordinal, hashes(self._print(item)))
            for cid, item in ((cid, self._first[cid]) for cid in cids)
        ]

    def _print(self, item: Item) -> bytes:
        """The identity fingerprint of an abstract of the corpus: as its parse stored it, else
        made now from its text (only the abstracts that need one are read)."""
        if item.cid not in self._prints:
            mine = self._files[item.file]
            stored = self.refresh.prints(item.file, len(mine))
            if stored is not None:
                for other, print_ in zip(mine, stored, strict=True):
                    self._prints.setdefault(other.cid, print_)
            else:
                if item.file not in self._texts:
                    rows = self.refresh.rows(item.file)
                    self._texts[item.file] = {r["id"]: r["abstract"] for r in rows}
                self._prints[item.cid] = fingerprint(self._texts[item.file][item.cid])
        return self._prints[item.cid]

    def _note_texts(
        self, ids: dict[str, str], states: dict[str, PaperState], biblio: set[str]
    ) -> None:
        """Tell the ledger each paper's latest text and place, where they changed. An entry
        without an abstract that holds a paper with a text (a joined text paper gone or
        edited) leaves the text as it was: an edited text paper may come back to it."""
        stamps = {s.path: f"{s.size}:{s.mtime_ns}" for s in self.refresh.states}
        for cid, pid in ids.items():
            item = self._first[cid]
            state = states.get(pid)
            file, stamp = self._given.get(item.file, item.file), stamps.get(item.file)
            if state is not None and state.cid != cid and cid in biblio and state.printed:
                if not self._print(item):
                    continue
            if state is None or state.cid != cid or not state.printed:
                self.ledger.note_text(pid, cid, self._print(item), file, item.ordinal, stamp)
            elif (state.file, state.ordinal, state.stamp) != (file, item.ordinal, stamp):
                self.ledger.note_place(pid, file, item.ordinal, stamp)

    def _fresh_id(self, cid: str, owner: dict[str, str]) -> str:
        """A paper id of its own for an abstract whose paper another abstract of the corpus
        holds (an abstract and its edited version, both kept): the one the ledger gave it
        before, else a new one made from the content id."""
        alias = _split_alias(cid)
        given = self.ledger.ids_of([alias]).get(alias)
        if given and given not in owner:
            return given
        n = 1
        while True:
            digest = hashlib.sha1(f"{cid}/{n}".encode()).digest()
            pid = base64.b32encode(digest).decode("ascii").lower()[:10]
            if pid not in owner and self.ledger.resolve(pid) is None:
                return pid
            n += 1

    # --- metadata overrides -------------------------------------------------------------------

    def _overrides(
        self,
        overrides: list[Override],
        ids: dict[str, str],
        bases: dict[str, str],
        new: list[str],
        pins: list[tuple[str, Override]],
    ) -> dict[str, dict[str, Any]]:
        present = set(ids.values())
        resolved: list[tuple[str, Override]] = list(pins)
        later: list[Override] = []
        for override in overrides:
            pid = self._target(override.target, present)
            if pid is None:
                later.append(override)
            else:
                resolved.append((pid, override))
        claim_keys(self.ledger, resolved)
        current = self.ledger.keys_of(list(present))
        bases = self._first_keys([c for c in new if not current.get(ids[c])], ids, bases, resolved)
        for cid in new:  # newcomers in corpus order get the first free form of their base key
            pid = ids[cid]
            if not current.get(pid):
                self.ledger.give_key(pid, self.ledger.free_key(bases[cid]))
        keep_old_keys(self.ledger, resolved)  # before the rest: an entry may name an old key
        more = self._resolve_later(later, present)
        claim_keys(self.ledger, more)
        keep_old_keys(self.ledger, more)
        fields = merged(resolved + more, warn=True)
        return {
            pid: {k: v for k, v in values.items() if k not in ("key", "old_keys")}
            for pid, values in fields.items()
        }

    def _resolve_later(
        self, later: list[Override], present: set[str]
    ) -> list[tuple[str, Override]]:
        """The overrides that named no paper before keys were given, now resolved; one that
        still names none is warned about once per version of its file."""
        more = []
        for override in later:
            pid = self._target(override.target, present)
            if pid is None:
                warned = self.refresh.warned.setdefault(override.source, set())
                if override.target not in warned:
                    warned.add(override.target)
                    message = f"no paper with id or key {override.target!r}, ignored"
                    warnings.warn(
                        ParseWarning(f"{override.source}:{override.line}: {message}"),
                        stacklevel=2,
                    )
            else:
                more.append((pid, override))
        return more

    def _first_keys(
        self,
        new: list[str],
        ids: dict[str, str],
        bases: dict[str, str],
        resolved: list[tuple[str, Override]],
    ) -> dict[str, str]:
        """Content id -> base key: the parse's (the default rule), unless the config sets a key
        format, or metadata naming the paper by id gives it a title, year or name, which the
        rule then sees (``keys.first_key``)."""
        from ..keys import KEY_FIELDS, first_key

        fmt = self.refresh.key_format
        fields = {
            pid: values
            for pid, values in merged(resolved, warn=False).items()
            if any(name in values for name in KEY_FIELDS)
        }
        todo = [cid for cid in new if fmt is not None or ids[cid] in fields]
        if not todo:
            return bases
        out = dict(bases)
        for cid, draft in self._drafts(todo).items():
            out[cid] = first_key(draft, fields.get(ids[cid], {}), fmt)
        return out

    def _drafts(self, cids: list[str]) -> dict[str, Paper]:
        """The parsed papers of these content ids (their first copies), read file by file."""
        wanted: dict[str, set[str]] = {}
        for cid in cids:
            wanted.setdefault(self._first[cid].file, set()).add(cid)
        out: dict[str, Paper] = {}
        for file, mine in wanted.items():
            for row in self.refresh.rows(file):
                if row["id"] in mine:
                    out.setdefault(row["id"], stored_paper(row))
        return out

    def _target(self, target: str, present: set[str]) -> str | None:
        ref = target.strip()
        pid = ref.lower() if ref.lower() in present else self.ledger.resolve(ref)
        return pid if pid in present else None


def _holders(cids: list[str], known: dict[str, str], ledger: IdentityLedger) -> dict[str, str]:
    """Paper id -> the content id that keeps it, for the papers the corpus's known abstracts
    claim. Where several abstracts claim one paper (an abstract and its edited version, both
    kept), the one the paper last had keeps it, wherever the files stand in the corpus order.
    A ledger from before it kept each paper's latest text knows which of them was given a
    paper of its own (``_split_alias``); failing both, the first keeps it."""
    claims: dict[str, list[str]] = {}
    for cid in cids:
        if cid in known:
            claims.setdefault(known[cid], []).append(cid)
    disputed = {pid: found for pid, found in claims.items() if len(found) > 1}
    out = {pid: found[0] for pid, found in claims.items()}
    if not disputed:
        return out
    states = ledger.states_of(list(disputed))
    own = ledger.ids_of(_split_alias(cid) for found in disputed.values() for cid in found)
    for pid, found in disputed.items():
        latest = states.get(pid, _NO_STATE).cid
        unsplit = [cid for cid in found if own.get(_split_alias(cid), pid) == pid]
        out[pid] = latest if latest in found else (unsplit or found)[0]
    return out


_NO_STATE = PaperState(None, None, None, False)


def _stored(refresh: Refreshing, ids: list[str]) -> dict[str, str]:
    """Abstracts of stored records, by id."""
    out = {}
    for part in chunks(ids):
        marks = ",".join("?" * len(part))
        for pid, data in refresh.con.execute(
            f"SELECT id, data FROM records WHERE id IN ({marks})", part
        ):
            out[pid] = paper_of(data).abstract
    return out


def _stamp_of(file: str) -> str | None:
    """A file's size and mtime, as the ledger keeps them; None if it is gone."""
    try:
        st = os.stat(file)
    except OSError:
        return None
    return f"{st.st_size}:{st.st_mtime_ns}"


def _split_alias(cid: str) -> str:
    """The ledger's name for the paper an abstract got of its own when another abstract of the
    corpus held the paper its content id points to (``Identities._fresh_id``)."""
    return f"{cid}/own"
