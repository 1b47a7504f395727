"""Markdown (CommonMark): a reading list with a heading per paper, or a compact table."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import ExportError
from ..model import Paper

_INLINE_SPECIALS = re.compile(r"([\\`*_\[\]<>|#])")
_BLOCK_START = re.compile(r"^(\s*)([#>+\-*=]|\d+[.)])(?=\s|$)")


def export(papers: Iterable[Paper], style: str = "list") -> str:
    if style == "list":
        return "\n".join(_section(p) for p in papers)
    if style == "table":
        return _table(papers)
    raise ExportError(f"unknown markdown style {style!r}; styles: list, table")


def inline(text: str) -> str:
    """Text that renders as itself inside a CommonMark line (a heading, a table cell)."""
    return _INLINE_SPECIALS.sub(r"\\\1", " ".join(text.split()))


def _section(paper: Paper) -> str:
    meta = [inline(paper.author_text)]
    meta += [inline(" · ".join(paper.categories)), inline(paper.topic), f"`{paper.key}`"]
    if paper.year:
        meta.append(str(paper.year))
    lines = [f"## {inline(paper.title)}", "", " — ".join(m for m in meta if m), ""]
    lines.append(_BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), paper.abstract))
    if paper.first_link:
        lines += ["", f"<{paper.first_link}>"]
    return "\n".join(lines) + "\n"


def _table(papers: Iterable[Paper]) -> str:
    rows = ["| key | title | authors | categories |", "| --- | --- | --- | --- |"]
    for paper in papers:
        cells = [
            f"`{paper.key}`",
            inline(paper.title),
            inline(paper.author_text),
            inline(" · ".join(paper.categories)),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
