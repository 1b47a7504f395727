"""The exporter registry: one module per format, each exposing ``export(papers) -> str``.

Modules are imported only when their format is used, so listing the formats costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ExportError, OptionNotTaken

if TYPE_CHECKING:
    from ..hit import Hit
    from ..model import Paper

#: ``export(papers, **options) -> str``; the JSON family also accepts hits.
Exporter = Callable[..., str]

#: format name -> (module, one-line description). The CLI builds its --format choices from this.
FORMATS: dict[str, tuple[str, str]] = {
    "bibtex": ("bibtex", "BibTeX @misc entries (UTF-8; --ascii for LaTeX-encoded)"),
    "csv": ("csv_", "CSV with a header row (--excel, --fields)"),
    "markdown": ("markdown", "a Markdown reading list (--style table for a table)"),
    "json": ("json_", "JSON array of records (the stable schema)"),
    "jsonl": ("json_", "one JSON record per line"),
    "yaml": ("yaml_", "YAML list of records"),
    "csljson": ("csljson", "CSL-JSON for Zotero, pandoc and Mendeley"),
    "ris": ("ris", "RIS for EndNote, Zotero and Mendeley"),
}

#: What BibTeX, CSL-JSON and RIS say about a title the parser derived (``Paper.title_derived``).
DERIVED_NOTE = "Title derived from the abstract"

#: Options an exporter takes beyond the papers; others are refused with a clear message.
OPTIONS: dict[str, set[str]] = {
    "bibtex": {"ascii"},
    "csv": {"excel", "fields"},
    "markdown": {"style"},
}


def surname_first(author: str) -> tuple[str, str, str] | None:
    """``(surname, given names, suffix)`` when ``author`` must be written surname first to be
    read right: its surname starts with a capitalised particle (``Luc Van Gool``), which BibTeX,
    and a RIS reader that splits at the last space (Zotero), would make a given name, it ends
    with a suffix (``Robert W. Heath Jr.``), which they would take for the surname, or it is
    written surname first without a comma (``Sutton R.S.``, as Scopus writes names)."""
    from ..text import given_names, name_suffix, surname

    family = surname(author)
    given = given_names(author)
    suffix = name_suffix(author)
    particle = " " in family and family[0].isupper()
    turned = not author.startswith(given)  # written surname first: Sutton R.S.
    if given and (particle or suffix or turned) and "," not in author:
        return family, given, suffix
    return None


def get_exporter(name: str) -> Exporter:
    """The export function for ``name``; an unknown name lists the known ones."""
    try:
        module_name, _ = FORMATS[name]
    except KeyError:
        raise ExportError(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}") from None
    module = import_module(f"{__name__}.{module_name}")
    exporter: Exporter = getattr(module, f"export_{name}", None) or module.export
    return exporter


def export(papers: Iterable[Paper] | Iterable[Hit], format: str, **options: object) -> str:
    """Render ``papers`` in ``format`` (JSON, JSON Lines and YAML also take hits, with scores). Options (``ascii``, ``excel``, ``fields``, ``style``)
    go to the formats that take them; an option a format does not take is an ``ExportError``."""
    exporter = get_exporter(format)
    return exporter(papers, **check_options(format, options))


def check_options(format: str, options: dict[str, object]) -> dict[str, object]:
    """The options that were given (not None or False); one that ``format`` does not take is an
    ``OptionNotTaken`` naming the formats that do."""
    given = {name: value for name, value in options.items() if value not in (None, False)}
    extra = sorted(set(given) - OPTIONS.get(format, set()))
    if extra:
        takers = [f for f, names in OPTIONS.items() if extra[0] in names]
        raise OptionNotTaken(extra[0], format, takers)
    return given


def save(text: str, path: Path, force: bool = False) -> None:
    """Write ``text`` to ``path`` safely (atomically, following symlinks, keeping the mode):
    see ``rlpapers.files.save``. An existing file is replaced only with ``force``."""
    from ..files import save as save_file

    save_file(text, path, force)
