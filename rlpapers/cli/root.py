"""The Typer app without its commands, its global options, and ``app_for``, which gives a run
the app with the one command it runs. Each command module adds its commands to ``app`` when
imported (``COMMANDS`` names the module); ``cli.app`` imports them all."""

import copy
import os
from importlib import import_module
from pathlib import Path
from typing import Annotated

import typer
from typer.models import CommandInfo

from .. import __version__
from .group import COMMANDS, Group, hoist_globals
from .options import complete_files

app = typer.Typer(
    cls=Group,
    name="rlpapers",
    help="Search, list and cite plain-text collections of reinforcement-learning paper abstracts.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion; see cli/complete.py
    suggest_commands=False,  # Click (>= 8.4) suggests the command itself: once is enough
    context_settings={"help_option_names": ["-h", "--help"]},
)

#: The group's options that take a value (the others are flags): a test keeps this in step with
#: ``main_options``.
GROUP_VALUE_OPTIONS = ("--corpus", "-c", "--index-dir", "--encoding")


def command_in(args: list[str]) -> str | None:
    """The command ``args`` run (``rlpapers [OPTIONS] COMMAND ...``), or None if they name none
    (``--help``, ``--version``, nothing, a word that is no command)."""
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
    return narrowed


def registered() -> dict[str, CommandInfo]:
    """The commands the imported command modules added to ``app``, by name."""
    from typer.main import get_command_name

    return {
        info.name or get_command_name(info.callback.__name__): info
        for info in app.registered_commands
        if info.callback is not None
    }


def _given_paths(value: str | list[str] | None) -> Path | list[Path] | None:
    """A path option's value(s) as ``Path``; an empty one (``--corpus=``, ``--corpus "$UNSET"``)
    is a usage error, not the current folder."""
    if value is None:
        return None
    values = value if isinstance(value, list | tuple) else [value]
    if any(not str(v).strip() for v in values):
        raise typer.BadParameter("an empty path names no file or folder")
    paths = [Path(v) for v in values]
    return paths if isinstance(value, list | tuple) else paths[0]


def _checked_encoding(value: str | None) -> str | None:
    if value is not None:
        from ..parse.text import text_codec

        try:
            text_codec(value)
        except LookupError as error:
            raise typer.BadParameter(str(error)) from None
    return value


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rlpapers {__version__}")
        raise typer.Exit()


CorpusOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--corpus",
        "-c",
        metavar="PATH",
        callback=_given_paths,
        shell_complete=complete_files,
        help="A corpus file, or a folder of *.txt files (read recursively; repeatable). Default: $RLPAPERS_CORPUS, "
        "the config file, or the bundled seeds. --corpus may also follow the command.",
    ),
]
IndexDirOpt = Annotated[
    str | None,
    typer.Option(
        "--index-dir",
        metavar="PATH",
        callback=_given_paths,
        shell_complete=complete_files,
        help="Where to keep the search index. Default: $RLPAPERS_INDEX_DIR or the cache "
        "folder. May also follow the command.",
    ),
]
EncodingOpt = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="The encoding of the files `parse` reads (a Python codec name such as gb18030 "
        "or cp1252), instead of detecting it.",
        callback=_checked_encoding,
    ),
]
VersionOpt = Annotated[
    bool,
    typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
]


@app.callback()
def main_options(
    ctx: typer.Context,
    corpus: CorpusOpt = None,
    index_dir: IndexDirOpt = None,
    encoding: EncodingOpt = None,
    version: VersionOpt = False,
) -> None:
    """Search, list and cite plain-text collections of reinforcement-learning paper abstracts."""
    ctx.ensure_object(dict).update(corpus=corpus or None, index_dir=index_dir, encoding=encoding)
