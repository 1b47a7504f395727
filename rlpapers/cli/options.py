"""The options and arguments more than one command takes, each declared once, and the shell
completion hooks they name (the work is in cli/complete.py, imported only when the shell asks).

No ``from __future__ import annotations`` here or in the command modules: Typer reads the
commands' annotations at run time."""

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import click
import typer

from . import render

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

# One Enum per kind of output, built from the registries, so --help lists the real choices and
# anything else is a usage error listing them. (Making both costs nothing measurable at start.)
PaperFormat = StrEnum("PaperFormat", {name: name for name in render.PAPER_FORMATS})  # type: ignore[misc]
ReportFormat = StrEnum("ReportFormat", {name: name for name in render.REPORT_FORMATS})  # type: ignore[misc]


def complete_query(incomplete: str) -> list[tuple[str, str]]:
    from .complete import query_fields

    return query_fields(incomplete)


def complete_refs(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    from .complete import refs

    return refs(ctx, incomplete)


def complete_files(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> "list[CompletionItem]":
    """Offer nothing, so that bash, zsh and fish complete file names themselves."""
    return []


# --- shared options ----------------------------------------------------------------------------

FormatOpt = Annotated[
    PaperFormat | None,
    typer.Option(
        "--format",
        "-f",
        case_sensitive=False,
        help="Output format. Default: table on a terminal, tsv in a pipe.",
        show_default=False,
    ),
]
ReportFormatOpt = Annotated[
    ReportFormat | None,
    typer.Option(
        "--format",
        "-f",
        case_sensitive=False,
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
    typer.Option("--category", help="Keep papers whose category contains this (repeatable: any)."),
]
AuthorOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--author",
        help="Keep papers with an author containing this (accents ignored; repeatable: any).",
    ),
]
TopicOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--topic", help="Keep papers whose topic (file header) contains this (repeatable: any)."
    ),
]
SourceOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--source", help="Keep papers from files whose name contains this (repeatable: any)."
    ),
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
