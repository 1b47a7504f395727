"""RIS (EndNote, Zotero, Mendeley): ``TY  - GEN`` records, the generic type, like BibTeX @misc."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import Paper
from ..parse.names import strip_markup
from . import DERIVED_NOTE, surname_first


def export(papers: Iterable[Paper]) -> str:
    return "".join(record(p) for p in papers)


def record(paper: Paper) -> str:
    lines = [("TY", "GEN"), ("ID", paper.key), ("TI", strip_markup(paper.title))]
    lines += [("AU", _author(author)) for author in paper.authors]
    if paper.authors_truncated:
        lines.append(("AU", "others"))
    lines += [("PY", str(paper.year))] if paper.year else []
    lines += [("T2", paper.venue)] if paper.venue else []
    lines += [("AB", paper.abstract)] if paper.abstract else []  # an entry may have none
    lines += [("KW", keyword) for keyword in paper.keywords]
    lines += [("UR", paper.first_link)] if paper.first_link else []
    lines += [("DO", paper.doi)] if paper.doi else []
    lines += [("N1", paper.note)] if paper.note else []
    lines += [("N1", DERIVED_NOTE)] if paper.title_derived else []
    lines.append(("ER", ""))
    return "".join(f"{tag}  - {_one_line(value)}\n" for tag, value in lines) + "\n"


def _author(name: str) -> str:
    split = surname_first(name)
    if not split:
        return name
    return ", ".join(part for part in split if part)  # RIS: Last, First, Suffix


def _one_line(value: str) -> str:
    return " ".join(value.split())
