"""``export``: papers (all, a query's hits, or those an --ids file names) in a citation or data
format, to stdout or atomically to a file."""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import typer

from . import render
from .common import expand_refs, fail_on_unknown, filters_of, library, nothing_found
from .errors import report
from .options import (
    AuthorOpt,
    CategoryOpt,
    DerivedOpt,
    PaperFormat,
    SourceOpt,
    TagOpt,
    TopicOpt,
    VenueOpt,
    YearOpt,
    complete_files,
    complete_query,
)
from .root import app

if TYPE_CHECKING:
    from ..filters import Filters
    from ..library import Library
    from ..model import Paper

QueryArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Export the hits of this query (default: every paper).",
        show_default=False,
        autocompletion=complete_query,
    ),
]
ExportFormatOpt = Annotated[
    PaperFormat, typer.Option("--format", "-f", case_sensitive=False, help="Output format.")
]
OutputOpt = Annotated[
    str | None,  # as typed: a Path drops the slash that says "a folder" (out.bib/)
    typer.Option(
        "--output",
        "-o",
        metavar="PATH",
        help="Write to this file (atomically) instead of stdout; '-' is stdout.",
        shell_complete=complete_files,
    ),
]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing --output file.")]
IdsOpt = Annotated[
    str | None,
    typer.Option(
        "--ids",
        shell_complete=complete_files,
        help="Export the papers whose ids or keys are in this file, one per line ('-' for stdin).",
    ),
]
AsciiOpt = Annotated[
    bool,
    typer.Option("--ascii", help="bibtex: LaTeX-encode non-ASCII characters for classic BibTeX."),
]
ExcelOpt = Annotated[
    bool,
    typer.Option("--excel", help="csv: add a BOM and defuse cells that start with = + - @."),
]
FieldsOpt = Annotated[
    str | None,
    typer.Option(
        "--fields",
        help="csv: comma-separated columns to write, in order (see docs/formats.md).",
    ),
]
StyleOpt = Annotated[
    str | None,
    typer.Option(
        "--style",
        click_type=click.Choice(("list", "table"), case_sensitive=False),
        help="markdown: 'list' (default) or 'table'.",
        show_default=False,
    ),
]


@app.command()
def export(
    ctx: typer.Context,
    query: QueryArg = None,
    format: ExportFormatOpt = PaperFormat("bibtex"),
    output: OutputOpt = None,
    force: ForceOpt = False,
    ids: IdsOpt = None,
    ascii: AsciiOpt = False,
    excel: ExcelOpt = False,
    fields: FieldsOpt = None,
    style: StyleOpt = None,
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
    name = str(format)  # the Enum member as its plain name
    target = _output_of(output, name)
    filters = filters_of(category, author, topic, source, year, venue, tag, derived_titles)
    papers, unknown = select_for_export(library(ctx), query, ids, filters)
    if not papers:
        fail_on_unknown(unknown)
        nothing_found()
    options = {
        "ascii": ascii,
        "excel": excel,
        "fields": fields.split(",") if fields is not None else None,
        "style": style,
    }
    _write(papers, name, options, target, force)
    fail_on_unknown(unknown)


def _output_of(output: str | None, format: str) -> Path | None:
    """The file to write, or None for stdout ('-' is stdout, as everywhere); a table, drawn
    for a terminal, is no file's format, and a name ending in a slash names a folder."""
    if output is None or output == "-":
        return None
    if format == "table":
        raise typer.BadParameter(
            "table is drawn for a terminal, not a file; use tsv or csv", param_hint="'--format'"
        )
    if output.endswith(("/", os.sep)):
        raise typer.BadParameter(
            f"{output} names a folder; give a file name", param_hint="'--output'"
        )
    return Path(output)


def _write(
    papers: "list[Paper]", format: str, options: dict[str, Any], output: Path | None, force: bool
) -> None:
    """Print the export, or write it to ``output`` (atomically) and say so on stderr."""
    if output is None:
        render.exported(papers, format, options)
        return
    from ..exporters import save

    save(render.exported_text(papers, format, options), output, force)
    report(f"wrote {len(papers)} paper{'s' if len(papers) != 1 else ''} to {output}", "note")


def select_for_export(
    lib: "Library", query: list[str] | None, ids: str | None, filters: "Filters | None"
) -> "tuple[list[Paper], list[tuple[str, str | None]]]":
    """The papers to export, and the --ids entries that named none. A query and --ids are
    alternatives: the query is never dropped in silence."""
    if ids is not None and query:
        raise typer.BadParameter(
            "export the hits of a query or the papers --ids lists, not both", param_hint="'--ids'"
        )
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
