"""One refresh of the record store: hash, parse, identify, finish, write (see ``store``)."""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import ParseError, ParseWarning
from ..metadata import Metadata, read_metadata
from ..model import Paper
from ..parse import PARSER_VERSION
from ..text import shown
from .assign import Identities
from .claims import file_keys
from .db import Garbled, chunks, collector_paused, loads, new_instance, strings, transaction
from .files import CORPUS, FileState, read_bytes
from .finish import Finisher, merge_copies
from .join import rejoin, rejoined
from .parsing import Parsed, WorkerPrints, parse_many, unpack
from .plan import Copies, Identity, Item, Plan, RecordState, Source, digest, kept
from .records import encode, stored_paper

#: A refresh that parses at most this much text keeps what it parsed in memory (an edited file).
KEEP_PARSED_BYTES = 16_000_000

_INSERT = "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"

if TYPE_CHECKING:
    from ..key_format import KeyFormat
    from .ledger import IdentityLedger


class Refresh:
    def __init__(self, store: Source, states: list[FileState]) -> None:
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
        self.joined: dict[str, str] = {}  # entry content id -> its text paper's (``join``)
        self.worker_prints = WorkerPrints(self.con)

    def run(self) -> None:
        # Hundreds of thousands of objects live through a refresh of a big corpus (a state, an
        # item, ids and keys for every paper), none in a cycle: each collection the allocations
        # start would walk them all again (0.2-0.3 s of a one-file refresh at 75,000 papers).
        with collector_paused():
            self._run()
        self.worker_prints.close()

    def _run(self) -> None:
        # a new parser may give other titles and names: no stored record can be kept as it is
        self.new_parser = self.store._meta("parser") != PARSER_VERSION
        if self.new_parser:
            with transaction(self.con):
                self.con.execute("DELETE FROM parses")
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
        identity = Identities(self, items, previous, self.store.files).assign(
            overrides, file_keys(corpus, self.rows)
        )
        identity.same_changes = identity.changes_digest == self.store._meta("changes")
        self.joined = rejoin(items, identity.joined)
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
            self._keep_parse(state, parsed, encodings[state.path])

    def _keep_parse(self, state: FileState, parsed: Parsed, encoding: str) -> None:
        """Store one file's parse, each file in a transaction of its own: a refresh killed
        midway keeps the files it parsed (its papers' fingerprints: ``WorkerPrints``)."""
        if parsed.rows is not None:
            self.fresh[(state.sha1, state.name)] = parsed.rows
        self.worker_prints.keep(state.sha1, state.name, parsed.prints)
        with transaction(self.con):
            self.con.execute(
                "INSERT OR REPLACE INTO parses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (state.sha1, state.name, encoding, *parsed.stored),
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

    @property
    def ledger(self) -> IdentityLedger:
        return self.store.ledger

    def taught(self) -> bool:
        """Whether the ledger already learnt the stored records' fingerprints."""
        return bool(self.store._meta("taught"))

    @property
    def key_format(self) -> KeyFormat | None:
        """The user's key format for papers first seen (None: the default rule)."""
        return self.store.key_format

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
        """The identity fingerprints of a file's ``count`` papers, in order, where this
        refresh's parse made them (a parse on the worker processes); None otherwise."""
        state = next(s for s in self.states if s.path == state_path)
        return self.worker_prints.get(state.sha1, state.name, count)

    # --- records ------------------------------------------------------------------------------

    def _write(
        self,
        corpus: list[FileState],
        items: list[Item],
        previous: dict[str, RecordState],
        identity: Identity,
    ) -> None:
        plan = self._plan(corpus, items, previous, identity)
        written: list[str] = []
        produced: set[str] = set()
        with transaction(self.con):  # one transaction: a killed refresh leaves the last state
            for state in corpus:
                if state.path in plan.stable:
                    produced.update(identity.ids[i.cid] for i in plan.by_file.get(state.path, []))
                    continue
                rows = self._finish(state, plan, produced)
                self.con.executemany(_INSERT, rows)
                written.extend(r[0] for r in rows)
            self._commit(plan, written, produced)

    def _plan(
        self,
        corpus: list[FileState],
        items: list[Item],
        previous: dict[str, RecordState],
        identity: Identity,
    ) -> Plan:
        """Where each abstract's copies are, which files' records stand as they are, and the
        finisher of the others."""
        count = Counter(item.cid for item in items)
        first: dict[str, Item] = {}
        by_file: dict[str, list[Item]] = {}
        for item in items:
            if first.setdefault(item.cid, item).joined and not item.joined:
                first[item.cid] = item  # a joined paper's record stands where its text does
            by_file.setdefault(item.file, []).append(item)
        reordered = any(
            (old := self.before.get(s.path)) is not None and old.position != s.position
            for s in corpus
        )
        copies = Copies(count, first, reordered)
        compare = self._metadata_unchanged() and not self.new_parser
        stable = {
            state.path
            for state in corpus
            if compare
            and self._stable(state, by_file.get(state.path, []), previous, identity, copies)
        }
        # copies are merged only for abstracts in files finished again (reading every file that
        # holds a copy of something costs most of a small refresh in a big corpus)
        again = {i.cid for i in items if count[i.cid] > 1 and i.file not in stable}
        finisher = self._finisher(again, identity, items)
        counter = int(self.store._meta("counter", "0")) + 1
        return Plan(corpus, previous, identity, copies, by_file, stable, compare, finisher, counter)

    def _finish(self, state: FileState, plan: Plan, produced: set[str]) -> list[tuple[Any, ...]]:
        """One file's finished records that changed, as rows to write (one file at a time:
        memory stays flat); the ids of all its records go to ``produced``."""
        identity, previous, copies, finisher = (
            plan.identity,
            plan.previous,
            plan.copies,
            plan.finisher,
        )
        first = copies.first
        was = self.old_rows.get(state.path, {}) if plan.compare else {}
        rows: list[tuple[Any, ...]] = []
        for row in rejoined(self.rows(state.path), self.joined):
            if was.get(row["id"]) == row and kept([first[row["id"]]], previous, identity, copies):
                produced.add(identity.ids[row["id"]])
                continue
            paper = finisher(stored_paper(row))
            if paper is None:
                continue
            produced.add(paper.id)
            record = paper.to_dict()
            record_digest = digest(record)
            old_record = previous.get(paper.id)
            where = first[row["id"]]
            if (
                old_record
                and old_record.digest == record_digest
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
                    record_digest,
                    copies.count[row["id"]],
                    plan.counter,
                    encode(record),
                )
            )
            self.store_tick(len(produced), len(first))
        return rows

    def _commit(self, plan: Plan, written: list[str], produced: set[str]) -> None:
        """The rest of the refresh's transaction: records that went away, files that moved in
        the corpus order, the files, the metadata warnings and the store's meta values."""
        removed = [pid for pid in plan.previous if pid not in produced]
        moved = [
            (s.position, s.path)
            for s in plan.corpus
            if self.before.get(s.path, s).position != s.position
        ]
        self.con.executemany(
            "UPDATE records SET fpos = ? WHERE file = ?", list(dict.fromkeys(moved))
        )
        for part in chunks(removed):
            marks = ",".join("?" * len(part))
            self.con.execute(f"DELETE FROM records WHERE id IN ({marks})", part)
        self.con.executemany(
            "INSERT OR REPLACE INTO removed VALUES (?, ?)", [(pid, plan.counter) for pid in removed]
        )
        self.con.executemany("DELETE FROM removed WHERE id = ?", [(pid,) for pid in written])
        self._record_files()
        self._set_meta("parser", PARSER_VERSION)
        self._set_meta("taught", "1")  # the ledger knows every text these records hold
        self._set_meta("ledger", self.store.keyed_by)  # the ledger that keyed them
        self._set_meta("changes", plan.identity.changes_digest)
        if not self.store._meta("instance"):
            self._set_meta("instance", new_instance())
        if written or removed:
            self._set_meta("counter", str(plan.counter))

    def _record_files(self) -> None:
        """The files as this refresh saw them, the metadata files' warned entries, and only the
        parses of the corpus's files."""
        self.con.executemany(
            "UPDATE metadata SET warned = ? WHERE path = ?",
            [(json.dumps(sorted(w)), path) for path, w in self.warned.items()],
        )
        kept_files = [s.path for s in self.states if s.kind != CORPUS]
        marks = ",".join("?" * len(kept_files))
        self.con.execute(f"DELETE FROM metadata WHERE path NOT IN ({marks})", kept_files)
        self.con.execute("DELETE FROM files")
        self.con.executemany(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)",
            [(s.path, s.kind, s.position, s.size, s.mtime_ns, s.sha1) for s in self.states],
        )
        self._prune_parses()

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
        return kept(mine, previous, identity, copies)

    def _metadata_unchanged(self) -> bool:
        now = {s.path: s.sha1 for s in self.states if s.kind != CORPUS}
        then = {p: s.sha1 for p, s in self.before.items() if s.kind != CORPUS}
        return now == then

    def _finisher(self, duplicated: set[str], identity: Identity, items: list[Item]) -> Finisher:
        groups: dict[str, list[tuple[bool, Paper]]] = {}
        if duplicated:
            for path in dict.fromkeys(i.file for i in items if i.cid in duplicated):
                for row in self.rows(path):
                    cid = self.joined.get(row["id"], row["id"])
                    if cid in duplicated:
                        entry = (cid != row["id"], stored_paper(row))
                        groups.setdefault(cid, []).append(entry)
        # a joined paper's text first: its abstract, names and place lead, the entries add
        merged = {
            cid: merge_copies([p for _, p in sorted(copies, key=lambda c: c[0])])
            for cid, copies in groups.items()
        }
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

    def _set_meta(self, name: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, value))


def _vanished(path: str) -> None:
    warnings.warn(
        ParseWarning(f"{path}: vanished during the run (renamed or removed); skipped"),
        stacklevel=3,
    )
