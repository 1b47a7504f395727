"""The command-line interface. ``main`` is the console-script entry point."""

from __future__ import annotations


def main() -> None:
    import atexit
    import gc
    import sys

    # The cyclic garbage collector is kept out of start-up and exit, where it only walks objects
    # that live as long as the process. Start-up makes modules, classes and the app, so the
    # collector is off until the app is made (the command runs with it as it was). At exit, a
    # last full collection would walk every object once more just before the process gives
    # them all back: freezing them first skips that walk. What a run opens (the store, the
    # index) it closes itself. See docs/performance.md, "the collector at start-up and exit".
    collecting = gc.isenabled()
    gc.disable()
    try:
        from .app import app_for

        app = app_for(sys.argv[1:])
    finally:
        if collecting:
            gc.enable()
    atexit.unregister(gc.freeze)  # once, however often main runs in one process
    atexit.register(gc.freeze)
    _guard_closed_streams()
    app(prog_name="rlpapers")


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
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
