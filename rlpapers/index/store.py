"""The index on disk: always fresh, never broken, safe with many processes at once.

Layout of the index folder::

    CURRENT                 name of the live generation folder (replaced atomically)
    gen-<time>-<pid>/       a Whoosh index + manifest.json (file states) + records.json (id -> hash)
    parsed/<sha1>-<v>.pkl   each corpus file's parse: (ids, base keys), word counts, records;
                            keyed by the file's content hash
    .lock                   held by the one process that writes

Every run stats the corpus files (and their metadata sidecars) and compares them with the live
generation's manifest. Equal: open and read, no lock, no parsing. Different: take the lock, look
again (another process may have refreshed meanwhile), re-parse only files whose content hash
changed, rebuild the finished records (dedup, keys and overrides are corpus-wide and cheap), and
apply only the records that changed to the index in place. Whoosh commits atomically (a new TOC
generation), and the manifest is written after the commit, so a killed refresh is redone next
time. A full build (first run, schema or version change, unreadable index) writes a new generation
folder and then swaps ``CURRENT``: a killed build leaves the old index in use. Readers never take
the lock; a writer waits for it, and after a timeout reads the last good index, or raises
``IndexBusyError`` when there is none.

Memory stays flat with corpus size: keys and merges are planned from ids and base keys alone
(``corpus.plan``), then finished records are streamed from the parse cache one file at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import time
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..corpus import Finisher, base_key, plan
from ..errors import IndexBusyError, IndexFolderError, IndexNotice, ParseError, ParseWarning
from ..metadata import read_overrides, sidecars
from ..model import Paper
from ..parse import PARSER_VERSION, parse_bytes
from .schema import SCHEMA_VERSION, document, schema

Progress = Callable[[int, int], None]

LOCK_WAIT_COLD = 900.0  # no index yet: wait for the builder, however long a big corpus takes
LOCK_WAIT_WARM = 30.0  # an older index exists: wait this long, then read it
PARALLEL_FROM = 5000  # records; below this a second process costs more than it saves


def whoosh_version() -> str:
    import whoosh

    return whoosh.versionstring()


@dataclass(frozen=True)
class Opened:
    """A live generation: its folder, its Whoosh index and its manifest."""

    path: Path
    ix: Any
    manifest: dict[str, Any]


class Store:
    def __init__(self, root: Path, files: list[Path], progress: Progress | None = None) -> None:
        self.root = root
        self.files = files
        self.metadata = sidecars(files)
        self.progress = progress

    # --- reading -------------------------------------------------------------------------------

    def open(self) -> Opened:
        """The live index, refreshed first if any corpus file changed."""
        states = self._states()
        opened = self._open_if_fresh(states)
        if opened:
            return opened
        with _index_folder_errors(self.root):
            return self._refresh_locked()

    def _open_if_fresh(self, states: dict[str, list[int]]) -> Opened | None:
        for _ in range(3):  # a concurrent swap can remove a generation between two reads
            gen = self._current()
            if gen is None:
                return None
            manifest = _read_json(gen / "manifest.json")
            if not manifest or not self._fresh(manifest, states):
                return None
            try:
                return Opened(gen, _open_whoosh(gen), manifest)
            except FileNotFoundError:
                continue
            except Exception:  # unreadable: the locked path rebuilds it and says so
                return None
        return None

    def _fresh(self, manifest: dict[str, Any], states: dict[str, list[int]]) -> bool:
        if not self._same_versions(manifest):
            return False
        known = manifest.get("files", {})
        return set(known) == set(states) and all(known[p][:2] == states[p] for p in states)

    @staticmethod
    def _same_versions(manifest: dict[str, Any]) -> bool:
        return (
            manifest.get("schema") == SCHEMA_VERSION
            and manifest.get("parser") == PARSER_VERSION
            and manifest.get("whoosh") == whoosh_version()
        )

    def _states(self) -> dict[str, list[int]]:
        states = {}
        for path in [*self.files, *self.metadata]:
            st = path.stat()
            states[str(path.resolve())] = [st.st_size, st.st_mtime_ns]
        return states

    def _current(self) -> Path | None:
        try:
            name = (self.root / "CURRENT").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        gen = self.root / name
        return gen if name.startswith("gen-") and gen.is_dir() else None

    # --- writing -------------------------------------------------------------------------------
    def _refresh_locked(self) -> Opened:
        from filelock import FileLock, Timeout

        had_index = self._current() is not None
        lock = FileLock(self._lock_path())
        try:
            lock.acquire(timeout=LOCK_WAIT_WARM if had_index else LOCK_WAIT_COLD)
        except Timeout:
            return self._last_good()
        try:
            states = self._states()  # again: files may have changed while we waited for the lock
            return self._open_if_fresh(states) or self._refresh(states)
        finally:
            lock.release()

    def _lock_path(self) -> str:
        self.root.mkdir(parents=True, exist_ok=True)
        return str(self.root / ".lock")

    def _last_good(self) -> Opened:
        gen = self._current()
        if gen is None:
            raise IndexBusyError(
                f"another rlpapers process is still building the index in {self.root}"
            )
        warnings.warn(
            IndexNotice("another process is updating the index; showing the last good one"),
            stacklevel=4,
        )
        return Opened(gen, _open_whoosh(gen), _read_json(gen / "manifest.json") or {})

    def rebuild(self) -> Opened:
        """Build a new generation from scratch, whatever the manifest says."""
        from filelock import FileLock, Timeout

        try:
            with (
                _index_folder_errors(self.root),
                FileLock(self._lock_path(), timeout=LOCK_WAIT_COLD),
            ):
                states = self._states()
                corpus = self._parse_all({}, states)
                return self._build(corpus, self._manifest(states, corpus.hashes))
        except Timeout:
            raise IndexBusyError(
                f"another rlpapers process holds the index lock in {self.root}"
            ) from None

    def _manifest(self, states: dict[str, list[int]], hashes: dict[str, str]) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "parser": PARSER_VERSION,
            "whoosh": whoosh_version(),
            "files": {p: states[p] + [hashes[p]] for p in states},
            "order": [str(f.resolve()) for f in self.files],
        }

    def _refresh(self, states: dict[str, list[int]]) -> Opened:
        gen = self._current()
        manifest = _read_json(gen / "manifest.json") if gen else None
        same = manifest is not None and self._same_versions(manifest)
        corpus = self._parse_all((manifest or {}).get("files", {}) if same else {}, states)
        new_manifest = self._manifest(states, corpus.hashes)
        if gen is not None and manifest is not None:
            if not same:
                self._notice("the index was built by another version of rlpapers; rebuilding it")
            else:
                opened = self._try_update(gen, corpus, new_manifest, manifest)
                if opened:
                    return opened
        elif gen is not None:
            self._notice(f"the index in {gen} has no readable manifest; rebuilding it")
        return self._build(corpus, new_manifest)

    # --- the parse cache -----------------------------------------------------------------------

    def _parse_all(self, old_files: dict[str, list[Any]], states: dict[str, list[int]]) -> Parsed:
        """Hash and, where needed, parse every corpus file into the parse cache.

        A file whose size and mtime match the last manifest keeps its recorded hash (it is not
        even read). Changed files are parsed in parallel when there is enough text to pay for a
        second process, reusing the titles of abstracts parsed before. Only ids and base keys
        stay in memory: records are streamed from the cache when the index is written.
        """
        cache = self.root / "parsed"
        cache.mkdir(parents=True, exist_ok=True)
        hashes: dict[str, str] = {}
        entries: list[Path] = []
        headers: dict[Path, tuple[list[str], list[str]]] = {}
        todo: list[tuple[Path, bytes, Path]] = []
        for path in [*self.files, *self.metadata]:
            key = str(path.resolve())
            old = old_files.get(key)
            data = None
            if old and len(old) > 2 and old[:2] == states.get(key):
                hashes[key] = old[2]
            else:
                data = _read(path)
                hashes[key] = hashlib.sha1(data).hexdigest()
            if path in self.metadata:
                continue
            target = _cache_path(cache, hashes[key])
            entries.append(target)
            try:
                headers[target] = _read_entry(target, 1)
            except Exception:  # missing or unreadable: parse the file (again)
                todo.append((path, data if data is not None else _read(path), target))
        known = _known_titles(cache, old_files, [path for path, _, _ in todo])
        for (_, _, target), (header, messages) in zip(todo, _parse_many(todo, known), strict=True):
            for message in messages:
                warnings.warn(ParseWarning(message), stacklevel=5)
            headers[target] = header
        self._prune_cache(cache, hashes)
        sources = {
            entry: str(path.resolve()) for entry, path in zip(entries, self.files, strict=True)
        }
        return Parsed(hashes, entries, headers, self.metadata, sources)

    def vocabulary(self) -> dict[str, int]:
        """Surface words of the corpus with their counts, merged from the parse cache."""
        gen = self._current()
        manifest_files = (_read_json(gen / "manifest.json") or {}).get("files", {}) if gen else {}
        total: dict[str, int] = {}
        for path in self.files:
            state = manifest_files.get(str(path.resolve()))
            vocab = _read_entry(_cache_path(self.root / "parsed", state[2]), 2) if state else None
            for word, count in (vocab or {}).items():
                total[word] = total.get(word, 0) + count
        return total

    @staticmethod
    def _prune_cache(cache: Path, hashes: dict[str, str]) -> None:
        keep = {_cache_path(cache, h).name for h in hashes.values()}
        for entry in cache.glob("*.pkl"):
            if entry.name not in keep:
                entry.unlink(missing_ok=True)

    # --- writing the index ---------------------------------------------------------------------

    def _try_update(
        self, gen: Path, corpus: Parsed, manifest: dict[str, Any], before: dict[str, Any]
    ) -> Opened | None:
        old = _read_json(gen / "records.json")
        try:
            ix = _open_whoosh(gen)
        except Exception as error:
            self._notice(
                f"the index in {gen} was unreadable ({type(error).__name__}); rebuilding it"
            )
            return None
        if not isinstance(old, dict):
            self._notice(f"the index in {gen} has no readable record list; rebuilding it")
            return None
        records: dict[str, list[str]] = {}
        skip = corpus.unchanged_entries(before, old)
        for entry in skip:  # same file, same keys, same metadata: same records
            records.update((pid, old[pid]) for pid in corpus.headers[entry][0])
        changed = []
        for paper in corpus.papers(skip):
            records[paper.id] = _record_state(paper)
            if _old_digest(old.get(paper.id)) != records[paper.id][0]:
                changed.append(paper)
        removed = [i for i in old if i not in records]
        if changed or removed:
            try:
                self._apply(ix, changed, removed)
            except Exception as error:
                self._notice(f"updating the index failed ({type(error).__name__}); rebuilding it")
                return None
        _atomic_write(gen / "records.json", json.dumps(records).encode())
        _atomic_write(
            gen / "manifest.json", json.dumps(manifest | {"count": len(records)}).encode()
        )
        return Opened(gen, _open_whoosh(gen), manifest)

    def _apply(self, ix: Any, changed: list[Paper], removed: list[str]) -> None:
        writer = ix.writer(timeout=LOCK_WAIT_WARM)
        try:
            for paper_id in removed:
                writer.delete_by_term("id", paper_id)
            for n, paper in enumerate(changed, 1):
                writer.update_document(**document(paper))
                self._tick(n, len(changed))
        except BaseException:
            writer.cancel()
            raise
        writer.commit()

    def _build(self, corpus: Parsed, manifest: dict[str, Any]) -> Opened:
        from whoosh.filedb.filestore import FileStorage

        gen = self.root / f"gen-{time.time_ns()}-{os.getpid()}"
        gen.mkdir(parents=True)
        storage = FileStorage(str(gen), supports_mmap=False)
        ix = storage.create_index(schema())
        total = corpus.count
        parallel = total >= PARALLEL_FROM and (os.cpu_count() or 1) > 1
        options = {"procs": 2, "multisegment": True, "limitmb": 64} if parallel else {"limitmb": 64}
        writer = ix.writer(**options)
        digests: dict[str, list[str]] = {}
        try:
            for n, paper in enumerate(corpus.papers(), 1):
                writer.add_document(**document(paper))
                digests[paper.id] = _record_state(paper)
                self._tick(n, total)
        except BaseException:
            writer.cancel()
            shutil.rmtree(gen, ignore_errors=True)
            raise
        writer.commit()
        _atomic_write(gen / "records.json", json.dumps(digests).encode())
        _atomic_write(
            gen / "manifest.json", json.dumps(manifest | {"count": len(digests)}).encode()
        )
        _atomic_write(self.root / "CURRENT", gen.name.encode())
        self._remove_old_generations(keep=gen)
        return Opened(gen, _open_whoosh(gen), manifest)

    def _remove_old_generations(self, keep: Path) -> None:
        for entry in self.root.glob("gen-*"):
            if entry != keep:
                shutil.rmtree(entry, ignore_errors=True)

    def _tick(self, done: int, total: int) -> None:
        if self.progress and (done == total or done % 200 == 0):
            self.progress(done, total)

    @staticmethod
    def _notice(message: str) -> None:
        warnings.warn(IndexNotice(message), stacklevel=5)


class Parsed:
    """The parsed corpus as the parse cache holds it: ids and base keys up front, records
    read one file at a time when ``papers()`` streams the finished records."""

    def __init__(
        self,
        hashes: dict[str, str],
        entries: list[Path],
        headers: dict[Path, tuple[list[str], list[str]]],
        metadata: list[Path],
        sources: dict[Path, str],
    ) -> None:
        self.hashes = hashes
        self.entries = entries
        self.metadata = metadata
        self.headers = headers
        self.sources = sources  # cache entry -> the corpus file's resolved path
        self.items: list[tuple[str, str]] = []
        for entry in entries:
            ids, bases = headers[entry]
            self.items.extend(zip(ids, bases, strict=True))
        self.count = len({pid for pid, _ in self.items})

    @cached_property
    def finisher(self) -> Finisher:
        overrides = [o for path in self.metadata for o in read_overrides(path)]
        return plan(self.items, self._duplicates(), overrides)

    def papers(self, skip: Collection[Path] = ()) -> Iterator[Paper]:
        """Every finished record in corpus order (deduplicated, keyed, overridden), except those
        of the ``skip`` entries."""
        finisher = self.finisher
        for entry in self.entries:
            if entry in skip:
                continue
            for row in _read_entry(entry, 3):
                paper = finisher(Paper.from_row(row))
                if paper is not None:
                    yield paper

    def unchanged_entries(self, before: dict[str, Any], old: dict[str, Any]) -> set[Path]:
        """Entries whose finished records must equal the last index's: the file, every metadata
        sidecar and each of its papers' keys are as they were, and no copy of its abstracts (in
        another file) changed."""
        files = before.get("files", {})
        order = set(before.get("order", []))
        meta_before = {
            p: state[2] for p, state in files.items() if p not in order and len(state) > 2
        }
        meta_now = {str(m.resolve()): self.hashes[str(m.resolve())] for m in self.metadata}
        if meta_before != meta_now:
            return set()
        same_file = {
            entry: files.get(self.sources[entry], [None] * 3)[2:3]
            == [self.hashes[self.sources[entry]]]
            for entry in self.entries
        }
        # a duplicated abstract is stable only if every file that holds a copy is unchanged
        moved = {
            pid for entry in self.entries if not same_file[entry] for pid in self.headers[entry][0]
        }
        unstable = moved & self._duplicated_ids()
        keys = self.finisher.keys
        copies: dict[str, int] = {}
        for pid, _ in self.items:
            copies[pid] = copies.get(pid, 0) + 1
        return {
            entry
            for entry in self.entries
            if same_file[entry]
            and all(
                isinstance(old.get(pid), list)
                and old[pid][1:] == [keys[pid], copies[pid]]
                and pid not in unstable
                for pid in self.headers[entry][0]
            )
        }

    def _duplicated_ids(self) -> set[str]:
        seen: dict[str, int] = {}
        for pid, _ in self.items:
            seen[pid] = seen.get(pid, 0) + 1
        return {pid for pid, n in seen.items() if n > 1}

    def _duplicates(self) -> dict[str, list[Paper]]:
        wanted = self._duplicated_ids()
        if not wanted:
            return {}
        groups: dict[str, list[Paper]] = {}
        for entry in self.entries:
            if wanted.isdisjoint(self.headers[entry][0]):
                continue  # only files that hold a copy are read
            for row in _read_entry(entry, 3):
                if row["id"] in wanted:
                    groups.setdefault(row["id"], []).append(Paper.from_row(row))
        return groups


PARALLEL_BYTES = 2_000_000  # below this much text to parse, one process is quicker


def _cache_path(cache: Path, digest: str) -> Path:
    return cache / f"{digest}-{PARSER_VERSION}.pkl"


def _write_entry(path: Path, entry: dict[str, Any]) -> None:
    """Three pickles in a row: (ids, base keys), word counts, records; readers stop early."""
    parts = [(entry["ids"], entry["bases"]), entry["vocab"], entry["records"]]
    _atomic_write(
        path, b"".join(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL) for part in parts)
    )


def _read_entry(path: Path, part: int) -> Any:
    """The ``part``-th pickle (1: ids and base keys, 2: word counts, 3: records) of an entry."""
    with path.open("rb") as handle:
        for _ in range(part - 1):
            pickle.load(handle)
        return pickle.load(handle)


def _known_titles(
    cache: Path, old_files: dict[str, list[Any]], changed: list[Path]
) -> dict[str, tuple[str, str]]:
    """(name, title) of every abstract the changed files held before, by paper id."""
    known: dict[str, tuple[str, str]] = {}
    for path in changed:
        state = old_files.get(str(path.resolve()))
        old = _cache_path(cache, state[2]) if state and len(state) > 2 else None
        if old is None or not old.exists():
            continue
        try:
            rows = _read_entry(old, 3)
        except Exception:  # an unreadable old entry only costs the reuse
            continue
        known.update((row["id"], (row["name"], row["title"])) for row in rows)
    return known


Header = tuple[list[str], list[str]]


def _parse_many(
    todo: list[tuple[Path, bytes, Path]], known: dict[str, tuple[str, str]]
) -> Iterator[tuple[Header, list[str]]]:
    """Parse each file into its cache entry; yield (ids and base keys, warnings) per file.

    The entry is written where it was parsed, so a worker process sends back only the header.
    """
    jobs = [(data, path.name, known, target) for path, data, target in todo]
    if (
        len(jobs) < 2
        or sum(len(job[0]) for job in jobs) < PARALLEL_BYTES
        or (os.cpu_count() or 1) < 2
    ):
        yield from (_parse_job(job) for job in jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        yield from pool.map(_parse_job, jobs, chunksize=1)


def _parse_job(
    job: tuple[bytes, str, dict[str, tuple[str, str]], Path],
) -> tuple[Header, list[str]]:
    data, name, known, target = job
    entry = parse_entry(data, name, known)
    _write_entry(target, entry)
    return (entry["ids"], entry["bases"]), entry["warnings"]


def parse_entry(data: bytes, name: str, known: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """One file's cache entry: records, their ids and base keys, and its word counts."""
    with warnings.catch_warnings(record=True) as caught:  # a worker process cannot show them
        warnings.simplefilter("always")
        papers = parse_bytes(data, name, titles=known)
    vocab: dict[str, int] = {}
    for paper in papers:
        for word in _WORDS.findall(f"{paper.name} {paper.title} {paper.abstract}".lower()):
            vocab[word] = vocab.get(word, 0) + 1
    return {
        "ids": [p.id for p in papers],
        "bases": [base_key(p) for p in papers],
        "vocab": vocab,
        "records": [p.row() for p in papers],
        "warnings": [str(w.message) for w in caught if issubclass(w.category, ParseWarning)],
    }


_WORDS = re.compile(r"[a-z][a-z\-']+[a-z]")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ParseError(error.strerror or str(error), str(path)) from None


@contextmanager
def _index_folder_errors(root: Path) -> Iterator[None]:
    """An operating-system error while writing the index: one clear line, not a traceback."""
    try:
        yield
    except OSError as error:
        where = error.filename or root
        raise IndexFolderError(
            f"cannot write the index in {root}: {error.strerror or error} ({where}); "
            "choose another folder with --index-dir or RLPAPERS_INDEX_DIR"
        ) from None


def _open_whoosh(gen: Path) -> Any:
    from whoosh.filedb.filestore import FileStorage

    # supports_mmap=False: Whoosh's default copies every compound segment into memory on open.
    return FileStorage(str(gen), supports_mmap=False).open_index()


def _record_state(paper: Paper) -> list[Any]:
    """What records.json keeps per paper: fingerprint, key, and how many copies were merged."""
    return [_digest(paper), paper.key, len(paper.sources)]


def _old_digest(value: Any) -> str | None:
    """A records.json value: [digest, key, copies] (or a bare digest, from older indexes)."""
    return value[0] if isinstance(value, list) else value


def _digest(paper: Paper) -> str:
    """A fingerprint of every field, to tell which records changed (pickle: 3x quicker than JSON)."""
    values = tuple(paper.__dict__.values())  # every field, in declaration order
    return hashlib.sha1(pickle.dumps(values, protocol=4)).hexdigest()[:16]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
