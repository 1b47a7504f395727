"""The Typer app: thin commands that wire options to library calls and hand results to render."""

import contextlib
import copy
import os
import re
import sys
import warnings
from collections.abc import Iterator
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Annotated, Any, NoReturn

import click
import typer
from typer.core import TyperGroup

from .. import __version__
from ..config import SEARCH_MODES, SIMILAR_MODES, SORTS
from ..errors import IndexNotice, NotFoundError, ParseWarning, RlpapersError
from . import render
from .errors import (
    ExitCode,
    Terminated,
    describe_internal,
    exit_code_for,
    message_for,
    output_failed,
    report,
)

# Choices are Click's: an Enum class per option would cost more to make at every start than the
# rest of the option. Anything else is a usage error listing them.
PaperFormats = click.Choice(render.PAPER_FORMATS, case_sensitive=False)
ReportFormats = click.Choice(render.REPORT_FORMATS, case_sensitive=False)

#: Global options that may also follow the command (``search curiosity --corpus mine``). Only
#: the long forms: ``-c`` after the command could be a query word.
LATE_GLOBALS = ("--corpus", "--index-dir")


class Group(TyperGroup):
    """Runs every command with warnings shown as one line and library errors mapped to exit codes."""

    ORDER = (
        "search", "list", "show", "similar", "export", "keys", "stats", "parse", "index", "config"
    )  # fmt: skip

    def list_commands(self, ctx: Any) -> list[str]:
        """Commands in the order a newcomer needs them (``--help``, docs/cli.md), not file order."""
        names = super().list_commands(ctx)
        return sorted(
            names, key=lambda n: self.ORDER.index(n) if n in self.ORDER else len(self.ORDER)
        )

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_globals(args))

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """A usage error is one line on stderr with a hint, exit 2 (Click prints three)."""
        import click

        standalone = kwargs.pop("standalone_mode", True)
        kwargs["standalone_mode"] = False  # errors come here, to be worded as one line
        if not standalone:
            return super().main(*args, **kwargs)
        given = (args[0] if args else kwargs.get("args")) or sys.argv[1:]
        command = next((a for a in given if a in self.commands), None)
        try:
            result = super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as error:
            error.show()
            sys.exit(error.exit_code)
        except click.UsageError as error:
            report(usage_line(error, command))
            sys.exit(error.exit_code)
        except BrokenPipeError:  # --help or --version to a reader that left
            _silence_stdout()
            sys.exit(ExitCode.PIPE)
        except SystemExit as stop:  # Click's own answer to a reader that left: exit 1
            context = stop.__context__
            if isinstance(context, BrokenPipeError) or getattr(context, "errno", 0) == 32:
                _silence_stdout()
                sys.exit(ExitCode.PIPE)
            raise
        except OSError as error:
            if not output_failed(error):
                raise
            report(f"cannot write the output: {error.strerror}")
            _silence_stdout()
            sys.exit(ExitCode.INPUT)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.Abort:
            report("aborted", "note")
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: Any) -> Any:
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
            except RlpapersError as error:
                report(message_for(error), "note" if isinstance(error, NotFoundError) else "error")
                raise typer.Exit(exit_code_for(error)) from None
            except BrokenPipeError:
                _silence_stdout()
                raise typer.Exit(ExitCode.PIPE) from None
            except Terminated as stop:
                with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
                    report(f"terminated ({stop.name})", "note")
                raise typer.Exit(128 + stop.signum) from None
            except KeyboardInterrupt:
                report("interrupted", "note")
                raise typer.Exit(ExitCode.INTERRUPTED) from None
            except MemoryError:  # the environment, not a bug: the library names the file where
                report("not enough memory for this run", "error")  # it can (a huge corpus file)
                raise typer.Exit(ExitCode.INPUT) from None
            except (typer.Exit, typer.Abort):
                raise
            except Exception as error:  # a bug: one line, unless asked for the traceback
                if output_failed(error):  # a full disk under stdout: the environment, not a bug
                    report(f"cannot write the output: {error.strerror}")  # type: ignore[attr-defined]
                    _silence_stdout()
                    raise typer.Exit(ExitCode.INPUT) from None
                if os.environ.get("RLPAPERS_DEBUG") or isinstance(error, _click_exceptions()):
                    raise
                report(describe_internal(error))
                raise typer.Exit(ExitCode.INTERNAL) from None
            finally:
                Terminated.caught = False
                shown.summary()


def usage_line(error: Any, command: str | None = None) -> str:
    """Click's usage error as one line: the problem, a hint where one helps, and where to look
    (the command's help where the error names no context but the run named a command)."""
    import click

    message = error.format_message().rstrip(".")
    if isinstance(error, click.NoSuchOption) and error.option_name == "-c":
        message += "; after the command, write --corpus (-c only goes before it)"
    if error.ctx is not None:
        where = error.ctx.command_path
    else:
        where = f"rlpapers {command}" if command else "rlpapers"
    return f"{message} (see '{where} --help')"


def hoist_globals(args: list[str]) -> list[str]:
    """``args`` with every ``--corpus X`` / ``--index-dir X`` (or ``--corpus=X``) moved to the
    front, where the group reads them; nothing after ``--`` is touched."""
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
                import click

                raise click.BadOptionUsage(arg, f"Option '{arg}' requires an argument.")
            front += args[i : i + 2]
            i += 2
            continue
        (front if arg.startswith(tuple(f"{g}=" for g in LATE_GLOBALS)) else rest).append(arg)
        i += 1
    return front + rest


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
    return args[i] if args[i] in _command_names() else None


def _command_names() -> dict[str, Any]:
    from typer.main import get_command_name

    return {
        info.name or get_command_name(info.callback.__name__): info
        for info in app.registered_commands
        if info.callback is not None
    }


def app_for(args: list[str]) -> typer.Typer:
    """``app``, or, when ``args`` run one command, a copy of it that holds that command only.
    Typer builds every command's Click parameters on each start, about 10 ms for eleven
    commands, and a run uses one. Help, errors and shell completion (no command in ``args``)
    get the whole app."""
    name = command_in(args)
    if name is None or "_RLPAPERS_COMPLETE" in os.environ:
        return app
    narrowed = copy.copy(app)
    narrowed.registered_commands = [_command_names()[name]]
    return narrowed


def _click_exceptions() -> tuple[type[BaseException], ...]:
    import click

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

    def show(self, message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
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


# --- completion: the work is in cli/complete.py, imported only when the shell asks -----------


def complete_query(incomplete: str) -> list[tuple[str, str]]:
    from .complete import query_fields

    return query_fields(incomplete)


def complete_refs(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    from .complete import refs

    return refs(ctx, incomplete)


def complete_files(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    """Offer nothing, so that bash, zsh and fish complete file names themselves."""
    return []


# --- shared options ----------------------------------------------------------------------------

FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        click_type=PaperFormats,
        help="Output format. Default: table on a terminal, tsv in a pipe.",
        show_default=False,
    ),
]
ReportFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        "-f",
        click_type=ReportFormats,
        help="Output format. Default: table on a terminal, tsv in a pipe.",
        show_default=False,
    ),
]
HeaderOpt = Annotated[
    bool,
    typer.Option("--header", help="tsv: print the column names first (ids: the line 'id')."),
]
CategoryOpt = Annotated[
    list[str] | None,
    typer.Option("--category", help="Keep papers whose category contains this (repeatable)."),
]
AuthorOpt = Annotated[
    list[str] | None,
    typer.Option("--author", help="Keep papers with an author containing this (accents ignored)."),
]
TopicOpt = Annotated[
    list[str] | None,
    typer.Option("--topic", help="Keep papers whose topic (file header) contains this."),
]
SourceOpt = Annotated[
    list[str] | None,
    typer.Option("--source", help="Keep papers from files whose name contains this."),
]
YearOpt = Annotated[
    str | None,
    typer.Option(
        "--year", help="Keep papers of this year or range: 2024, 2020..2024, 2020.., ..2024."
    ),
]
VenueOpt = Annotated[
    list[str] | None,
    typer.Option("--venue", help="Keep papers whose venue contains this (repeatable: any)."),
]
TagOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Keep papers with this tag (repeatable: all of them)."),
]
DerivedOpt = Annotated[
    bool,
    typer.Option(
        "--derived-titles",
        help="Keep papers whose title was derived from the abstract (to fix with overrides).",
    ),
]

#: Rows a terminal shows by default (search's hits, list's papers); a pipe gets every one.
TERMINAL_LIMIT = 10
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-n",
        min=1,
        help=f"Show at most this many. Default: {TERMINAL_LIMIT} on a terminal, all in a pipe.",
        show_default=False,
    ),
]
AllOpt = Annotated[bool, typer.Option("--all", "-a", help="Show all (overrides --limit).")]


def fmt_of(value: str | None) -> str:
    return value if value is not None else render.default_format()


def filters_of(
    category: Any,
    author: Any,
    topic: Any,
    source: Any,
    year: str | None = None,
    venue: Any = None,
    tag: Any = None,
    derived_titles: bool = False,
) -> Any:
    """The ``Filters`` the options ask for, or None when they ask for none (so a plain run
    does not load the filters module)."""
    if year is None and not any((category, author, topic, source, venue, tag, derived_titles)):
        return None
    from ..filters import Filters, parse_years

    years = None
    if year is not None:
        try:
            years = parse_years(year)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint="'--year'") from None
    return Filters(
        category=tuple(category or ()),
        author=tuple(author or ()),
        topic=tuple(topic or ()),
        source=tuple(source or ()),
        venue=tuple(venue or ()),
        tag=tuple(tag or ()),
        years=years,
        derived_titles=derived_titles,
    )


def library(ctx: typer.Context, writing: bool = True) -> Any:
    """The run's Library, made once from the global options (``writing``: see ``resolve``)."""
    obj = ctx.ensure_object(dict)
    if "library" not in obj:
        from ..config import resolve
        from ..library import Library

        settings = resolve(
            obj.get("corpus"), obj.get("index_dir"), obj.get("encoding"), writing=writing
        )
        obj["library"] = Library(settings=settings, progress=render.BuildProgress())
        ctx.call_on_close(obj["library"].close)  # closed by the run, not left to the collector
    return obj["library"]


def nothing_found(what: str = "no papers match") -> NoReturn:
    report(what, "note")
    raise typer.Exit(ExitCode.NOT_FOUND)


def _given_paths(value: Any) -> Any:
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


@app.callback()
def main_options(
    ctx: typer.Context,
    corpus: Annotated[
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
    ] = None,
    index_dir: Annotated[
        str | None,
        typer.Option(
            "--index-dir",
            metavar="PATH",
            callback=_given_paths,
            shell_complete=complete_files,
            help="Where to keep the search index. Default: $RLPAPERS_INDEX_DIR or the cache "
            "folder. May also follow the command.",
        ),
    ] = None,
    encoding: Annotated[
        str | None,
        typer.Option(
            "--encoding",
            help="The encoding of the files `parse` reads (a Python codec name such as gb18030 "
            "or cp1252), instead of detecting it.",
            callback=_checked_encoding,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Search, list and cite plain-text collections of reinforcement-learning paper abstracts."""
    ctx.ensure_object(dict).update(corpus=corpus or None, index_dir=index_dir, encoding=encoding)


# --- commands ----------------------------------------------------------------------------------


@app.command("list")
def list_(
    ctx: typer.Context,
    format: FormatOpt = None,
    header: HeaderOpt = False,
    limit: LimitOpt = None,
    all_: AllOpt = False,
    category: CategoryOpt = None,
    author: AuthorOpt = None,
    topic: TopicOpt = None,
    source: SourceOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    tag: TagOpt = None,
    derived_titles: DerivedOpt = False,
) -> None:
    """List papers, optionally filtered. Exit 1 when none match.

    On a terminal the first 10 are shown (--all for every paper); in a pipe every paper is
    printed, unless --limit is given.
    """
    filters = filters_of(category, author, topic, source, year, venue, tag, derived_titles)
    found = library(ctx).select(filters)
    if not found:
        nothing_found()
    shown = None if all_ else limit or (TERMINAL_LIMIT if render.is_terminal() else None)
    render.papers(found[:shown], fmt_of(format), header)
    if limit is None and shown is not None and len(found) > shown:
        report(f"{shown} of {len(found)} shown (--all for the rest)", "note")


@app.command()
def show(
    ctx: typer.Context,
    refs: Annotated[
        list[str],
        typer.Argument(
            help="Ids, keys or unique id prefixes; '-' reads them from stdin.",
            show_default=False,
            autocompletion=complete_refs,
        ),
    ],
    format: FormatOpt = None,
    header: HeaderOpt = False,
) -> None:
    """Show papers in full. REFS: ids, keys or unique id prefixes; '-' reads them from stdin.

    Unknown references are named on stderr (with the closest key) and the exit code is 1; the
    papers that were found are still shown.
    """
    found = library(ctx).find(list(expand_refs(refs)))
    if found.papers:
        render.detail(found.papers, fmt_of(format), header)
    fail_on_unknown(found.unknown)


def fail_on_unknown(unknown: list[tuple[str, str | None]]) -> None:
    """Name each unknown reference on stderr (a did-you-mean for the first 20), then exit 1."""
    if not unknown:
        return
    from ..lookup import SUGGEST_FOR, not_found_message
    from ..refs import shown

    for ref, suggestion in unknown[:SUGGEST_FOR]:
        report(not_found_message(shown(ref), suggestion), "error")
    if len(unknown) > SUGGEST_FOR:
        report(f"and {len(unknown) - SUGGEST_FOR} more unknown references", "error")
    raise typer.Exit(ExitCode.NOT_FOUND)


def expand_refs(refs: list[str]) -> Iterator[str]:
    """Arguments with '-' replaced by the ids or keys read from stdin, one per line."""
    from ..refs import binary, read_refs

    for ref in refs:
        yield from read_refs(binary(_stdin())) if ref == "-" else [ref]


def _stdin() -> Any:
    """stdin, or an error when the run was started with it closed (``<&-``)."""
    if sys.stdin is None:
        from ..errors import InputError

        raise InputError("stdin is closed: there is nothing to read from '-'")
    return sys.stdin


@app.command()
def parse(
    ctx: typer.Context,
    file: Annotated[
        str,
        typer.Argument(
            help="A seed file to check, or '-' for stdin.",
            show_default=False,
            shell_complete=complete_files,
        ),
    ],
    format: FormatOpt = None,
    header: HeaderOpt = False,
) -> None:
    """Parse one file (or '-' for stdin) and print its records, to check it before adding it."""
    from ..parse import parse_bytes, parse_file, read_limited
    from ..refs import binary
    from ..store.finish import finish

    encoding = ctx.ensure_object(dict).get("encoding")
    if file == "-":
        records = parse_bytes(read_limited(binary(_stdin()), "<stdin>"), encoding=encoding)
    else:
        records = parse_file(file, encoding=encoding)
    if not records:
        nothing_found("no records")
    render.papers(finish(records), fmt_of(format), header)


@app.command()
def config(ctx: typer.Context, format: ReportFormatOpt = None) -> None:
    """Show the config file, corpus files and index folder in use, and where each came from."""
    lib = library(ctx)
    settings = lib.settings
    exists = "" if settings.config_file.is_file() else " (not present)"
    rows = [("config file", f"{settings.config_file}{exists}", settings.origin["config"])]
    rows += [("corpus path", str(p), settings.origin["corpus"]) for p in settings.corpus]
    rows += [("corpus file", str(f), "") for f in lib.files]
    rows.append(("index dir", str(settings.index_dir), settings.origin["index_dir"]))
    rows.append(("ledger", str(settings.data_dir / "ledger.db"), settings.origin["data_dir"]))
    rows.append(("search.mode", settings.search_mode, settings.origin["search.mode"]))
    from ..config import RERANK_WINDOW

    rerank = str(RERANK_WINDOW if settings.search_rerank is None else settings.search_rerank)
    rows.append(("search.rerank", rerank, settings.origin["search.rerank"]))
    render.config(rows, fmt_of(format))


# --- search and friends ------------------------------------------------------------------------


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[
        list[str],
        typer.Argument(
            help='Words, field:value, "phrases", AND/OR/NOT, (groups), wild*, fuzzy~.',
            show_default=False,
            autocompletion=complete_query,
        ),
    ],
    format: FormatOpt = None,
    limit: LimitOpt = None,
    all_: AllOpt = False,
    category: CategoryOpt = None,
    author: AuthorOpt = None,
    topic: TopicOpt = None,
    source: SourceOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    tag: TagOpt = None,
    derived_titles: DerivedOpt = False,
    sort: Annotated[
        str, typer.Option("--sort", click_type=click.Choice(SORTS), help="Order of the hits.")
    ] = "score",
    scores: Annotated[
        bool, typer.Option("--scores", help="Show each hit's score (tsv: a last column).")
    ] = False,
    header: HeaderOpt = False,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            click_type=click.Choice(SEARCH_MODES, case_sensitive=False),
            help="lexical: by words; hybrid: words and meaning; semantic: meaning only "
            "(plain words). Default: search.mode in the config, else lexical.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Search the corpus: ranked hits with highlighted snippets. Exit 1 when nothing matches.

    QUERY: plain words (OR-ed, ranked), field:value (title name author category topic
    abstract source key id year venue tag doi note), "phrases", AND / OR / NOT, (groups),
    ranges (year:[2020 TO 2024]), wild*, fuzzy~.

    On a terminal the best 10 are shown (--all for every hit); in a pipe every hit is printed,
    best first, unless --limit is given.
    """
    lib = library(ctx)
    text = " ".join(query)
    fmt = fmt_of(format)
    chosen = mode or lib.settings.search_mode
    filters = filters_of(category, author, topic, source, year, venue, tag, derived_titles)
    shown = None if all_ else limit or (TERMINAL_LIMIT if render.is_terminal() else None)
    wanted = {
        "filters": filters or None,
        "sort": sort,
        "snippets": render.shows_snippets(fmt),
    }
    hits: Iterator[Any]
    only_ids = chosen == "lexical" and fmt == "ids"  # ids need no records: the index has them
    if only_ids:
        hits = lib.search_ids(text, shown, wanted["filters"], wanted["sort"])
    elif chosen == "lexical":
        hits = lib.iter_search(text, shown, **wanted)
    else:
        hits = iter(lib.search(text, shown, mode=chosen, **wanted))
    first = next(hits, None)
    if first is None and chosen == "semantic":
        from ..semantic.modes import SIMILARITY_FLOOR

        nothing_found(f"no paper is close enough in meaning (similarity floor {SIMILARITY_FLOOR})")
    if first is None:
        suggestion = lib.suggest(text)
        nothing_found(
            f'no papers match; did you mean "{suggestion}"?' if suggestion else "no papers match"
        )
    show = (
        partial(render.ids, header=header)
        if only_ids
        else partial(render.hits, fmt=fmt, show_scores=scores, header=header)
    )
    if limit is None and not all_ and shown is not None:  # a terminal's short list
        taken = [first, *hits]
        show(taken)
        if len(taken) == shown and chosen != "semantic":
            _note_when_cut(lib, text, filters, shown)
        return
    show(chain([first], hits))


def _note_when_cut(lib: Any, text: str, filters: Any, shown: int) -> None:
    """Below a terminal's short list, say on stderr when more papers matched than it shows."""
    total = lib.count(text, filters or None)
    if total > shown:
        report(f"{shown} of {total} shown (--all for the rest)", "note")


@app.command()
def similar(
    ctx: typer.Context,
    ref: Annotated[
        str | None,
        typer.Argument(
            help="The paper's id, key or id prefix (or --text instead).",
            show_default=False,
            autocompletion=complete_refs,
        ),
    ] = None,
    text: Annotated[
        str | None,
        typer.Option(
            "--text",
            help="Rank the papers most like this text (a paragraph, an abstract); '-' reads it "
            "from stdin. Plain text: colons, quotes and AND/OR/NOT are words, not syntax.",
            show_default=False,
        ),
    ] = None,
    format: FormatOpt = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="Show at most this many papers.")
    ] = 10,
    scores: Annotated[
        bool, typer.Option("--scores", help="Show each paper's similarity score.")
    ] = False,
    header: HeaderOpt = False,
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            click_type=click.Choice(SIMILAR_MODES, case_sensitive=False),
            help="lexical: shared distinctive words; semantic: closest in meaning; hybrid: both.",
        ),
    ] = "lexical",
) -> None:
    """Papers most like REF (an id, key or id prefix), by their abstracts, REF itself excluded;
    or most like the text given with --text."""
    if (ref is None) == (text is None):
        raise typer.BadParameter("give a paper (REF) or --text, one of the two")
    if text is not None:
        if text == "-":
            from ..parse.text import decode

            text = decode(sys.stdin.buffer.read(), "<stdin>")
        hits = library(ctx).similar_text(text, limit, mode=mode)
    else:
        hits = library(ctx).similar(str(ref), limit, mode=mode)
    if not hits:
        nothing_found("no similar papers")
    render.hits(hits, fmt_of(format), show_scores=scores, header=header)


@app.command()
def stats(
    ctx: typer.Context,
    format: ReportFormatOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Rows per section.")] = 10,
) -> None:
    """Counts by topic, category, author, year, venue and tag, and the most distinctive terms."""
    render.stats(library(ctx).stats(terms=top), fmt_of(format), top)


@app.command()
def index(
    ctx: typer.Context,
    status: Annotated[
        bool,
        typer.Option(
            "--status", help="Report files, records, size and freshness; build nothing new."
        ),
    ] = False,
    format: ReportFormatOpt = None,
) -> None:
    """Build (or rebuild) the search index now. Every other command keeps it fresh by itself.

    With --status, report where the record store and the index are and whether they are fresh,
    stale, damaged or missing, and change nothing.
    """
    lib = library(ctx, writing=not status)
    if not status:
        lib.rebuild()
    render.status(lib.status(), fmt_of(format))


@app.command()
def keys(
    ctx: typer.Context,
    pin: Annotated[
        bool,
        typer.Option(
            "--pin",
            help="Write the keys into keys.yaml beside each corpus file or folder, so they "
            "travel with the files.",
        ),
    ] = False,
    format: ReportFormatOpt = None,
) -> None:
    """List every paper's id, citation key and corpus file; --pin writes the keys into
    keys.yaml files.

    Keys are given once by the identity ledger and never move; keys.yaml carries them to
    another machine or data folder (it is read like any metadata file).
    """
    lib = library(ctx)
    if not pin:
        rows = lib.keys()
        for pid, old, new in lib.joined_keys():
            report(f"paper {pid}: the team ledger keys it {new} (it was {old} here)", "note")
        render.keys(rows, fmt_of(format))
        return
    written = lib.pin_keys()
    for path, count in written:
        report(f"wrote {count} key{'s' if count != 1 else ''} to {path}", "note")
    if not written:
        report(
            "nothing pinned: keys are never written into the bundled seeds; pin the keys of a "
            "corpus of your own (--corpus, RLPAPERS_CORPUS or the config file)",
            "note",
        )


@app.command()
def embed(ctx: typer.Context) -> None:
    """Compute the sentence vectors that hybrid and semantic search use (only new or changed
    papers; an interrupted run keeps what it finished). Needs the semantic extra."""
    counts = library(ctx).embed(render.BuildProgress("embedding"))
    report(f"embedded {counts['embedded']} papers; {counts['stored']} have vectors", "note")


# --- export ------------------------------------------------------------------------------------


@app.command()
def export(
    ctx: typer.Context,
    query: Annotated[
        list[str] | None,
        typer.Argument(
            help="Export the hits of this query (default: every paper).",
            show_default=False,
            autocompletion=complete_query,
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", "-f", click_type=PaperFormats, help="Output format.")
    ] = "bibtex",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file (atomically) instead of stdout; '-' is stdout.",
            shell_complete=complete_files,
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing --output file.")
    ] = False,
    ids: Annotated[
        str | None,
        typer.Option(
            "--ids",
            shell_complete=complete_files,
            help="Export the papers whose ids or keys are in this file, one per line ('-' for stdin).",
        ),
    ] = None,
    ascii: Annotated[
        bool,
        typer.Option(
            "--ascii", help="bibtex: LaTeX-encode non-ASCII characters for classic BibTeX."
        ),
    ] = False,
    excel: Annotated[
        bool,
        typer.Option("--excel", help="csv: add a BOM and defuse cells that start with = + - @."),
    ] = False,
    fields: Annotated[
        str | None,
        typer.Option(
            "--fields",
            help="csv: comma-separated columns to write, in order (see docs/formats.md).",
        ),
    ] = None,
    style: Annotated[
        str | None, typer.Option("--style", help="markdown: 'list' (default) or 'table'.")
    ] = None,
    category: CategoryOpt = None,
    author: AuthorOpt = None,
    topic: TopicOpt = None,
    source: SourceOpt = None,
    year: YearOpt = None,
    venue: VenueOpt = None,
    tag: TagOpt = None,
    derived_titles: DerivedOpt = False,
) -> None:
    """Export papers: all of them, the hits of QUERY, or those listed with --ids."""
    from ..exporters import save

    if output is not None and str(output) == "-":
        output = None  # '-' is stdout, as everywhere
    if format == "table" and output is not None:
        raise typer.BadParameter(
            "table is drawn for a terminal, not a file; use tsv or csv", param_hint="'--format'"
        )
    filters = filters_of(category, author, topic, source, year, venue, tag, derived_titles)
    papers, unknown = select_for_export(library(ctx), query, ids, filters)
    if not papers:
        fail_on_unknown(unknown)
        nothing_found()
    options = {
        "ascii": ascii,
        "excel": excel,
        "fields": fields.split(",") if fields else None,
        "style": style,
    }
    if output is None:
        render.exported(papers, format, options)
    else:
        save(render.exported_text(papers, format, options), output, force)
        report(f"wrote {len(papers)} paper{'s' if len(papers) != 1 else ''} to {output}", "note")
    fail_on_unknown(unknown)


def select_for_export(
    lib: Any, query: list[str] | None, ids: str | None, filters: Any
) -> tuple[list[Any], list[tuple[str, str | None]]]:
    """The papers to export, and the --ids entries that named none."""
    if ids is not None:
        refs = expand_refs(["-"]) if ids == "-" else _ref_file(ids)
        found = lib.find(list(refs))
        return (filters.apply(found.papers) if filters else found.papers), found.unknown
    if query:
        hits = lib.iter_search(" ".join(query), None, filters or None, snippets=False)
        return [hit.paper for hit in hits], []
    return lib.select(filters or None), []


def _ref_file(path: str) -> Iterator[str]:
    from ..errors import InputError
    from ..refs import read_refs

    try:
        handle = open(path, "rb")  # closed below, after the last line
    except OSError as error:
        raise InputError(f"cannot read --ids file {path}: {error.strerror}") from None
    with handle:
        yield from read_refs(handle, path)
