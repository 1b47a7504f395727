"""The command group: runs every command with warnings shown as one line, library errors and
usage errors mapped to one line and an exit code, and the global options allowed after the
command. ``COMMANDS`` names the module that holds each command, so that a run imports only
the one it needs (``dispatch.app_for``)."""

import contextlib
import os
import re
import sys
import warnings
from typing import Any

import click
import typer
from typer.core import TyperGroup

from ..errors import IndexNotice, ParseWarning, RlpapersError
from .errors import (
    ExitCode,
    Terminated,
    describe_internal,
    exit_code_for,
    message_for,
    output_failed,
    report,
)

#: Every command, in the order a newcomer needs them (``--help``, docs/cli.md), and the module
#: of ``rlpapers.cli`` that defines it.
COMMANDS = {
    "search": "search",
    "list": "papers",
    "show": "papers",
    "similar": "search",
    "export": "export",
    "keys": "collection",
    "stats": "collection",
    "parse": "papers",
    "index": "collection",
    "config": "collection",
    "embed": "collection",
}


#: Global options that may also follow the command (``search curiosity --corpus mine``). Only
#: the long forms: ``-c`` after the command could be a query word.
LATE_GLOBALS = ("--corpus", "--index-dir", "--ledger", "--encoding")


class Group(TyperGroup):
    """Runs every command with warnings shown as one line and library errors mapped to exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Commands in the order of ``COMMANDS``, not the order they were made in."""
        order = list(COMMANDS)
        return sorted(
            super().list_commands(ctx),
            key=lambda n: order.index(n) if n in order else len(order),
        )

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_globals(args))

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """A usage error is one line on stderr with a hint, exit 2 (Click prints three)."""
        standalone = kwargs.pop("standalone_mode", True)
        kwargs["standalone_mode"] = False  # errors come here, to be worded as one line
        if not standalone:
            return super().main(*args, **kwargs)
        given = (args[0] if args else kwargs.get("args")) or sys.argv[1:]
        command = next((a for a in given if a in self.commands), None)
        try:
            result = super().main(*args, **kwargs)
        except (click.ClickException, click.Abort, OSError, SystemExit) as error:
            sys.exit(_main_exit_code(error, command))
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("always", ParseWarning)
            warnings.simplefilter("always", IndexNotice)
            shown = Warnings()
            warnings.showwarning = shown.show
            Terminated.caught = True
            try:
                result = super().invoke(ctx)
                _flush_stdout()
                return result
            except (typer.Exit, typer.Abort):
                raise
            except BaseException as error:
                raise typer.Exit(_exit_code_for(error)) from None
            finally:
                Terminated.caught = False
                shown.summary()


def _main_exit_code(error: BaseException, command: str | None) -> int:
    """Report what Click stopped on (outside a command) as one line and return its exit code;
    re-raise an exit that is not about a reader that left, and an ``OSError`` that is not
    about the output."""
    if isinstance(error, click.exceptions.NoArgsIsHelpError):
        error.show()
        return error.exit_code
    if isinstance(error, click.UsageError):
        report(usage_line(error, command))
        return error.exit_code
    if isinstance(error, BrokenPipeError):  # --help or --version to a reader that left
        _silence_stdout()
        return ExitCode.PIPE
    if isinstance(error, SystemExit):  # Click's own answer to a reader that left: exit 1
        context = error.__context__
        if not (isinstance(context, BrokenPipeError) or getattr(context, "errno", 0) == 32):
            raise error
        _silence_stdout()
        return ExitCode.PIPE
    if isinstance(error, OSError):
        if not output_failed(error):
            raise error
        report(f"cannot write the output: {error.strerror}")
        _silence_stdout()
        return ExitCode.INPUT
    if isinstance(error, click.ClickException):
        error.show()
        return error.exit_code
    report("aborted", "note")  # click.Abort
    return 1


def _exit_code_for(error: BaseException) -> int:
    """Report what stopped a command as one line and return its exit code; re-raise a bug
    (with ``RLPAPERS_DEBUG``), a Click exception, and anything that is no ``Exception``."""
    if isinstance(error, RlpapersError):
        report(message_for(error))  # an unknown reference too: "error:", as `show` names it
        return exit_code_for(error)
    if isinstance(error, BrokenPipeError):
        _silence_stdout()
        return ExitCode.PIPE
    if isinstance(error, Terminated):
        with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
            report(f"terminated ({error.name})", "note")
        return 128 + error.signum
    if isinstance(error, KeyboardInterrupt):
        report("interrupted", "note")
        return ExitCode.INTERRUPTED
    if isinstance(error, MemoryError):  # the environment, not a bug: the library names the
        report("not enough memory for this run", "error")  # file where it can (a huge file)
        return ExitCode.INPUT
    if not isinstance(error, Exception):
        raise error
    if output_failed(error):  # a full disk under stdout: the environment, not a bug
        report(f"cannot write the output: {error.strerror}")  # type: ignore[attr-defined]
        _silence_stdout()
        return ExitCode.INPUT
    if os.environ.get("RLPAPERS_DEBUG") or isinstance(error, _click_exceptions()):
        raise error
    report(describe_internal(error))  # a bug: one line, unless asked for the traceback
    return ExitCode.INTERNAL


def usage_line(error: click.UsageError, command: str | None = None) -> str:
    """Click's usage error as one line: the problem, a hint where one helps, and where to look
    (the command's help where the error names no context but the run named a command)."""
    message = error.format_message().rstrip(".")
    if isinstance(error, click.NoSuchOption) and error.option_name == "-c":
        message += "; after the command, write --corpus (-c only goes before it)"
    if error.ctx is not None:
        where = error.ctx.command_path
    else:
        where = f"rlpapers {command}" if command else "rlpapers"
    return f"{message} (see '{where} --help')"


def hoist_globals(args: list[str]) -> list[str]:
    """``args`` with every ``--corpus X`` / ``--index-dir X`` / ``--ledger X`` /
    ``--encoding X`` (or ``--corpus=X``) moved to the front, where the group reads them;
    nothing after ``--`` is touched."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            rest += args[i:]
            break
        if arg in LATE_GLOBALS:
            if i + 1 == len(args):
                raise click.BadOptionUsage(arg, f"Option '{arg}' requires an argument.")
            front += args[i : i + 2]
            i += 2
            continue
        (front if arg.startswith(tuple(f"{g}=" for g in LATE_GLOBALS)) else rest).append(arg)
        i += 1
    return front + rest


def _click_exceptions() -> tuple[type[BaseException], ...]:
    return (click.exceptions.ClickException, click.exceptions.Exit)


class Warnings:
    """Warnings as one line each, the first ``SHOWN`` of each kind only: a corpus of a million
    one-line paragraphs warned a million times. Two warnings are of one kind when they differ
    only in the file, line, quoted values and numbers they name. ``RLPAPERS_WARNINGS=all``
    shows every one."""

    SHOWN = 20
    _VARYING = re.compile(r"^\S+?(?::\d+)?: |'[^']*'|\"[^\"]*\"|\d+")

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.every = os.environ.get("RLPAPERS_WARNINGS") == "all"

    def show(
        self, message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any
    ) -> None:
        text = str(message)
        kind = self._VARYING.sub("_", text)
        self.seen[kind] = self.seen.get(kind, 0) + 1
        if self.every or self.seen[kind] <= self.SHOWN:
            report(text, "note" if issubclass(category, IndexNotice) else "warning")

    def summary(self) -> None:
        hidden = sum(n - self.SHOWN for n in self.seen.values() if n > self.SHOWN)
        if hidden and not self.every:
            kinds = sum(1 for n in self.seen.values() if n > self.SHOWN)
            report(
                f"{hidden} more warnings like the {kinds * self.SHOWN} above not shown "
                "(RLPAPERS_WARNINGS=all rlpapers parse FILE shows every one of a file)",
                "note",
            )


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
