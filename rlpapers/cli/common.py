"""What the commands share beyond their options: the run's Library, the output format, the
filters the options ask for, and the way a command says that nothing was found."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, NoReturn

import typer

from . import render
from .errors import ExitCode, report
from .options import TERMINAL_LIMIT

if TYPE_CHECKING:
    from ..filters import Filters
    from ..library import Library


def library(ctx: typer.Context, writing: bool = True) -> Library:
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
    lib: Library = obj["library"]
    return lib


def fmt_of(value: str | None) -> str:
    """The format asked for (an option's Enum member, as its plain name), or the default."""
    return str(value) if value is not None else render.default_format()


def shown_limit(limit: int | None, all_: bool) -> int | None:
    """How many rows to show: every one with --all, else --limit, else a terminal's short list
    (``TERMINAL_LIMIT``) or, in a pipe, every one."""
    if all_:
        return None
    return limit or (TERMINAL_LIMIT if render.is_terminal() else None)


def filters_of(
    category: list[str] | None,
    author: list[str] | None,
    topic: list[str] | None,
    source: list[str] | None,
    year: str | None = None,
    venue: list[str] | None = None,
    tag: list[str] | None = None,
    derived_titles: bool = False,
) -> Filters | None:
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


def nothing_found(what: str = "no papers match") -> NoReturn:
    report(what, "note")
    raise typer.Exit(ExitCode.NOT_FOUND)


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
        yield from read_refs(binary(stdin())) if ref == "-" else [ref]


def stdin() -> IO[str]:
    """stdin, or an error when the run was started with it closed (``<&-``)."""
    if sys.stdin is None:
        from ..errors import InputError

        raise InputError("stdin is closed: there is nothing to read from '-'")
    return sys.stdin
