"""BibTeX: one ``@misc`` entry per paper, every field valid LaTeX with balanced braces.

``@misc`` because these are abstracts of preprints and papers whose venue we usually do not
know: it needs no field we lack, classic BibTeX styles and biblatex both print it, and it claims
nothing (``@unpublished`` would assert the work is unpublished and requires a ``note``). A venue
from the metadata goes into ``howpublished``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Paper
from . import DERIVED_NOTE, surname_first
from .latex import protect_capitals, to_latex, url_safe


def export(papers: Iterable[Paper], ascii: bool = False) -> str:
    return "\n".join(entry(p, ascii) for p in papers)


def entry(paper: Paper, ascii: bool = False) -> str:
    fields = [
        ("author", _authors(paper, ascii)),
        ("title", protect_capitals(to_latex(paper.title, ascii))),
        ("year", str(paper.year) if paper.year else ""),
        ("howpublished", to_latex(paper.venue, ascii)),
        ("doi", url_safe(paper.doi)),
        ("url", url_safe(paper.first_link)),
        ("keywords", to_latex(", ".join(paper.keywords), ascii)),
        ("abstract", to_latex(paper.abstract, ascii)),
        ("note", to_latex(_note(paper), ascii)),
    ]
    body = ",\n".join(f"  {name} = {{{_one_line(value)}}}" for name, value in fields if value)
    return f"@misc{{{paper.key},\n{body}\n}}\n"


def _one_line(value: str) -> str:
    """A field on one line: BibTeX reads a line break as a space, and bibtexparser takes a line
    that starts with ``@name{`` for a new entry (records hold none; papers made by hand may)."""
    return " ".join(value.splitlines())


def _authors(paper: Paper, ascii: bool) -> str:
    names = [_name(name, ascii) for name in paper.authors]
    if paper.authors_truncated:
        names.append("others")
    return " and ".join(names)


def _name(name: str, ascii: bool) -> str:
    """One author as BibTeX reads it: braced whole when BibTeX would cut it up, surname first
    when the surname starts with a capitalised particle (BibTeX takes ``Luc Van Gool``'s
    ``Van`` for a given name, unlike a lower-case ``van``), and as ``von Last, Jr, First`` with
    a suffix (``Heath, Jr., Robert W.``: BibTeX took ``Jr.`` for the surname)."""
    if _whole(name):
        return "{" + to_latex(name, ascii) + "}"
    split = surname_first(name)
    if split:
        family, given, suffix = (to_latex(part, ascii) for part in split)
        return f"{family}, {suffix}, {given}" if suffix else f"{family}, {given}"
    return to_latex(name, ascii)


def _whole(name: str) -> bool:
    """Whether BibTeX would cut ``name`` up: at `` and `` into two names, at a comma into
    surname and given name (``Acme, Inc.``, a corporate name); braced, it is one name."""
    return " and " in name.lower() or "," in name


def _note(paper: Paper) -> str:
    what = "Abstract from " if paper.abstract else "Entry from "
    where = what + ", ".join(paper.sources or (f"{paper.source}:{paper.line}",))
    parts = [paper.note, DERIVED_NOTE if paper.title_derived else "", where]
    return ". ".join(part.rstrip(".") for part in parts if part)
