"""The exporter registry: one module per format, each exposing ``export(papers) -> str``.

Modules are imported only when their format is used, so listing the formats costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module

from ..errors import ExportError
from ..model import Paper

Exporter = Callable[[Iterable[Paper]], str]

#: format name -> (module, one-line description). The CLI builds its --format choices from this.
FORMATS: dict[str, tuple[str, str]] = {
    "json": ("json_", "JSON array of records (the stable schema)"),
    "jsonl": ("json_", "one JSON record per line"),
    "yaml": ("yaml_", "YAML list of records"),
}


def get_exporter(name: str) -> Exporter:
    """The export function for ``name``; an unknown name lists the known ones."""
    try:
        module_name, _ = FORMATS[name]
    except KeyError:
        raise ExportError(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}") from None
    module = import_module(f"{__name__}.{module_name}")
    return getattr(module, f"export_{name}", None) or module.export


def export(papers: Iterable[Paper], format: str, **options: object) -> str:
    """Render ``papers`` in ``format``; options are passed to exporters that take them."""
    exporter = get_exporter(format)
    return exporter(papers, **options) if options else exporter(papers)
