"""Generate docs/cli.md from the app itself, so --help and the docs cannot drift.

    python -m rlpapers.cli.reference > docs/cli.md

tests/test_docs.py fails when docs/cli.md is stale.
"""

from __future__ import annotations

import click
import typer

from .app import app

WIDTH = 100


def reference() -> str:
    root = typer.main.get_command(app)
    parts = [
        "# CLI reference\n",
        "Generated from the app by `python -m rlpapers.cli.reference > docs/cli.md`; "
        "a test keeps it in sync with `--help`.\n",
    ]
    parts.append(_section("rlpapers", root, None))
    assert isinstance(root, click.Group)
    parent = click.Context(
        root,
        info_name="rlpapers",
        max_content_width=WIDTH,
        terminal_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    for name in root.list_commands(parent):
        command = root.get_command(parent, name)
        if command is not None and not command.hidden:
            parts.append(_section(f"rlpapers {name}", command, parent))
    return "\n".join(parts)


def _section(title: str, command: click.Command, parent: click.Context | None) -> str:
    name = title.split()[-1]
    ctx = click.Context(
        command,
        info_name=name,
        parent=parent,
        max_content_width=WIDTH,
        terminal_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    return f"## `{title}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n"


if __name__ == "__main__":
    print(reference(), end="")
