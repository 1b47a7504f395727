"""The index on disk: always fresh, never broken, safe with many processes at once.

Layout of the index folder::

    CURRENT                 name of the live generation folder (replaced atomically)
    gen-<time>-<pid>/       a Whoosh index + manifest.json (file states) + records.json (id -> hash)
    parsed/<sha1>-<v>.pkl   each corpus file's parsed records, keyed by its content hash
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..corpus import base_key, finish
from ..errors import IndexBusyError, IndexNotice, ParseWarning
from ..metadata import sidecars
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
        return self._refresh_locked(states)

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

    def rebuild(self) -> Opened:
        """Build a new generation from scratch, whatever the manifest says."""
        from filelock import FileLock, Timeout

        self.root.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self.root / ".lock"), timeout=LOCK_WAIT_COLD):
                states = self._states()
                hashes, raw, bases = self._parse_all({}, states)
                papers = finish(raw, self.metadata, bases)
                del raw
                return self._build(papers, self._manifest(states, hashes, len(papers)))
        except Timeout:
            raise IndexBusyError(f"another rlpapers process holds the index lock in {self.root}") from None

    def _manifest(self, states: dict[str, list[int]], hashes: dict[str, str], count: int) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "parser": PARSER_VERSION,
            "whoosh": whoosh_version(),
            "files": {p: states[p] + [hashes[p]] for p in states},
            "count": count,
            "order": [str(f.resolve()) for f in self.files],
        }

    def _refresh_locked(self, states: dict[str, list[int]]) -> Opened:
        from filelock import FileLock, Timeout

        self.root.mkdir(parents=True, exist_ok=True)
        had_index = self._current() is not None
        lock = FileLock(str(self.root / ".lock"))
        try:
            lock.acquire(timeout=LOCK_WAIT_WARM if had_index else LOCK_WAIT_COLD)
        except Timeout:
            return self._last_good()
        try:
            return self._open_if_fresh(self._states()) or self._refresh(self._states())
        finally:
            lock.release()

    def _last_good(self) -> Opened:
        gen = self._current()
        if gen is None:
            raise IndexBusyError(f"another rlpapers process is still building the index in {self.root}")
        warnings.warn(IndexNotice("another process is updating the index; showing the last good one"), stacklevel=4)
        return Opened(gen, _open_whoosh(gen), _read_json(gen / "manifest.json") or {})

    def _refresh(self, states: dict[str, list[int]]) -> Opened:
        gen = self._current()
        manifest = _read_json(gen / "manifest.json") if gen else None
        old_files = (manifest or {}).get("files", {}) if manifest and self._same_versions(manifest) else {}
        hashes, raw, bases = self._parse_all(old_files, states)
        papers = finish(raw, self.metadata, bases)
        del raw, bases  # the build below holds every record once, not twice
        new_manifest = self._manifest(states, hashes, len(papers))
        if gen is not None and manifest is not None:
            if not self._same_versions(manifest):
                self._notice("the index was built by another version of rlpapers; rebuilding it")
            else:
                opened = self._try_update(gen, papers, new_manifest)
                if opened:
                    return opened
        elif gen is not None:
            self._notice(f"the index in {gen} has no readable manifest; rebuilding it")
        return self._build(papers, new_manifest)

    def _parse_all(
        self, old_files: dict[str, list[Any]], states: dict[str, list[int]]
    ) -> tuple[dict[str, str], list[Paper], dict[str, str]]:
        """Content hashes of all files, their parsed records and the records' base keys.

        A file whose size and mtime match the last manifest keeps its recorded hash (it is not
        even read); its records come from the parse cache. Changed files are parsed in parallel
        when there is enough text to pay for a second process, reusing the titles of abstracts
        that were parsed before.
        """
        cache = self.root / "parsed"
        cache.mkdir(parents=True, exist_ok=True)
        hashes: dict[str, str] = {}
        entries: dict[Path, Any] = {}
        todo: list[tuple[Path, bytes, Path]] = []
        for path in [*self.files, *self.metadata]:
            key = str(path.resolve())
            old = old_files.get(key)
            data = None
            if old and len(old) > 2 and old[:2] == states.get(key):
                hashes[key] = old[2]
            else:
                data = path.read_bytes()
                hashes[key] = hashlib.sha1(data).hexdigest()
            if path in self.metadata:
                continue
            target = _cache_path(cache, hashes[key])
            entries[path] = _load_entry(target)
            if entries[path] is None:
                todo.append((path, data if data is not None else path.read_bytes(), target))
        known = self._known_titles(cache, old_files, [path for path, _, _ in todo])
        for (path, _, target), entry in zip(todo, _parse_many(todo, known), strict=True):
            for message in entry.pop("warnings", []):
                warnings.warn(ParseWarning(message), stacklevel=5)
            _atomic_write(target, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL))
            entries[path] = entry
        self._prune_cache(cache, hashes)
        raw = [Paper.from_row(row) for path in self.files for row in entries[path]["records"]]
        bases = {row["id"]: base for path in self.files for row, base in zip(entries[path]["records"], entries[path]["bases"], strict=True)}
        return hashes, raw, bases

    def vocabulary(self) -> dict[str, int]:
        """Surface words of the corpus with their counts, merged from the parse cache."""
        manifest_files = {}
        gen = self._current()
        if gen is not None:
            manifest_files = (_read_json(gen / "manifest.json") or {}).get("files", {})
        total: dict[str, int] = {}
        for path in self.files:
            state = manifest_files.get(str(path.resolve()))
            entry = _load_entry(_cache_path(self.root / "parsed", state[2])) if state else None
            for word, count in (entry or {}).get("vocab", {}).items():
                total[word] = total.get(word, 0) + count
        return total

    @staticmethod
    def _known_titles(cache: Path, old_files: dict[str, list[Any]], changed: list[Path]) -> dict[str, tuple[str, str]]:
        """(name, title) of every abstract the changed files held before, by paper id."""
        known: dict[str, tuple[str, str]] = {}
        for path in changed:
            state = old_files.get(str(path.resolve()))
            entry = _load_entry(_cache_path(cache, state[2])) if state and len(state) > 2 else None
            for row in (entry or {}).get("records", []):
                known[row["id"]] = (row["name"], row["title"])
        return known

    @staticmethod
    def _prune_cache(cache: Path, hashes: dict[str, str]) -> None:
        keep = {_cache_path(cache, h).name for h in hashes.values()}
        for entry in cache.glob("*.pkl"):
            if entry.name not in keep:
                entry.unlink(missing_ok=True)

    def _try_update(self, gen: Path, papers: list[Paper], manifest: dict[str, Any]) -> Opened | None:
        old = _read_json(gen / "records.json")
        try:
            ix = _open_whoosh(gen)
        except Exception as error:
            self._notice(f"the index in {gen} was unreadable ({type(error).__name__}); rebuilding it")
            return None
        if not isinstance(old, dict):
            self._notice(f"the index in {gen} has no readable record list; rebuilding it")
            return None
        new = {p.id: _digest(p) for p in papers}
        changed = [p for p in papers if old.get(p.id) != new[p.id]]
        removed = [i for i in old if i not in new]
        if changed or removed:
            try:
                self._apply(ix, changed, removed)
            except Exception as error:
                self._notice(f"updating the index failed ({type(error).__name__}); rebuilding it")
                return None
        _atomic_write(gen / "records.json", json.dumps(new).encode())
        _atomic_write(gen / "manifest.json", json.dumps(manifest).encode())
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

    def _build(self, papers: list[Paper], manifest: dict[str, Any]) -> Opened:
        from whoosh.filedb.filestore import FileStorage

        gen = self.root / f"gen-{time.time_ns()}-{os.getpid()}"
        gen.mkdir(parents=True)
        storage = FileStorage(str(gen), supports_mmap=False)
        ix = storage.create_index(schema())
        parallel = len(papers) >= PARALLEL_FROM and (os.cpu_count() or 1) > 1
        options = {"procs": 2, "multisegment": True, "limitmb": 64} if parallel else {"limitmb": 64}
        writer = ix.writer(**options)
        try:
            for n, paper in enumerate(papers, 1):
                writer.add_document(**document(paper))
                self._tick(n, len(papers))
        except BaseException:
            writer.cancel()
            shutil.rmtree(gen, ignore_errors=True)
            raise
        writer.commit()
        _atomic_write(gen / "records.json", json.dumps({p.id: _digest(p) for p in papers}).encode())
        _atomic_write(gen / "manifest.json", json.dumps(manifest).encode())
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


PARALLEL_BYTES = 2_000_000  # below this much text to parse, one process is quicker


def _cache_path(cache: Path, digest: str) -> Path:
    return cache / f"{digest}-{PARSER_VERSION}.pkl"


def _load_entry(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            entry = pickle.load(handle)
        return entry if isinstance(entry, dict) and "records" in entry else None
    except Exception:  # missing or unreadable: parse again
        return None


def _parse_many(todo: list[tuple[Path, bytes, Path]], known: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    jobs = [(data, path.name, known) for path, data, _ in todo]
    if len(jobs) < 2 or sum(len(data) for data, _, _ in jobs) < PARALLEL_BYTES or (os.cpu_count() or 1) < 2:
        return [parse_entry(*job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        return list(pool.map(_parse_job, jobs, chunksize=1))


def _parse_job(job: tuple[bytes, str, dict[str, tuple[str, str]]]) -> dict[str, Any]:
    return parse_entry(*job)


def parse_entry(data: bytes, name: str, known: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """One file's cache entry: its records, and the counts of its words for suggestions."""
    with warnings.catch_warnings(record=True) as caught:  # a worker process cannot show them
        warnings.simplefilter("always")
        papers = parse_bytes(data, name, titles=known)
    vocab: dict[str, int] = {}
    for paper in papers:
        for word in _WORDS.findall(f"{paper.name} {paper.title} {paper.abstract}".lower()):
            vocab[word] = vocab.get(word, 0) + 1
    messages = [str(w.message) for w in caught if issubclass(w.category, ParseWarning)]
    return {
        "records": [p.row() for p in papers],
        "bases": [base_key(p) for p in papers],
        "vocab": vocab,
        "warnings": messages,
    }


_WORDS = re.compile(r"[a-z][a-z\-']+[a-z]")


def _open_whoosh(gen: Path) -> Any:
    from whoosh.filedb.filestore import FileStorage

    # supports_mmap=False: Whoosh's default copies every compound segment into memory on open.
    return FileStorage(str(gen), supports_mmap=False).open_index()


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
