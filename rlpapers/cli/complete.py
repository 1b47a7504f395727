"""Shell completion (bash, zsh, fish): what TAB offers beyond commands, options and --format
choices, which Click completes by itself.

Imported only when the shell asks (Typer sees ``_RLPAPERS_COMPLETE`` in the environment and calls
these before any command runs): an ordinary run never loads this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

    from ..library import Library

#: At most this many keys or ids are offered: a shell menu of thousands helps nobody.
MOST = 200


def query_fields(incomplete: str) -> list[tuple[str, str]]:
    """``field:`` names for a query word being typed (``ti`` -> ``title:``)."""
    if ":" in incomplete or incomplete.startswith(("-", '"', "(")):
        return []
    from ..querylang import ALIASES, QUERY_FIELDS

    names = [*QUERY_FIELDS, *(alias for aliases in ALIASES.values() for alias in aliases)]
    return [(f"{name}:", "search this field") for name in names if name.startswith(incomplete)]


def refs(ctx: click.Context, incomplete: str) -> list[tuple[str, str]]:
    """Citation keys (and ids, from four characters on) that start with what is typed, each
    with its title; nothing when the corpus cannot be read (completion must never fail)."""
    try:
        with _library(ctx) as library:
            papers = library.papers
    except Exception:  # a broken config or corpus: offer nothing, say nothing
        return []
    found = [(p.key, _short(p.title)) for p in papers if p.key.startswith(incomplete)]
    if len(incomplete) >= 4:
        found += [(p.id, _short(p.title)) for p in papers if p.id.startswith(incomplete)]
    return sorted(found)[:MOST]


def _short(title: str, width: int = 60) -> str:
    """A title short enough for one line of a shell's menu (whole words)."""
    if len(title) <= width:
        return title
    return title[: width + 1].rsplit(" ", 1)[0] + " …"


def _library(ctx: click.Context) -> Library:
    """The Library the command line names (``--corpus``/``--index-dir``, before or after the
    command), as the command itself would open it."""
    import warnings

    from ..config import resolve
    from ..library import Library

    root = ctx.find_root().params
    warnings.simplefilter("ignore")  # notes about the index would garble the shell's menu
    return Library(settings=resolve(root.get("corpus") or None, root.get("index_dir")))
