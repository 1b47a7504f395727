"""The Typer app without its commands, and its global options. Each command module adds its
commands to ``app`` when imported (``COMMANDS`` names the module); ``cli.app`` imports them all,
and ``cli.dispatch`` only the one a run needs."""

from pathlib import Path
from typing import Annotated

import typer

from .. import __version__
from .group import Group
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
GROUP_VALUE_OPTIONS = ("--corpus", "-c", "--index-dir", "--ledger", "--encoding")


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
        help="A corpus file, or a folder of *.txt, *.bib, *.ris, *.json and *.jsonl files (read recursively; repeatable). Default: $RLPAPERS_CORPUS, "
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
LedgerOpt = Annotated[
    str | None,
    typer.Option(
        "--ledger",
        metavar="URL",
        help="Keep ids and keys in a team's PostgreSQL ledger (postgresql://…; needs the team "
        "extra); '' for the data folder's own. Default: $RLPAPERS_LEDGER, the config file, or "
        "the data folder's. May also follow the command.",
    ),
]
EncodingOpt = Annotated[
    str | None,
    typer.Option(
        "--encoding",
        help="The encoding of every corpus file and of the file `parse` reads (a Python codec "
        "name such as gb18030, cp1252 or utf-16-le), instead of detecting it. May also follow "
        "the command.",
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
    ledger: LedgerOpt = None,
    encoding: EncodingOpt = None,
    version: VersionOpt = False,
) -> None:
    """Search, list and cite plain-text collections of reinforcement-learning paper abstracts."""
    ctx.ensure_object(dict).update(
        corpus=corpus or None, index_dir=index_dir, ledger=ledger, encoding=encoding
    )
