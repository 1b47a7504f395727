"""The command-line interface. ``main`` is the console-script entry point."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def main() -> None:
    import atexit
    import gc
    import sys

    # The collector is kept out of start-up and exit, where it would only walk objects that
    # live as long as the process: off until the app is made, the app frozen out of its reach
    # while the command runs, and everything frozen at exit.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from ._lightimport import typer_lightly

        with typer_lightly():
            from .dispatch import app_for

            app = app_for(sys.argv[1:])
    except BaseException:
        if collecting:
            gc.enable()
        raise
    with _start_up_frozen(collecting):
        atexit.unregister(gc.freeze)  # once, however often main runs in one process
        atexit.register(gc.freeze)
        _guard_closed_streams()
        _stop_on_signals()
        app(prog_name="rlpapers")


#: The collector's first threshold while a command runs (Python's default is 700): a command
#: imports its modules (Whoosh's for a search), and every 700 objects they make would start a
#: collection, every tenth of them a second-generation one.
RUN_THRESHOLD = 20_000


@contextmanager
def _start_up_frozen(collecting: bool) -> Iterator[None]:
    """Turn the collector back on (if ``collecting``) for the command, with the objects start-up
    made (Typer, Click, the app) frozen, out of its reach, and a first threshold of
    ``RUN_THRESHOLD`` allocations rather than 700. Turned on without the freeze, its first
    collection would walk every object start-up made, and later ones walk them again.
    Afterwards the collector is as it was."""
    import gc

    threshold = gc.get_threshold()
    thaw = gc.get_freeze_count() == 0  # a caller's own freeze is theirs to undo
    if thaw:
        gc.freeze()
    gc.set_threshold(RUN_THRESHOLD, *threshold[1:])
    if collecting:
        gc.enable()
    try:
        yield
    finally:
        if thaw:  # what the command made joins the oldest generation too, uncollected
            gc.freeze()
        gc.set_threshold(*threshold)
        if thaw:
            gc.unfreeze()


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop a run as Ctrl-C does (``Terminated``): its worker processes are
    stopped and its half-built files removed, then one line and exit 143 or 129 (they killed
    it on the spot, leaving the workers behind). A process this run forks (the parse and
    index workers) starts with the default handlers, and ends when this one ends, however
    it ends (``die_with_parent``)."""
    import os
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            try:
                signal.signal(getattr(signal, name), _terminate)
            except ValueError:  # main() called from a thread other than the main one
                return
    global _FORK_HOOK
    if not _FORK_HOOK and hasattr(os, "register_at_fork"):
        from .. import workers

        _FORK["parent"] = os.getpid()
        os.register_at_fork(after_in_child=_forked)
        workers.HELD = set(workers.STOPS)  # the hook lets SIGTERM and SIGHUP through
        _FORK_HOOK = True


_FORK_HOOK = False
#: The process that runs the command, for the children it forks (their copy of it).
_FORK: dict[str, int] = {}


def _forked() -> None:
    """In a forked worker: Ctrl-C is the parent's to handle, SIGTERM and SIGHUP end the worker
    at once (not the parent's ``Terminated``), and the worker ends when the parent does. The
    code that forks holds the stop signals back meanwhile (``workers.stops_held``), so that
    none lands in the middle of this; they are let through at the end."""
    import signal

    from ..workers import STOPS, die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    die_with_parent(_FORK["parent"])
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def _terminate(signum: int, frame: object) -> None:
    import os

    from .errors import Terminated, report

    stop = Terminated(signum)
    if Terminated.caught:
        raise stop
    try:
        report(f"terminated ({stop.name})", "note")
    finally:
        os._exit(128 + signum)


def _guard_closed_streams() -> None:
    """Started with stdout or stderr closed (``>&-``): keep descriptors 1 and 2 taken by
    /dev/null, so no file the run opens (the index) can land on them and receive output.
    A closed stdout stays ``None``: writing output to it is an error (exit 2); a closed stderr
    only loses the messages."""
    import os
    import sys

    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        if stream is None:
            try:
                os.fstat(fd)
            except OSError:
                taken = os.open(os.devnull, os.O_WRONLY)
                if taken != fd:
                    os.dup2(taken, fd)
                    os.close(taken)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # lives as long as the process
