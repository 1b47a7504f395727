"""Worker processes of a run (the parse pool, the index writer's tasks, a reader ``beside`` this
process): tied to the process that started them, and started with the stop signals held back.

Both are small and light to import, because the CLI sets them up at start-up: a run turns
SIGTERM and SIGHUP into a stop like Ctrl-C's, and each process it forks resets them and ties
itself to the run (``rlpapers.cli``).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The signals that stop a run: Ctrl-C, and SIGTERM and SIGHUP (which the CLI makes a stop
#: like Ctrl-C's).
STOPS = {getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)}
#: The signals held back while a worker is forked: Ctrl-C, which workers leave to their
#: parent. The CLI, whose fork hook gives each worker default SIGTERM and SIGHUP handlers and
#: then lets them through, holds back all of ``STOPS``.
HELD = {signal.SIGINT}


@contextmanager
def stops_held() -> Iterator[None]:
    """Hold the stop signals (``HELD``) back while this process forks workers (``pool.submit``,
    a Whoosh writer's new task): one that arrived in between would land in the new worker's
    set-up, before it ignores Ctrl-C, and a worker that never reported its start would be
    missed. Held back, it reaches this process right after, as an ordinary
    ``KeyboardInterrupt``. What a worker needs to tie itself to this process is loaded here,
    before the fork, so that its set-up is quick."""
    prepare_tie()
    with _stops_not_swallowed():
        if not hasattr(signal, "pthread_sigmask"):
            yield
            return
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _stops_not_swallowed() -> Iterator[None]:
    """Raise, after the fork, a Ctrl-C that Python ran inside a fork hook. A signal that came
    just before it was held back is handled at Python's next instruction, which may be in a
    hook that the fork runs (``logging``'s lock release), where the exception is only printed
    ("Exception ignored in") and dropped: the run went on and exited 0."""
    import sys

    swallowed: list[BaseException] = []
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            swallowed.append(unraisable.exc_value)
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous
    if swallowed:
        raise swallowed[0]


def die_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` (the process that started it) ends, however it
    ends: SIGTERM and SIGHUP, which the parent turns into a clean stop of its workers, but
    SIGKILL too, which leaves it no say. On Linux, for a child of ``parent`` itself, the kernel
    sends SIGKILL to this process then (``PR_SET_PDEATHSIG``); elsewhere, or when a fork server
    started this process, a thread checks every half second that ``parent`` is still there.
    Without this, a worker minutes into a large file outlived a killed parent for good."""
    prctl = prepare_tie()
    if prctl is not None and os.getppid() == parent:
        if prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
            if os.getppid() != parent:  # it ended before the call took effect
                os._exit(1)
            return
    import threading

    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


_PR_SET_PDEATHSIG = 1
_PRCTL: list[Any] = []


def prepare_tie() -> Any:
    """Linux's ``prctl``, or None elsewhere; loaded once."""
    if not _PRCTL:
        try:
            import ctypes

            _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl)
        except (OSError, AttributeError, ImportError):  # not Linux
            _PRCTL.append(None)
    return _PRCTL[0]


def _watch_parent(parent: int) -> None:
    import time

    child = os.getppid() == parent
    while _alive(parent, child):
        time.sleep(0.5)
    os._exit(1)


def _alive(parent: int, child: bool) -> bool:
    if child:  # an orphan is given another parent: a pid that cannot be reused meanwhile
        return os.getppid() == parent
    try:
        os.kill(parent, 0)
    except (ProcessLookupError, PermissionError):  # gone (or another user's by now)
        return False
    return True


@contextmanager
def beside(work: Callable[[], Any], wanted: bool = True) -> Iterator[Callable[[], Any]]:
    """Run ``work()`` in a process forked beside this one while the body runs, on the other
    core. The body gets a function that waits for the result (plain data: ``marshal`` carries
    it back) and gives it, or None where there was no such process or it failed: the caller
    then does the work itself, as it would without one, errors and healing included. The
    process is ended and waited for when the body leaves, however it leaves.

    Only on Linux with two cores or more, in a process of one thread (a lock another thread
    held at the fork would stay held in the child, which could then wait for ever), and when
    ``wanted``: ``work`` must not use what this process holds open (a SQLite connection does
    not cross a fork), only what it opens itself.
    """
    if not _may_fork(wanted):
        yield lambda: None
        return
    read, write = os.pipe()
    parent = os.getpid()
    with stops_held():
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read)
        _work_and_exit(work, write, parent)
    os.close(write)
    waited = False

    def result() -> Any:
        nonlocal waited
        with os.fdopen(os.dup(read), "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        waited = True
        return _loaded(data) if status == 0 else None

    try:
        yield result
    finally:
        os.close(read)
        if not waited:
            _end(pid)


def _may_fork(wanted: bool) -> bool:
    """Whether ``beside`` forks: as its docstring says."""
    import threading

    if not wanted or not hasattr(os, "fork") or os.uname().sysname != "Linux":
        return False
    return (os.cpu_count() or 1) >= 2 and threading.active_count() == 1


def _work_and_exit(work: Callable[[], Any], write: int, parent: int) -> None:
    import marshal

    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's
        die_with_parent(parent)
        data = marshal.dumps(work())
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
        code = 0
    except BaseException:  # any failure: the parent does the work itself
        pass
    finally:
        os._exit(code)


def _loaded(data: bytes) -> Any:
    import marshal

    try:
        return marshal.loads(data) if data else None
    except (EOFError, ValueError, TypeError):
        return None


def _end(pid: int) -> None:
    """Stop a process ``beside`` started and wait for it (no zombie is left)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
