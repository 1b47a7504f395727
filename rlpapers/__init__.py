"""rlpapers: search, list and cite plain-text collections of paper abstracts.

    >>> import rlpapers
    >>> lib = rlpapers.Library()            # the bundled seed corpus
    >>> hits = lib.search("entropy", limit=3)
    >>> print(rlpapers.export([h.paper for h in hits], "bibtex"))

Names are imported lazily so that ``import rlpapers`` (and the CLI's start-up) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Filters",
    "Hit",
    "Library",
    "Paper",
    "ParseError",
    "QueryError",
    "SearchRequest",
    "export",
    "load_corpus",
    "parse_file",
    "parse_text",
]

_LAZY = {
    "Paper": "model",
    "Hit": "hit",
    "Library": "library",
    "Filters": "filters",
    "load_corpus": "corpus",
    "parse_file": "parse",
    "parse_text": "parse",
    "export": "exporters",
    "ParseError": "errors",
    "QueryError": "errors",
    "SearchRequest": "request",
}

if TYPE_CHECKING:
    from .corpus import load_corpus
    from .errors import ParseError, QueryError
    from .exporters import export
    from .filters import Filters
    from .hit import Hit
    from .library import Library
    from .model import Paper
    from .parse import parse_file, parse_text
    from .request import SearchRequest


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'rlpapers' has no attribute {name!r}")
