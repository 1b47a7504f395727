"""Markdown (CommonMark): a reading list with a heading per paper, or a compact table."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import ExportError
from ..model import Paper

# An ampersand that starts an entity or character reference (``&amp;``, ``&#169;``) renders as
# the character it names; escaped, it renders as written.
_REFERENCE = r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)"
_INLINE_SPECIALS = re.compile(rf"([\\`*_\[\]<>|#]|{_REFERENCE})")
# What turns an abstract's text into HTML, a link or another character: raw HTML and autolinks
# start with "<", links and images with "[", references with "&". Backslashes just before one
# are doubled so the escape holds.
_MARKUP = re.compile(rf"(\\*)([<\[\]]|{_REFERENCE})")
# What opens a block at the start of a line: a heading, a list item or a setext underline (each
# before a space), a quote, a code fence (its mark is escaped), or an ordered list item (escaped
# after its number: ``1\.``).
_BLOCK_START = re.compile(
    r"^(?:(?P<mark>#{1,6}(?=\s|$)|[+\-*=](?=\s|$)|>|`{3}|~{3})|\d{1,9}(?=[.)](?:\s|$)))"
)


def export(papers: Iterable[Paper], style: str = "list") -> str:
    if style == "list":
        return "\n".join(_section(p) for p in papers)
    if style == "table":
        return _table(papers)
    raise ExportError(f"unknown markdown style {style!r}; styles: list, table")


def inline(text: str) -> str:
    """Text that renders as itself inside a CommonMark line (a heading, a table cell)."""
    return _INLINE_SPECIALS.sub(r"\\\1", " ".join(text.split()))


def prose(text: str) -> str:
    """An abstract as Markdown: its emphasis and maths kept, but no raw HTML and no links."""
    return _MARKUP.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), text)


def paragraph(text: str) -> str:
    """``text`` with what would open a block at its start (``## ``, ``>``, a code fence, a list
    marker) escaped, so it renders as a paragraph and never swallows what follows it."""
    text = text.lstrip()  # four spaces would open a code block
    match = _BLOCK_START.match(text)
    if not match:
        return text
    at = match.start("mark") if match.group("mark") else match.end()
    return text[:at] + "\\" + text[at:]


def _section(paper: Paper) -> str:
    meta = [inline(paper.author_text)]
    meta += [inline(" · ".join(paper.categories)), inline(paper.topic), f"`{paper.key}`"]
    if paper.venue:
        meta.append(inline(paper.venue))
    if paper.year:
        meta.append(str(paper.year))
    if paper.tags:
        meta.append(inline(", ".join(paper.tags)))
    lines = [f"## {inline(paper.title)}", "", paragraph(" — ".join(m for m in meta if m)), ""]
    # one line, as records hold it: a later line of a hand-made abstract could open a block
    lines.append(paragraph(prose(" ".join(paper.abstract.splitlines()))))
    link = safe_link(paper.first_link)
    if link:
        lines += ["", paragraph(link)]
    return "\n".join(lines) + "\n"


_SAFE_URL = re.compile(r"https?://[^\s<>\\\x00-\x1f\x7f]+", re.IGNORECASE)
_DOI = re.compile(r"(?:doi:|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)", re.IGNORECASE)


def safe_link(url: str) -> str:
    """``url`` as an autolink if it is http(s) or a DOI; any other scheme (``javascript:``,
    ``data:``) is shown as plain text, never as a link."""
    url = url.strip()
    if _SAFE_URL.fullmatch(url):
        return f"<{url}>"
    doi = _DOI.fullmatch(url)
    if doi and not re.search(r"[<>\\]", doi.group(1)):
        return f"<https://doi.org/{doi.group(1)}>"
    return inline(url)


def _table(papers: Iterable[Paper]) -> str:
    rows = ["| key | title | authors | year | categories |", "| --- | --- | --- | --- | --- |"]
    for paper in papers:
        cells = [
            f"`{paper.key}`",
            inline(paper.title),
            inline(paper.author_text),
            str(paper.year or ""),
            inline(" · ".join(paper.categories)),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
