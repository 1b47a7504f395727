"""Commands that print papers as they are: ``list``, ``show`` and ``parse`` (a file that is
not in the corpus yet)."""

from collections.abc import Callable
from typing import Annotated

import typer

from . import render
from .common import (
    expand_refs,
    fail_on_unknown,
    filters_of,
    fmt_of,
    library,
    nothing_found,
    shown_limit,
    stdin,
)
from .errors import report
from .options import (
    AllOpt,
    AuthorOpt,
    CategoryOpt,
    DerivedOpt,
    FormatOpt,
    HeaderOpt,
    LimitOpt,
    SourceOpt,
    TagOpt,
    TopicOpt,
    VenueOpt,
    YearOpt,
    complete_files,
    complete_refs,
)
from .root import app

RefsArg = Annotated[
    list[str],
    typer.Argument(
        help="Ids, keys or unique id prefixes; '-' reads them from stdin.",
        show_default=False,
        autocompletion=complete_refs,
    ),
]
SeedFileArg = Annotated[
    str,
    typer.Argument(
        help="A seed file to check, or '-' for stdin.",
        show_default=False,
        shell_complete=complete_files,
    ),
]


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
    fmt = fmt_of(format)
    if fmt == "ids" and filters is None:  # no record decoded: ids come from the store's index
        ids = library(ctx).ids()
        _listed(len(ids), limit, all_, lambda n: render.ids(ids[:n], header))
        return
    found = library(ctx).select(filters)
    _listed(len(found), limit, all_, lambda n: render.papers(found[:n], fmt, header))


def _listed(count: int, limit: int | None, all_: bool, show: Callable[[int | None], None]) -> None:
    """Show the first papers of ``count`` (``show(n)``): exit 1 for none; on a terminal a note
    says how many were left out."""
    if not count:
        nothing_found()
    shown = shown_limit(limit, all_)
    show(shown)
    if limit is None and shown is not None and count > shown:
        report(f"{shown} of {count} shown (--all for the rest)", "note")


@app.command()
def show(
    ctx: typer.Context, refs: RefsArg, format: FormatOpt = None, header: HeaderOpt = False
) -> None:
    """Show papers in full. REFS: ids, keys or unique id prefixes; '-' reads them from stdin.

    Unknown references are named on stderr (with the closest key) and the exit code is 1; the
    papers that were found are still shown.
    """
    found = library(ctx).find(list(expand_refs(refs)))
    if not found.papers and not found.unknown:  # '-' read an empty list
        nothing_found()
    if found.papers:
        render.detail(found.papers, fmt_of(format), header)
    fail_on_unknown(found.unknown)


@app.command()
def parse(
    ctx: typer.Context, file: SeedFileArg, format: FormatOpt = None, header: HeaderOpt = False
) -> None:
    """Parse one file (or '-' for stdin) and print its records, to check it before adding it."""
    from ..parse import parse_bytes, read_limited
    from ..readers import read_file
    from ..refs import binary
    from ..store.finish import finish

    encoding = ctx.ensure_object(dict).get("encoding")
    if file == "-":
        records = parse_bytes(read_limited(binary(stdin()), "<stdin>"), encoding=encoding)
    else:
        records = read_file(file, encoding=encoding)
    if not records:
        nothing_found("no records")
    render.papers(finish(records), fmt_of(format), header)
