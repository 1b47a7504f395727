"""CSL-JSON, as Zotero, pandoc/citeproc and Mendeley import it.

Type ``article`` is CSL's type for preprints and other articles outside a journal.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..model import Paper
from ..parse.names import strip_markup
from . import DERIVED_NOTE


def export(papers: Iterable[Paper]) -> str:
    return json.dumps([item(p) for p in papers], ensure_ascii=False, indent=2) + "\n"


def item(paper: Paper) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": paper.key,
        "type": "article",
        "title": strip_markup(paper.title),
        "author": [_name(a) for a in paper.authors],
    }
    if paper.abstract:  # a bibliography entry may have none: no empty field
        data["abstract"] = paper.abstract
    optional = {
        "keyword": ", ".join(paper.keywords),
        "URL": paper.first_link,
        "DOI": paper.doi,
        "container-title": paper.venue,
        "note": derived_note(paper),
        "issued": {"date-parts": [[paper.year]]} if paper.year else None,
    }
    data.update({k: v for k, v in optional.items() if v})
    if paper.authors_truncated:
        data["author"].append({"literal": "others"})
    return data


def derived_note(paper: Paper) -> str:
    """The paper's note, with a sentence saying the title was derived when it was."""
    parts = [paper.note, DERIVED_NOTE if paper.title_derived else ""]
    return ". ".join(part.rstrip(".") for part in parts if part)


def _name(author: str) -> dict[str, str]:
    from ..text import given_names, has_cjk, name_suffix, surname

    given = given_names(author)
    if not given or has_cjk(author) or "," in author:  # "Acme, Inc.": a corporate name
        return {"literal": author}
    suffix = name_suffix(author)
    return {"family": surname(author), "given": given, **({"suffix": suffix} if suffix else {})}
