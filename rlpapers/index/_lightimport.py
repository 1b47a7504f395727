"""Keep Whoosh's import from loading modules that search never uses.

``whoosh.compat`` imports ``urllib.request`` (for a download helper), ``whoosh.reading``
imports the ``cached_property`` package, which imports ``asyncio``, and ``whoosh.query.terms``
imports ``whoosh.lang.morph_en`` (English word variations for a query type rlpapers never
builds, 5 ms of regular expressions compiled): together about 40 ms of every ``rlpapers
search``, for code that never runs. ``html``, ``random``, ``calendar``, ``tempfile`` and
``queue`` serve Whoosh's highlighter and its index writing, about 2-3 ms more. ``hashlib`` loads
OpenSSL (about 3 ms) for the one function a search uses from it, ``md5`` of a term (Whoosh's hash
tables), which CPython's own ``_md5`` gives at once; ``whoosh.sorting`` (sorted and grouped
results), ``whoosh.automata.lev`` (fuzzy terms) and ``mmap`` (the view is opened without it) are
not used by a plain search either, about 1 ms together. While Whoosh is imported, those names
resolve to stand-ins that load the real module on first attribute access; afterwards the
stand-ins are taken out of ``sys.modules``, so any later ``import asyncio`` gets the real module.
Modules a process has already imported are left alone.

``whoosh.query``'s ``__init__`` star-imports its nine submodules; a search needs the first four
(the core, terms, and/or, phrases). It is made a lazy package (``_LazyPackage``) that imports a
submodule when a name is first looked for in it, so ranges, wrappers, nested, column and span
queries load only when used (about 1 ms).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .._deferred import later, standing_in

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
    # OpenSSL, for md5 (see BOUND); sorting, fuzzy terms and memory-mapped files
    "hashlib",
    "whoosh.sorting",
    "whoosh.automata.lev",
    "mmap",
)


#: Packages whose ``__init__`` is nothing but ``from PACKAGE.SUB import *`` of these, in order
#: (``tests/test_startup.py`` checks the installed Whoosh's against this).
LAZY_PACKAGES = {
    "whoosh.query": (
        "qcore",
        "terms",
        "compound",
        "positional",
        "ranges",
        "wrappers",
        "nested",
        "qcolumns",
        "spans",
    ),
}


class _LazyPackage(types.ModuleType):
    """A package made as its star-importing ``__init__`` would make it, one submodule at a time:
    a name not yet here is looked for in the submodules not yet loaded, in the ``__init__``'s
    order, each imported (and its public names copied, later ones overriding earlier ones, as
    ``import *`` does) until the name turns up. ``dir()``, ``__all__`` (``import *``) and an
    unknown name load them all."""

    _pending: list[str]

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr != "__all__":
            raise AttributeError(attr)
        while self._pending:
            self._load_next()
            if attr in self.__dict__:
                return self.__dict__[attr]
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        while self._pending:
            self._load_next()
        return list(self.__dict__)

    def _load_next(self) -> None:
        sub = importlib.import_module(f"{self.__name__}.{self._pending.pop(0)}")
        self.__dict__.update((k, v) for k, v in vars(sub).items() if not k.startswith("_"))


def _lazy_package(name: str) -> None:
    """Put ``name`` in ``sys.modules`` as a ``_LazyPackage`` (unless it is imported already)."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _LazyPackage
    module._pending = list(LAZY_PACKAGES[name])  # type: ignore[attr-defined]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    setattr(sys.modules[parent], child, module)


def _bound() -> dict[str, dict[str, Any]]:
    """The names Whoosh binds from deferred modules at import time (``from html import
    escape``), each given as a function that imports the real one when called."""
    bound: dict[str, dict[str, Any]] = {
        "urllib.request": {"urlretrieve": later("urllib.request", "urlretrieve")},
        "whoosh.lang.morph_en": {"variations": later("whoosh.lang.morph_en", "variations")},
        "html": {"escape": later("html", "escape")},  # ``whoosh.compat``
        # cached_property asks this on first use; the answer is inspect's
        "asyncio": {"iscoroutinefunction": inspect.iscoroutinefunction},
    }
    try:  # CPython's own md5: the same digests as OpenSSL's, without loading it
        from _md5 import md5

        bound["hashlib"] = {"md5": md5}  # ``whoosh.filedb.filetables``
    except ImportError:  # another Python implementation: hashlib is imported as it is
        pass
    return bound


@contextmanager
def deferred_imports() -> Iterator[None]:
    bound = _bound()
    with standing_in((n for n in DEFERRED if n != "hashlib" or n in bound), bound):
        yield


def import_whoosh() -> None:
    """Import the Whoosh modules rlpapers uses, without their unused heavy dependencies."""
    with deferred_imports():
        import whoosh.compat

        _lazy_package("whoosh.query")  # before the modules that import it
        # the codec, the collectors and the searcher are imported here too, so that their
        # module-level imports meet the stand-ins
        import whoosh.codec.whoosh3
        import whoosh.collectors
        import whoosh.fields
        import whoosh.filedb.filestore
        import whoosh.index
        import whoosh.query.terms  # binds morph_en's ``variations`` by name
        import whoosh.reading
        import whoosh.searching  # noqa: F401

        from .plainfiles import install

        install()  # the view's files in plain formats, and pickle's readers refused
