"""Keep Typer's and Click's import from loading modules that a run never uses.

``import typer`` loads ``subprocess`` (and ``selectors``) for Typer's ``launch`` and its
completion installer, ``difflib`` for "did you mean" after a mistyped option, ``tokenize``
(through ``inspect`` and ``linecache``) for reading source code, ``ipaddress`` (through
``urllib.parse``, which ``pathlib`` imports) for bracketed IPv6 hosts, and ``bz2`` and ``lzma``
(through ``shutil``) for compressed archives: about 4 ms of every run, for code that runs only on
a mistake, a traceback or never. While the CLI imports Typer and builds its app, those resolve to
stand-ins (``rlpapers._deferred``) that load the real module when first used: Typer's
``get_close_matches``, bound by name, is one that imports ``difflib`` when called, and
``shutil`` only checks that ``bz2`` and ``lzma`` import, so each is stood in for only where its
compression module exists (``shutil`` would otherwise offer an archive format that fails).
``tests/test_startup.py`` checks that a run leaves them unloaded and that each works when used.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager

from .._deferred import later, standing_in

DEFERRED = ("subprocess", "selectors", "difflib", "tokenize", "ipaddress", "bz2", "lzma")
#: ``shutil`` imports these to learn whether it can offer their archive formats.
_COMPRESSION = {"bz2": "_bz2", "lzma": "_lzma"}


@contextmanager
def typer_lightly() -> Iterator[None]:
    """Import Typer (and the app) inside this, without the modules named in ``DEFERRED``."""
    names = [
        name
        for name in DEFERRED
        if name not in _COMPRESSION or importlib.util.find_spec(_COMPRESSION[name]) is not None
    ]
    bound = {"difflib": {"get_close_matches": later("difflib", "get_close_matches")}}
    with standing_in(names, bound):
        yield
