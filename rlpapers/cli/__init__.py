"""The command-line interface. ``main`` is the console-script entry point."""

from __future__ import annotations


def main() -> None:
    from .app import app

    app(prog_name="rlpapers")
