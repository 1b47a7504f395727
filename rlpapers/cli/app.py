"""The whole Typer app: ``root.app`` with every command module imported, so that it holds every
command (``--help``, errors, shell completion, docs/cli.md and the tests use it). A run that
names one command imports only that command's module instead (``dispatch.app_for``)."""

from . import collection, export, papers, search
from .group import COMMANDS, hoist_globals
from .root import GROUP_VALUE_OPTIONS, app

__all__ = [
    "COMMANDS",
    "GROUP_VALUE_OPTIONS",
    "app",
    "collection",
    "export",
    "hoist_globals",
    "papers",
    "search",
]
