"""One refresh of the record store: hash, parse, identify, finish, write (see ``store``)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ParseError, ParseWarning
from ..keys import SAFE_KEY, SAFE_KEY_TEXT
from ..metadata import Metadata, Override, read_metadata
from ..model import Paper
from ..parse import PARSER_VERSION
from ..text import shown
from . import paper_of, stored_paper
from .db import Garbled, chunks, loads, strings, transaction
from .files import CORPUS, FileState, read_bytes
from .finish import Finisher, merge_copies
from .identity import Version, fingerprint, hashes, match_edits
from .ledger import Ledger, PaperState
from .parsing import parse_many, unpack, unpack_prints

#: A refresh that parses at most this much text keeps what it parsed in memory (an edited file).
KEEP_PARSED_BYTES = 16_000_000

if TYPE_CHECKING:
    from . import Store


@dataclass
class Item:
    """One parsed abstract in corpus order."""

    cid: str  # content id
    base: str  # the key it would get
    file: str
    fpos: int
    ordinal: int


@dataclass(frozen=True)
class Copies:
    """Where the copies of each abstract are, for telling whether a file's records can change."""

    count: Counter[str]  # content id -> how many copies the corpus holds
    first: dict[str, Item]  # content id -> its first copy, where its record lives
    reordered: bool  # a file moved in the corpus order: merged copies may list another order


class RecordState(NamedTuple):
    """What the store knew of a record before this refresh (a named tuple: one is made for every
    record on every refresh, and a frozen dataclass costs several times as much to make)."""

    key: str
    file: str
    ordinal: int
    copies: int
    digest: str


@dataclass
class Identity:
    """Paper id and key of every content id of the corpus, and the overrides' field changes."""

    ids: dict[str, str]  # content id -> paper id
    keys: dict[str, str]  # paper id -> key
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)  # paper id -> fields
    # the changes are those the stored records were finished with (their digest is the one the
    # last refresh stored): a paper's changes then need not be applied again to keep its record
    same_changes: bool = False

    @property
    def changes_digest(self) -> str:
        text = json.dumps(self.changes, sort_keys=True, ensure_ascii=False, default=list)
        return hashlib.sha1(text.encode("utf-8")).hexdigest()


class Refresh:
    def __init__(self, store: Store, states: list[FileState]) -> None:
        self.store = store
        self.con: sqlite3.Connection = store.con
        self.states = states
        self.before = {row[0]: FileState(*row) for row in self.con.execute("SELECT * FROM files")}
        # A small refresh (an edited file) keeps in memory what a big one reads back one file at
        # a time: the rows it just parsed, and each re-parsed file's previous rows by content id
        # (an abstract whose row is as it was, in the same place, keeps its stored record).
        self.fresh: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.old_rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._metadata: dict[str, Metadata] = {}
        # metadata entries that named no paper and were warned about, per metadata file: each
        # is named once per version of its file, not on every refresh
        self.warned: dict[str, set[str]] = {}

    def run(self) -> None:
        # a new parser may give other titles and names: no stored record can be kept as it is
        self.new_parser = self.store._meta("parser") != PARSER_VERSION
        if self.new_parser:
            with transaction(self.con):
                self.con.execute("DELETE FROM parses")
                self.con.execute("DELETE FROM prints")
        self._hash()
        self._parse_missing()
        corpus = [s for s in self.states if s.kind == CORPUS]
        headers = self._headers(corpus)
        items = [
            Item(cid, base, s.path, s.position, n)
            for s in corpus
            for n, (cid, base) in enumerate(zip(*headers[s.path], strict=True))
        ]
        previous = {
            row[0]: RecordState(*row[1:])
            for row in self.con.execute(
                "SELECT id, key, file, ordinal, copies, digest FROM records"
            )
        }
        overrides = [o for s in self.states if s.kind != CORPUS for o in self.metadata(s).overrides]
        identity = Identities(self, items, previous).assign(overrides)
        identity.same_changes = identity.changes_digest == self.store._meta("changes")
        self._write(corpus, items, previous, identity)

    # --- files --------------------------------------------------------------------------------

    def _hash(self) -> None:
        """Fill in each file's hash; a file whose stat is unchanged keeps its recorded hash.
        No bytes are kept: a file that must be parsed is read again then, one at a time."""
        hashed = []
        for state in self.states:
            old = self.before.get(state.path)
            if old is not None and (old.size, old.mtime_ns) == (state.size, state.mtime_ns):
                hashed.append(state._replace(sha1=old.sha1))
                continue
            try:
                hashed.append(state.hashed(read_bytes(state.path)))
            except ParseError:
                if os.path.exists(state.path):
                    raise
                _vanished(state.path)
        self.states = hashed

    def _encodings(self) -> dict[str, str]:
        """Each corpus file's explicit encoding ('' where it is detected): the store's own
        (``--encoding``), else the file's metadata sidecar, else its folder's metadata.yaml."""
        from pathlib import Path

        from ..metadata import encoding_for

        if self.store.encoding:
            return {s.path: self.store.encoding for s in self.states if s.kind == CORPUS}
        metadata = {
            Path(s.path): self.metadata(s).encoding for s in self.states if s.kind != CORPUS
        }
        return {
            s.path: encoding_for(Path(s.path), metadata) or ""
            for s in self.states
            if s.kind == CORPUS
        }

    def _parse_missing(self) -> None:
        encodings = self._encodings()
        have = set(self.con.execute("SELECT sha1, name, encoding FROM parses"))
        todo = [
            s
            for s in self.states
            if s.kind == CORPUS and (s.sha1, s.name, encodings[s.path]) not in have
        ]
        todo = list({(s.sha1, s.name): s for s in todo}.values())
        gone = {s.path for s in todo if not os.path.exists(s.path)}
        for path in gone:  # since it was hashed: its records go until it is back
            _vanished(path)
        todo = [s for s in todo if s.path not in gone]
        self.states = [s for s in self.states if s.path not in gone]
        if not todo:
            return
        size = sum(s.size for s in todo)
        keep = size <= KEEP_PARSED_BYTES
        jobs = (
            (
                read_bytes(s.path),
                shown(s.name),  # the records' source, escaped for a terminal
                self._known_titles(s, keep),
                encodings[s.path] or None,
                keep,
            )
            for s in todo
        )
        for state, parsed in zip(todo, parse_many(jobs, len(todo), size), strict=True):
            for message in parsed.warnings:
                warnings.warn(ParseWarning(message), stacklevel=2)
            if parsed.rows is not None:
                self.fresh[(state.sha1, state.name)] = parsed.rows
            with transaction(self.con):
                self.con.execute(
                    "INSERT OR REPLACE INTO parses VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (state.sha1, state.name, encodings[state.path], *parsed.stored),
                )
                if parsed.prints:
                    self.con.execute(
                        "INSERT OR REPLACE INTO prints VALUES (?, ?, ?)",
                        (state.sha1, state.name, parsed.prints),
                    )

    def _known_titles(self, state: FileState, keep: bool) -> dict[str, tuple[str, str]]:
        """(name, title) of the abstracts this file held before: an edit re-derives only the new.
        With ``keep``, the previous rows are kept too (``old_rows``)."""
        old = self.before.get(state.path)
        if old is None:
            return {}
        row = self.con.execute(
            "SELECT rows FROM parses WHERE sha1 = ? AND name = ?", (old.sha1, state.name)
        ).fetchone()
        if not row:
            return {}
        rows = unpack(row[0])
        if keep:
            self.old_rows[state.path] = {r["id"]: r for r in rows}
        return {r["id"]: (r["name"], r["title"]) for r in rows}

    def _headers(self, corpus: list[FileState]) -> dict[str, tuple[list[str], list[str]]]:
        out = {}
        for state in corpus:
            ids, bases = self.con.execute(
                "SELECT ids, bases FROM parses WHERE sha1 = ? AND name = ?",
                (state.sha1, state.name),
            ).fetchone()
            out[state.path] = (
                strings(loads(ids, list, "parse ids"), "parse ids"),
                strings(loads(bases, list, "parse keys"), "parse keys"),
            )
        return out

    def rows(self, state_path: str) -> list[dict[str, Any]]:
        state = next(s for s in self.states if s.path == state_path)
        if (state.sha1, state.name) in self.fresh:
            return self.fresh[(state.sha1, state.name)]
        (rows,) = self.con.execute(
            "SELECT rows FROM parses WHERE sha1 = ? AND name = ?", (state.sha1, state.name)
        ).fetchone()
        return list(unpack(rows))

    def metadata(self, state: FileState) -> Metadata:
        """A metadata file's encoding and overrides: as stored while its hash is the same, else
        read (once per refresh) and stored."""
        if state.path in self._metadata:
            return self._metadata[state.path]
        row = self.con.execute(
            "SELECT sha1, data, warned FROM metadata WHERE path = ?", (state.path,)
        ).fetchone()
        if row is not None and row[0] == state.sha1:
            try:
                found = Metadata.from_json(row[1])
                warned = set(strings(loads(row[2], list, "warned entries"), "warned entries"))
            except (ValueError, KeyError, TypeError, LookupError) as error:
                raise Garbled(f"garbled metadata of {state.path} ({error})") from None
        else:
            from pathlib import Path

            found, warned = read_metadata(Path(state.path)), set()
            self.con.execute(
                "INSERT OR REPLACE INTO metadata VALUES (?, ?, ?, '[]')",
                (state.path, state.sha1, found.to_json()),
            )
        self._metadata[state.path] = found
        self.warned[state.path] = warned
        return found

    def prints(self, state_path: str, count: int) -> list[bytes] | None:
        """The identity fingerprints of a file's ``count`` papers, in order, where its parse
        made them (a parse on the worker processes); None otherwise."""
        state = next(s for s in self.states if s.path == state_path)
        row = self.con.execute(
            "SELECT prints FROM prints WHERE sha1 = ? AND name = ?", (state.sha1, state.name)
        ).fetchone()
        if row is None:
            return None
        return unpack_prints(row[0], count)

    # --- records ------------------------------------------------------------------------------

    def _write(
        self,
        corpus: list[FileState],
        items: list[Item],
        previous: dict[str, RecordState],
        identity: Identity,
    ) -> None:
        copies = Counter(item.cid for item in items)
        first: dict[str, Item] = {}
        for item in items:
            first.setdefault(item.cid, item)
        duplicated = {cid for cid, n in copies.items() if n > 1}
        reordered = any(
            (old := self.before.get(s.path)) is not None and old.position != s.position
            for s in corpus
        )
        placed = Copies(copies, first, reordered)
        meta_same = self._metadata_unchanged()
        by_file: dict[str, list[Item]] = {}
        for item in items:
            by_file.setdefault(item.file, []).append(item)
        stable = {
            state.path
            for state in corpus
            if meta_same
            and not self.new_parser
            and self._stable(state, by_file.get(state.path, []), previous, identity, placed)
        }
        # copies are merged only for abstracts in files finished again (reading every file that
        # holds a copy of something costs most of a small refresh in a big corpus)
        again = {i.cid for i in items if i.cid in duplicated and i.file not in stable}
        finisher = self._finisher(again, identity, items)
        counter = int(self.store._meta("counter", "0")) + 1
        written: list[str] = []
        produced: set[str] = set()
        moved: list[tuple[int, str]] = []
        insert = "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        with transaction(self.con):  # one transaction: a killed refresh leaves the last state
            for state in corpus:
                mine = by_file.get(state.path, [])
                if self.before.get(state.path, state).position != state.position:
                    moved.append((state.position, state.path))
                if state.path in stable:
                    produced.update(identity.ids[i.cid] for i in mine)
                    continue
                rows = []  # one file's changed records at a time: memory stays flat
                was = self.old_rows.get(state.path, {}) if meta_same and not self.new_parser else {}
                for row in self.rows(state.path):
                    if was.get(row["id"]) == row and _kept(
                        [first[row["id"]]], previous, identity, placed
                    ):
                        produced.add(identity.ids[row["id"]])
                        continue
                    paper = finisher(stored_paper(row))
                    if paper is None:
                        continue
                    produced.add(paper.id)
                    record = paper.to_dict()
                    fingerprint = _digest(record)
                    old_record = previous.get(paper.id)
                    where = first[row["id"]]
                    if (
                        old_record
                        and old_record.digest == fingerprint
                        and (old_record.file, old_record.ordinal) == (where.file, where.ordinal)
                    ):
                        continue
                    rows.append(
                        (
                            paper.id,
                            paper.key,
                            where.file,
                            where.fpos,
                            where.ordinal,
                            fingerprint,
                            copies[row["id"]],
                            counter,
                            json.dumps(record, ensure_ascii=False),
                        )
                    )
                    self.store_tick(len(produced), len(first))
                self.con.executemany(insert, rows)
                written.extend(r[0] for r in rows)
            removed = [pid for pid in previous if pid not in produced]
            self.con.executemany(
                "UPDATE records SET fpos = ? WHERE file = ?", list(dict.fromkeys(moved))
            )
            for part in chunks(removed):
                marks = ",".join("?" * len(part))
                self.con.execute(f"DELETE FROM records WHERE id IN ({marks})", part)
            self.con.executemany(
                "INSERT OR REPLACE INTO removed VALUES (?, ?)", [(pid, counter) for pid in removed]
            )
            self.con.executemany("DELETE FROM removed WHERE id = ?", [(pid,) for pid in written])
            self.con.executemany(
                "UPDATE metadata SET warned = ? WHERE path = ?",
                [(json.dumps(sorted(w)), path) for path, w in self.warned.items()],
            )
            kept = [s.path for s in self.states if s.kind != CORPUS]
            marks = ",".join("?" * len(kept))
            self.con.execute(f"DELETE FROM metadata WHERE path NOT IN ({marks})", kept)
            self.con.execute("DELETE FROM files")
            self.con.executemany(
                "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
                [(s.path, s.kind, s.position, s.size, s.mtime_ns, s.sha1) for s in self.states],
            )
            self._prune_parses()
            self._set_meta("parser", PARSER_VERSION)
            self._set_meta("taught", "1")  # the ledger knows every text these records hold
            self._set_meta("changes", identity.changes_digest)
            if not self.store._meta("instance"):
                from . import new_instance

                self._set_meta("instance", new_instance())
            if written or removed:
                self._set_meta("counter", str(counter))

    def store_tick(self, done: int, total: int) -> None:
        progress = self.store.progress
        if progress and (done == total or done % 500 == 0):
            progress(done, total)

    def _stable(
        self,
        state: FileState,
        mine: list[Item],
        previous: dict[str, RecordState],
        identity: Identity,
        copies: Copies,
    ) -> bool:
        """True when this file's finished records must equal the stored ones: same content,
        same metadata, every paper known with the same key, place and copy count.

        An abstract with copies in other files is no reason to look again: if one of those
        files changed, it is finished again itself, and the first of the copies finished
        gives the merged record."""
        old = self.before.get(state.path)
        if old is None or old.sha1 != state.sha1:
            return False
        return _kept(mine, previous, identity, copies)

    def _metadata_unchanged(self) -> bool:
        now = {s.path: s.sha1 for s in self.states if s.kind != CORPUS}
        then = {p: s.sha1 for p, s in self.before.items() if s.kind != CORPUS}
        return now == then

    def _finisher(self, duplicated: set[str], identity: Identity, items: list[Item]) -> Finisher:
        groups: dict[str, list[Paper]] = {}
        if duplicated:
            for path in dict.fromkeys(i.file for i in items if i.cid in duplicated):
                for row in self.rows(path):
                    if row["id"] in duplicated:
                        groups.setdefault(row["id"], []).append(stored_paper(row))
        merged = {cid: merge_copies(copies) for cid, copies in groups.items()}
        ids = identity.ids
        keys = {cid: identity.keys[pid] for cid, pid in ids.items()}
        owner = {pid: cid for cid, pid in ids.items()}
        changes = {owner[pid]: values for pid, values in identity.changes.items() if pid in owner}
        return Finisher(keys, merged, changes, ids)

    def _prune_parses(self) -> None:
        keep = {(s.sha1, s.name) for s in self.states if s.kind == CORPUS}
        for sha1, name in list(self.con.execute("SELECT sha1, name FROM parses")):
            if (sha1, name) not in keep:
                self.con.execute("DELETE FROM parses WHERE sha1 = ? AND name = ?", (sha1, name))
                self.con.execute("DELETE FROM prints WHERE sha1 = ? AND name = ?", (sha1, name))

    def _set_meta(self, name: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))


class Identities:
    """Ids and keys for the corpus's content ids, from the ledger, given once.

    Everything decided here is read from the ledger (and the corpus as it stands), never from
    the rebuildable records: a cleared index folder or a run over another corpus in between
    gives every paper the same id and key."""

    def __init__(self, refresh: Refresh, items: list[Item], previous: dict[str, RecordState]):
        self.refresh = refresh
        self.items = items
        self.previous = previous
        self.ledger = refresh.store.ledger
        self._prints: dict[str, bytes] = {}
        self._texts: dict[str, dict[str, str]] = {}  # file -> content id -> abstract
        # resolved path -> the corpus path as given (absolute, not a symlink's target): what
        # the ledger keeps, so that a link replaced by a file, or pointed elsewhere, is the
        # same place
        self._given = {str(f.resolve()): os.path.abspath(f) for f in refresh.store.files}
        self._files: dict[str, list[Item]] = {}
        self._first: dict[str, Item] = {}  # content id -> its first copy in corpus order
        for item in items:
            self._files.setdefault(item.file, []).append(item)
            self._first.setdefault(item.cid, item)

    def assign(self, overrides: list[Override]) -> Identity:
        cids = list(dict.fromkeys(item.cid for item in self.items))
        self._learn_from_store()
        known = self.ledger.ids_of(cids)
        holders = _holders(cids, known, self.ledger)
        new = [cid for cid in cids if cid not in known]
        edits = self._edits(new, set(known.values()))
        ids: dict[str, str] = {}
        owner: dict[str, str] = dict(holders)
        split: list[str] = []  # known abstracts whose paper another abstract of the corpus holds
        for cid in cids:
            if cid in known and holders[known[cid]] != cid:
                pid = self._fresh_id(cid, owner)
                split.append(cid)
            else:
                pid = known.get(cid) or edits.get(cid) or cid
            owner[pid] = cid
            ids[cid] = pid
        bases: dict[str, str] = {}
        for item in self.items:
            bases.setdefault(item.cid, item.base)
        with self.ledger.transaction():
            for cid in new:
                self.ledger.add_paper(ids[cid], [cid])
            for cid in split:  # its own paper, found again by _fresh_id on the next refresh
                self.ledger.add_paper(ids[cid], [_split_alias(cid)])
            self._note_texts(ids, self.ledger.states_of(set(ids.values())))
            changes = self._overrides(overrides, ids, bases, [*new, *split])
        return Identity(ids, self.ledger.keys_of(list(owner)), changes)

    def _learn_from_store(self) -> None:
        """A ledger written before it kept fingerprints learns them from the stored records,
        while they still hold each paper's previous text (once; a ledger that has them all
        asks nothing more)."""
        if not self.previous or self.refresh.store._meta("taught"):
            return
        states = self.ledger.states_of(list(self.previous))
        missing = [pid for pid, state in states.items() if not state.printed]
        if not missing:
            return
        from ..parse import paper_id

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
        ours = {*self._given.values(), *self._given}  # every corpus file, as given or resolved

        def where(file: str, stamp: str | None) -> bool:
            """The paper may have left its last file: it is a file of this corpus, or gone, or
            changed since the paper was seen in it. An unchanged file elsewhere still holds
            it: it lives in another corpus sharing the ledger."""
            return file in ours or stamp is None or _stamp_of(file) != stamp

        absent = self.ledger.absent(present, where)
        if not absent:
            return {}
        newcomers = [
            Version(cid, item.file, item.ordinal, hashes(self._print(item)))
            for cid, item in ((cid, self._first[cid]) for cid in new)
        ]
        return match_edits(newcomers, absent)

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

    def _note_texts(self, ids: dict[str, str], states: dict[str, PaperState]) -> None:
        """Tell the ledger each paper's latest text and place, where they changed."""
        stamps = {s.path: f"{s.size}:{s.mtime_ns}" for s in self.refresh.states}
        for cid, pid in ids.items():
            item = self._first[cid]
            state = states.get(pid)
            file, stamp = self._given.get(item.file, item.file), stamps.get(item.file)
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
        self, overrides: list[Override], ids: dict[str, str], bases: dict[str, str], new: list[str]
    ) -> dict[str, dict[str, Any]]:
        present = set(ids.values())
        resolved: list[tuple[str, Override]] = []
        later: list[Override] = []
        for override in overrides:
            pid = self._target(override.target, present)
            if pid is None:
                later.append(override)
            else:
                resolved.append((pid, override))
        self._claim_keys(resolved)
        current = self.ledger.keys_of(list(present))
        bases = self._first_keys([c for c in new if not current.get(ids[c])], ids, bases, resolved)
        for cid in new:  # newcomers in corpus order get the first free form of their base key
            pid = ids[cid]
            if not current.get(pid):
                self.ledger.give_key(pid, self.ledger.free_key(bases[cid]))
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
        self._claim_keys(more)
        merged = _merged(resolved + more, warn=True)
        return {
            pid: {k: v for k, v in values.items() if k != "key"} for pid, values in merged.items()
        }

    def _first_keys(
        self,
        new: list[str],
        ids: dict[str, str],
        bases: dict[str, str],
        resolved: list[tuple[str, Override]],
    ) -> dict[str, str]:
        """Content id -> base key: the parse's, unless metadata naming the paper by id gives it
        a title, year or name, which the key rule then sees (``keys.first_key``)."""
        from ..keys import KEY_FIELDS, first_key

        fields = {
            pid: values
            for pid, values in _merged(resolved, warn=False).items()
            if any(name in values for name in KEY_FIELDS)
        }
        todo = [cid for cid in new if ids[cid] in fields]
        if not todo:
            return bases
        out = dict(bases)
        for cid, draft in self._drafts(todo).items():
            out[cid] = first_key(draft, fields[ids[cid]])
        return out

    def _drafts(self, cids: list[str]) -> dict[str, Paper]:
        """The parsed papers of these content ids (their first copies), read file by file."""
        wanted: dict[str, set[str]] = {}
        for cid in cids:
            wanted.setdefault(self._first[cid].file, set()).add(cid)
        out = {}
        for file, mine in wanted.items():
            for row in self.refresh.rows(file):
                if row["id"] in mine:
                    out.setdefault(row["id"], stored_paper(row))
        return out

    def _target(self, target: str, present: set[str]) -> str | None:
        ref = target.strip()
        pid = ref.lower() if ref.lower() in present else self.ledger.resolve(ref)
        return pid if pid in present else None

    def _claim_keys(self, pairs: list[tuple[str, Override]]) -> None:
        for pid, values in _merged(pairs, warn=False).items():
            key = values.get("key")
            if not key:
                continue
            source = next(o for p, o in reversed(pairs) if p == pid and "key" in o.values)
            if not SAFE_KEY.fullmatch(key):
                raise ParseError(
                    f"key {key!r} is not a safe citation key: use {SAFE_KEY_TEXT}",
                    source.source,
                    source.line,
                )
            holder = self.ledger.holder(key)
            if holder is not None and holder != pid:
                held = self.ledger.keys_of([holder]).get(holder, "")
                raise ParseError(
                    f"key {key!r} already belongs to paper {holder} (now keyed {held!r}); "
                    "a key once given never moves to another paper: choose another",
                    source.source,
                    source.line,
                )
            self.ledger.give_key(pid, key)


def _holders(cids: list[str], known: dict[str, str], ledger: Ledger) -> dict[str, str]:
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


def _merged(pairs: list[tuple[str, Override]], warn: bool) -> dict[str, dict[str, Any]]:
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


def _stored(refresh: Refresh, ids: list[str]) -> dict[str, str]:
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


def _vanished(path: str) -> None:
    warnings.warn(
        ParseWarning(f"{path}: vanished during the run (renamed or removed); skipped"),
        stacklevel=3,
    )


def _split_alias(cid: str) -> str:
    """The ledger's name for the paper an abstract got of its own when another abstract of the
    corpus held the paper its content id points to (``Identities._fresh_id``)."""
    return f"{cid}/own"


def _kept(
    items: list[Item], previous: dict[str, RecordState], identity: Identity, copies: Copies
) -> bool:
    """Whether the stored records of these abstracts stand as they are, given that each one's
    parse is unchanged: every paper known with the same key, place and copy count, and no
    metadata change for it other than those the stored records were finished with."""
    for item in items:
        pid = identity.ids[item.cid]
        record = previous.get(pid)
        count = copies.count[item.cid]
        where = copies.first[item.cid]
        if (
            record is None
            or record.copies != count
            or (count > 1 and copies.reordered)
            or record.key != identity.keys[pid]
            or (record.file, record.ordinal) != (where.file, where.ordinal)
            or (pid in identity.changes and not identity.same_changes)
        ):
            return False
    return True


def _digest(record: dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(record, sort_keys=True).encode("utf-8")).hexdigest()[:16]
