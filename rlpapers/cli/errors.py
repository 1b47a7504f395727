"""The one place that maps exceptions to exit codes and one line on stderr."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import IntEnum
from typing import Any

from ..errors import (
    EmbeddingsMissing,
    IndexBusyError,
    IndexFolderError,
    InputError,
    LedgerUnwritable,
    NotFoundError,
    OptionNotTaken,
    OutputExists,
    RlpapersError,
)


class ExitCode(IntEnum):
    """The exit codes, named."""

    OK = 0
    NOT_FOUND = 1  # like grep: the command ran, nothing matched
    INPUT = 2  # bad usage, a bad file, a malformed query
    BUSY = 3  # the index stayed locked by another process longer than we wait
    INTERNAL = 70  # a bug: EX_SOFTWARE
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT), as a killed process would report
    # SIGHUP and SIGTERM: 129 and 143 (128 + the signal), see ``Terminated``
    PIPE = 141  # the reader went away (128 + SIGPIPE), as a killed process would report


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread like Ctrl-C's ``KeyboardInterrupt`` (a
    subclass, so that every clean-up written for Ctrl-C runs: worker processes stopped, half
    built files removed), then reported as one line and exit 128 + the signal's number."""

    #: Whether a command is running (``Group.invoke``, which reports the stop). Before and
    #: after it there is nothing to clean up: the signal ends the process at once, with the
    #: same line and code (Click would print "Aborted!" and exit 1).
    caught = False

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        import signal

        return signal.Signals(self.signum).name


def exit_code_for(error: BaseException) -> int:
    if isinstance(error, NotFoundError):
        return ExitCode.NOT_FOUND
    if isinstance(error, InputError):
        return ExitCode.INPUT
    if isinstance(error, IndexBusyError):
        return ExitCode.BUSY
    if isinstance(error, RlpapersError):
        return ExitCode.INPUT
    return ExitCode.INTERNAL


#: What the CLI adds to a library error: the options that mend it (the library names no flags).
HINTS: dict[type[RlpapersError], str | Callable[[Any], str]] = {
    IndexFolderError: "choose another folder with --index-dir or RLPAPERS_INDEX_DIR",
    LedgerUnwritable: "RLPAPERS_DATA_DIR chooses another data folder",
    EmbeddingsMissing: lambda e: f"run `rlpapers embed`: about {e.duration} for {e.papers} papers",
}


#: Library errors the CLI words in its own flags instead.
WORDING: dict[type[RlpapersError], Callable[[Any], str]] = {
    OutputExists: lambda e: f"{e.path} exists; use --force to replace it",
    OptionNotTaken: lambda e: (
        f"--{e.option} applies to --format {' or '.join(e.takers)}, not {e.format}"
    ),
}


def message_for(error: RlpapersError) -> str:
    word = next((w for kind, w in WORDING.items() if isinstance(error, kind)), None)
    if word is not None:
        return word(error)
    hint = next((h for kind, h in HINTS.items() if isinstance(error, kind)), None)
    if callable(hint):
        hint = hint(error)
    return f"{error}; {hint}" if hint else str(error)


def output_failed(error: BaseException) -> bool:
    """An operating-system error from writing the output (a full disk, a closed descriptor)."""
    import errno

    wanted = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF}
    return isinstance(error, OSError) and error.errno in wanted


def report(message: str, kind: str = "error") -> None:
    """One line on stderr: red on a terminal, plain text in a pipe or with NO_COLOR."""
    from ..text import shown

    message = shown(" ".join(str(message).split()))
    colour = {"error": "31", "warning": "33", "note": "2"}.get(kind, "0")
    if sys.stderr.isatty() and not os.environ.get("NO_COLOR"):
        sys.stderr.write(f"\x1b[{colour}m{kind}:\x1b[0m {message}\n")
    else:
        sys.stderr.write(f"{kind}: {message}\n")
    sys.stderr.flush()


def describe_internal(error: BaseException) -> str:
    return f"internal error ({type(error).__name__}: {error}); set RLPAPERS_DEBUG=1 for a traceback"
