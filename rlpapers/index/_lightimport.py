"""Keep Whoosh's import from loading modules that search never uses.

``whoosh.compat`` imports ``urllib.request`` (for a download helper), ``whoosh.reading``
imports the ``cached_property`` package, which imports ``asyncio``, and ``whoosh.query.terms``
imports ``whoosh.lang.morph_en`` (English word variations for a query type rlpapers never
builds, 5 ms of regular expressions compiled): together about 40 ms of every ``rlpapers
search``, for code that never runs. ``html``, ``random``, ``calendar``, ``tempfile`` and
``queue`` serve Whoosh's highlighter and its index writing, about 2-3 ms more. While Whoosh is imported, those names resolve to
stand-ins that load the real module on first attribute access; afterwards the stand-ins are taken
out of ``sys.modules``, so any later ``import asyncio`` gets the real module. Modules a process has
already imported are left alone.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

DEFERRED = (
    "asyncio",
    "urllib.request",
    "whoosh.lang.morph_en",
    # modules Whoosh imports for code a search never runs: html escaping (its highlighter's),
    # random sampling, dates, temporary files and queues (writing an index)
    "html",
    "random",
    "calendar",
    "tempfile",
    "queue",
)


class _Deferred(types.ModuleType):
    """A module that becomes the real one the first time any attribute is read."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # the import system probing (__path__, __spec__, …)
            raise AttributeError(attr)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        return getattr(real, attr)


def _urlretrieve(*args: Any, **kwargs: Any) -> Any:
    from urllib.request import urlretrieve

    return urlretrieve(*args, **kwargs)


def _escape(*args: Any, **kwargs: Any) -> Any:
    from html import escape

    return escape(*args, **kwargs)


def _variations(*args: Any, **kwargs: Any) -> Any:
    from whoosh.lang.morph_en import variations

    return variations(*args, **kwargs)


@contextmanager
def deferred_imports() -> Iterator[None]:
    stand_ins: dict[str, Any] = {}
    for name in DEFERRED:
        if name not in sys.modules:
            stand_ins[name] = _Deferred(name)
    if "urllib.request" in stand_ins:
        stand_ins["urllib.request"].urlretrieve = _urlretrieve  # imported by name at import time
    if "whoosh.lang.morph_en" in stand_ins:  # imported by name at import time
        stand_ins["whoosh.lang.morph_en"].variations = _variations
    if "html" in stand_ins:  # ``whoosh.compat`` binds ``escape`` by name
        stand_ins["html"].escape = _escape
    if "asyncio" in stand_ins:  # cached_property asks this on first use; the answer is inspect's
        stand_ins["asyncio"].iscoroutinefunction = inspect.iscoroutinefunction
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def import_whoosh() -> None:
    """Import the Whoosh modules rlpapers uses, without their unused heavy dependencies."""
    with deferred_imports():
        import whoosh.compat

        from ._unpickle import install

        install()  # before the modules that bind its pickle readers by name
        # the codec (what a view's table of contents is unpickled into), the collectors and
        # the searcher are imported here too, so that their module-level imports meet the
        # stand-ins
        import whoosh.codec.whoosh3
        import whoosh.collectors
        import whoosh.fields
        import whoosh.filedb.filestore
        import whoosh.index
        import whoosh.query  # its terms module binds morph_en's ``variations`` by name
        import whoosh.reading
        import whoosh.searching  # noqa: F401
