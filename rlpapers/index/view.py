"""The Whoosh index as a view of the record store: built from its record stream, kept in step
with its change counter, thrown away and rebuilt whenever it is damaged.

Layout of the view folder::

    CURRENT            name of the live generation folder (replaced atomically)
    gen-<time>-<pid>/  a Whoosh index + manifest.json (versions, the store instance and the
                       change counter it reflects)

A view at the store's counter is used as it is (no lock). Behind: take the lock, apply the
records changed and removed since its counter, in place. Of another store instance, schema,
Whoosh version, or unreadable: build a new generation and swap ``CURRENT``, so a killed build
leaves the old one usable. A build that fails for lack of space cleans up after itself and the
last good generation is served with a warning.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import IndexBusyError, IndexFolderError, IndexNotice
from ..files import write_atomic
from ..model import Paper
from ..store import LOCK_WAIT_COLD, LOCK_WAIT_WARM, Store
from ..store.db import busy, damaged
from .memo import read_json
from .schema import SCHEMA_VERSION, document, schema

Progress = Callable[[int, int], None]
PARALLEL_FROM = 5000  # records; below this a second process costs more than it saves
#: Posting pool of each of the two parallel writers (Whoosh's ``limitmb``, in its own estimate
#: of the pool's size): what sets the peak memory of a 10k build. 64 put it at 1.14x the
#: release before the record store, 56 at 1.05-1.07x, with the same build time. A lone writer
#: keeps 64. docs/dev/performance-history.md has the figures. Whoosh's estimate counts a
#: posting's stored positions, which ``postings.CompactPositions`` made some 15 bytes shorter:
#: 56 then held more postings, and the 10k build's peak rose from 213 to 218-220 MB; 50 puts it
#: at 203-205 MB, with the same CPU (the spilled runs are cheap to read back, ``postings``).
PARALLEL_POOL_MB = 50


def whoosh_version() -> str:
    import whoosh

    return str(whoosh.versionstring())


class Opened(NamedTuple):
    """A live generation: its folder, its Whoosh index and its manifest (a named tuple, as
    ``config.Settings``: quicker to define than a frozen dataclass, on every search's start)."""

    path: Path
    ix: Any
    manifest: dict[str, Any]


class View:
    def __init__(self, folder: Path, store: Store, progress: Progress | None = None) -> None:
        self.folder = folder
        self.store = store
        self.progress = progress

    # --- reading ------------------------------------------------------------------------------

    def open(self) -> Opened:
        """The live view, brought up to the store's records first."""
        self.store.refresh()
        opened = self._open_if_current()
        if opened:
            return opened
        with self._locked() as locked:
            if not locked:
                return self._last_good("another process is updating the index")
            return self._open_if_current() or self._catch_up()

    def _open_if_current(self) -> Opened | None:
        for _ in range(3):  # a concurrent swap can remove a generation between two reads
            gen = self.current()
            manifest = _read_json(gen / "manifest.json") if gen else None
            if gen is None or not manifest or not self.up_to_date(manifest):
                return None
            try:
                return Opened(gen, open_whoosh(gen), manifest)
            except FileNotFoundError:
                continue
            except Exception:  # unreadable: the locked path rebuilds it and says so
                return None
        return None

    def up_to_date(self, manifest: dict[str, Any]) -> bool:
        """Whether a view with this manifest holds the store's records as they are now."""
        instance, counter = self.store.counter
        return self._same_kind(manifest) and manifest.get("counter") == counter

    def _same_kind(self, manifest: dict[str, Any], looked: tuple[str, int] | None = None) -> bool:
        """Built by this version from this store (a store rebuilt since then, which says so
        itself, is another instance); ``looked``: the store's instance and counter as a
        read-only look found them, else the store is asked."""
        instance, _ = looked or self.store.counter
        return self._same_version(manifest) and manifest.get("instance") == instance

    @staticmethod
    def _same_version(manifest: dict[str, Any]) -> bool:
        return (
            manifest.get("schema") == SCHEMA_VERSION and manifest.get("whoosh") == whoosh_version()
        )

    def current(self) -> Path | None:
        path = self.folder / "CURRENT"
        try:
            if not path.is_file():  # a pipe planted there would block the read
                return None
            name = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        gen = self.folder / name
        return gen if name.startswith("gen-") and gen.is_dir() else None

    def state(self) -> dict[str, Any]:
        """What ``index --status`` reports of the view, without writing anything."""
        gen = self.current()
        manifest = _read_json(gen / "manifest.json") if gen else None
        if gen is None:
            return {"path": str(self.folder), "state": "missing"}
        if not manifest:
            return {"path": str(gen), "state": "damaged (no readable manifest)"}
        try:
            ix = open_whoosh(gen)
            with ix.reader() as reader:
                count = reader.doc_count()
        except Exception as error:
            return {"path": str(gen), "state": f"damaged ({type(error).__name__})"}
        size = sum(f.stat().st_size for f in gen.rglob("*") if f.is_file())
        # the store as its read-only look found it (``Store.state``, called first)
        looked = self.store.looked or self.store.counter
        fresh = self._same_kind(manifest, looked) and manifest.get("counter") == looked[1]
        return {
            "path": str(gen),
            "state": "fresh" if fresh else "stale",
            "documents": count,
            "size_bytes": size,
            "schema": manifest.get("schema"),
            "whoosh": manifest.get("whoosh"),
        }

    # --- writing ------------------------------------------------------------------------------

    @contextmanager
    def _locked(self) -> Iterator[bool]:
        from filelock import Timeout

        lock = self.store.lock
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout=LOCK_WAIT_WARM if self.current() else LOCK_WAIT_COLD)
        except Timeout:
            yield False
            return
        except OSError as error:
            raise _folder_error(self.folder, error) from None
        try:
            yield True
        finally:
            lock.release()

    def _last_good(self, why: str) -> Opened:
        gen = self.current()
        if gen is None:
            raise IndexBusyError(f"{why} in {self.folder}, and there is no older index to read")
        _notice(f"{why}; showing the last good index")
        return Opened(gen, open_whoosh(gen), _read_json(gen / "manifest.json") or {})

    def _catch_up(self) -> Opened:
        gen = self.current()
        manifest = _read_json(gen / "manifest.json") if gen else None
        if gen is not None and manifest and self._same_kind(manifest):
            opened = self._update(gen, manifest)
            if opened:
                return opened
        elif gen is not None and not manifest:
            _notice(f"the search index in {gen} has no readable manifest; rebuilding it")
        elif gen is not None and manifest and not self._same_version(manifest):
            _notice("the search index was built by another version; rebuilding it")
        return self._build_or_serve_old()

    def _update(self, gen: Path, manifest: dict[str, Any]) -> Opened | None:
        try:
            ix = open_whoosh(gen)
            changed, removed = self.store.changed_since(int(manifest.get("counter", 0)))
            _apply(ix, changed, removed)
        except OSError as error:
            if _no_space(error):
                return self._last_good(f"cannot update the search index ({error.strerror})")
            _notice(f"updating the search index failed ({error}); rebuilding it")
            return None
        except sqlite3.DatabaseError as error:
            if busy(error):
                raise self.store.busy_error(error) from None
            if not damaged(error):  # damage: the store has healed and said so
                _notice(f"updating the search index failed ({error}); rebuilding it")
            return None
        except Exception as error:
            _notice(
                f"the search index in {gen} was unreadable ({type(error).__name__}); rebuilding it"
            )
            return None
        new = manifest | self._manifest()
        write_atomic(gen / "manifest.json", json.dumps(new).encode())
        return Opened(gen, open_whoosh(gen), new)

    def rebuild(self) -> Opened:
        """Build a new generation from the store, whatever the current one is."""
        self.store.refresh()
        with self._locked() as locked:
            if not locked:
                raise IndexBusyError(f"another rlpapers process holds the lock in {self.folder}")
            return self._build()

    def _build_or_serve_old(self) -> Opened:
        try:
            return self._build()
        except IndexFolderError:
            if self.current() is None:
                raise
            return self._last_good("cannot write a new search index (no space?)")

    def _build(self) -> Opened:
        from whoosh.filedb.filestore import FileStorage

        gen = self.folder / f"gen-{time.time_ns()}-{os.getpid()}"
        try:
            gen.mkdir(parents=True)
            ix = FileStorage(str(gen), supports_mmap=False).create_index(schema())
            total = self.store.count()
            _write_all(ix, self.store.papers(), total, self._tick)
            manifest = self._manifest()
            write_atomic(gen / "manifest.json", json.dumps(manifest).encode())
            write_atomic(self.folder / "CURRENT", gen.name.encode())
        except BaseException as error:
            shutil.rmtree(gen, ignore_errors=True)
            if isinstance(error, OSError):
                raise _folder_error(self.folder, error) from None
            raise
        self._remove_old(keep=gen)
        return Opened(gen, open_whoosh(gen), manifest)

    def _manifest(self) -> dict[str, Any]:
        instance, counter = self.store.counter
        return {
            "schema": SCHEMA_VERSION,
            "whoosh": whoosh_version(),
            "instance": instance,
            "counter": counter,
        }

    def _remove_old(self, keep: Path) -> None:
        for entry in self.folder.iterdir():
            if entry == keep:
                continue
            if entry.name.startswith("gen-"):
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.name.endswith(".tmp"):
                entry.unlink(missing_ok=True)

    def _tick(self, done: int, total: int) -> None:
        if self.progress and (done == total or done % 200 == 0):
            self.progress(done, total)


def _write_all(ix: Any, papers: Iterable[Paper], total: int, tick: Progress) -> None:
    parallel = total >= PARALLEL_FROM and (os.cpu_count() or 1) > 1
    options = (
        {"procs": 2, "multisegment": True, "limitmb": PARALLEL_POOL_MB}
        if parallel
        else {"limitmb": 64}
    )
    if parallel:
        _release_memory()
    writer = _writer(ix, **options)
    if parallel:
        _quiet_children(writer)
    try:
        for n, paper in enumerate(papers, 1):
            writer.add_document(**document(paper))
            tick(n, total)
        writer.commit()  # most of a parallel build: the workers finish and their parts merge
    except BaseException:
        _stop_children(writer)  # before the build's folder is removed under them
        _forgive_removed_runs(writer)
        with contextlib.suppress(Exception):  # a commit that failed midway may have closed it
            writer.cancel()
        raise


def _forgive_removed_runs(writer: Any) -> None:
    """Let the writer's posting pool find its run files gone. A commit stopped while it merged
    them leaves Whoosh generators (``SortingPool._read_run``) that delete their file when they
    are closed, which is when the garbage collector meets them, after the build's folder is
    removed: each then printed a ``FileNotFoundError`` traceback ("Exception ignored in")."""
    pool = getattr(writer, "pool", None)
    remove = getattr(pool, "_remove_run", None)
    if remove is None:
        return

    def remove_if_there(path: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            remove(path)

    pool._remove_run = remove_if_there  # type: ignore[union-attr]


def _release_memory() -> None:
    """Give the memory a refresh freed back to the system before the writer forks its workers.

    Each worker starts as a copy of this process: memory that Python has freed but the C
    allocator still holds (the parsed abstracts of a first build, tens of megabytes at 10k
    papers) would count once more in every worker."""
    import gc

    gc.collect()
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)  # glibc; elsewhere there is no such call
    except (OSError, AttributeError):
        pass


def _stop_children(writer: Any) -> None:
    """End the writer's worker processes before their files are removed under them, and let
    go of the queues that fed them (else exiting waits for a reader that is gone)."""
    tasks = getattr(writer, "tasks", [])
    for task in tasks:  # a task stopped while it started has no process yet: nothing to end
        with contextlib.suppress(AttributeError, ValueError, OSError):
            task.terminate()
    for task in tasks:
        with contextlib.suppress(AttributeError, ValueError, AssertionError, OSError):
            task.join(timeout=5)
    for name in ("jobqueue", "resultqueue"):
        queue = getattr(writer, name, None)
        if queue is not None:
            queue.cancel_join_thread()


def _quiet_children(writer: Any) -> None:
    """Start the writer's worker processes with Ctrl-C (and SIGTERM, SIGHUP) held back: the
    parent alone stops (and ends them), so an interrupted build prints one line, not a
    traceback per process. The signals are blocked, not ignored, in the parent while it forks
    (``stops_held``): a Ctrl-C then still reaches it a moment later."""
    from ..workers import stops_held

    start = writer._new_task

    def new_task() -> Any:
        with stops_held():
            return start()

    writer._new_task = new_task


def _writer(ix: Any, **options: Any) -> Any:
    """A Whoosh writer of the view's postings (``postings.CompactCodec``), for a build or an
    update alike: a segment written with Whoosh's own codec would be three times larger."""
    from .postings import CompactCodec, spill_with_marshal

    spill_with_marshal()
    return ix.writer(codec=CompactCodec(), **options)


def _apply(ix: Any, changed: Iterable[Paper], removed: list[str]) -> None:
    writer = _writer(ix, timeout=LOCK_WAIT_WARM)
    try:
        for paper_id in removed:
            writer.delete_by_term("id", paper_id)
        for paper in changed:
            writer.update_document(**document(paper))
    except BaseException:
        writer.cancel()
        raise
    writer.commit()


def open_whoosh(gen: Path) -> Any:
    from whoosh.filedb.filestore import FileStorage

    from .plainfiles import sweep

    sweep()  # Whoosh modules imported since start-up refuse pickles too
    # a pipe planted there would block the search opening it (a folder is a writer's, for its
    # spilled postings: ``MAIN.tmp`` while the view is updated in place)
    for entry in os.scandir(gen):
        if not (entry.is_file() or entry.is_dir()):
            raise OSError(f"{entry.path} is not a regular file")
    # supports_mmap=False: Whoosh's default copies every compound segment into memory on open.
    # the view's schema, which its table of contents does not keep (``plainfiles``)
    return FileStorage(str(gen), supports_mmap=False).open_index(schema=schema())


def _notice(message: str) -> None:
    warnings.warn(IndexNotice(message), stacklevel=4)


def _no_space(error: OSError) -> bool:
    import errno

    return error.errno in (errno.ENOSPC, errno.EDQUOT)


def _folder_error(folder: Path, error: OSError) -> IndexFolderError:
    where = error.filename or folder
    return IndexFolderError(
        f"cannot write the search index in {folder}: {error.strerror or error} ({where})"
    )


def _read_json(path: Path) -> dict[str, Any] | None:
    """A manifest: a JSON object, or None when it cannot be read as one (``memo.read_json``)."""
    value = read_json(path)
    return value if isinstance(value, dict) else None
