"""CSV (RFC 4180 via the csv module, UTF-8), one row per paper, in a fixed column order.

``excel=True`` writes a BOM (Excel otherwise reads UTF-8 as a legacy code page and garbles the
Chinese topics), defuses cells that Excel would run as formulas (CSV injection) and cuts a cell
longer than Excel holds (32,767 characters; a longer one spills into the rows below) with an
ellipsis.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from ..errors import ExportError
from ..model import Paper

COLUMNS = (
    "id",
    "key",
    "title",
    "name",
    "authors",
    "categories",
    "topic",
    "source",
    "abstract",
    "links",
    # from metadata overrides
    "year",
    "venue",
    "url",
    "doi",
    "tags",
    "note",
)
#: Every column --fields may name: the default ones and these.
FIELDS = (*COLUMNS, "title_derived")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: The most characters an Excel cell holds.
EXCEL_CELL = 32_767


def export(
    papers: Iterable[Paper], excel: bool = False, fields: Sequence[str] | None = None
) -> str:
    import csv  # here: the tsv lines of list and search use ``cell`` alone

    columns = check_fields(fields) if fields else COLUMNS
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for paper in papers:
        row = [cell(paper, column) for column in columns]
        writer.writerow([_defuse(value) for value in row] if excel else row)
    return ("\ufeff" if excel else "") + out.getvalue()


def check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    chosen = tuple(f.strip() for f in fields if f.strip())
    unknown = [f for f in chosen if f not in FIELDS]
    if unknown or not chosen:
        raise ExportError(
            f"unknown CSV field {unknown[0] if unknown else ''!r}; fields: {', '.join(FIELDS)}"
        )
    return chosen


def cell(paper: Paper, column: str) -> str:
    """One field as text: lists joined with "; " (links with spaces), no year as "", flags as
    true/false."""
    if column == "authors":
        return "; ".join(paper.authors) + ("; et al." if paper.authors_truncated else "")
    if column == "links":
        return " ".join(paper.links)
    value = getattr(paper, column)
    if isinstance(value, tuple):
        return "; ".join(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _defuse(value: str) -> str:
    value = "'" + value if value.startswith(_FORMULA_START) else value
    return value if len(value) <= EXCEL_CELL else value[: EXCEL_CELL - 1] + "…"
