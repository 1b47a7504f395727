"""Which app a run gets: the whole app (every command module imported) for help, errors and
shell completion, or, when the arguments name one command, a copy of the bare app that holds
that command only, with only its module imported. Typer builds every command's Click parameters
on each start and a run uses one, so this keeps a command's start-up to what it needs."""

import copy
import os
from importlib import import_module

import typer
from typer.models import CommandInfo

from .group import COMMANDS, hoist_globals
from .root import GROUP_VALUE_OPTIONS, app

#: Typer's options for installing shell completion, on the group (a narrowed app leaves them
#: out: building them costs about 0.4 ms of every run).
COMPLETION_OPTIONS = ("--install-completion", "--show-completion")


def command_in(args: list[str]) -> str | None:
    """The command ``args`` run (``rlpapers [OPTIONS] COMMAND ...``), or None if they name none
    (``--help``, ``--version``, shell completion's options, nothing, a word that is no
    command)."""
    import click

    try:
        args = hoist_globals(args)
    except click.UsageError:  # the whole app reports it, as one line (``Group.main``)
        return None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if arg in ("-h", "--help"):  # the group's help lists every command
            return None
        if arg.split("=", 1)[0] in COMPLETION_OPTIONS:  # the whole app has them
            return None
        if not arg.startswith("-") or arg == "-":
            break
        i += 2 if arg in GROUP_VALUE_OPTIONS else 1
    if i >= len(args):
        return None
    return args[i] if args[i] in COMMANDS else None


def app_for(args: list[str]) -> typer.Typer:
    """The whole app, or, when ``args`` run one command, a copy of it that holds that command
    only, with only that command's module imported. Typer builds every command's Click
    parameters on each start and a run uses one. Help, errors and shell completion (no command
    in ``args``) get the whole app."""
    name = command_in(args)
    if name is None or "_RLPAPERS_COMPLETE" in os.environ:
        return import_module(".app", __package__).app  # type: ignore[no-any-return]
    import_module(f".{COMMANDS[name]}", __package__)
    narrowed = copy.copy(app)
    narrowed.registered_commands = [registered()[name]]
    narrowed._add_completion = False  # args with COMPLETION_OPTIONS get the whole app
    return narrowed


def registered() -> dict[str, CommandInfo]:
    """The commands the imported command modules added to ``app``, by name."""
    from typer.main import get_command_name

    return {
        info.name or get_command_name(info.callback.__name__): info
        for info in app.registered_commands
        if info.callback is not None
    }
