"""Stand-ins for modules that importing a library loads but a run never uses.

While ``standing_in(names)`` is open, each of ``names`` not imported yet resolves to a stand-in
module that loads the real one the first time any of its attributes is read; afterwards the
stand-ins are taken out of ``sys.modules``, so a later ``import`` gets the real module, and a
module that kept a stand-in reaches the real one through it. A name bound at import time
(``from html import escape``) is given to the stand-in beforehand (``bound``): usually
``later(module, name)``, a function that imports the real one when called. Modules a process
has already imported are left alone. ``index/_lightimport.py`` (Whoosh's imports) and
``cli/_lightimport.py`` (Typer's and Click's) say which modules, and why each is safe.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any


class Deferred(types.ModuleType):
    """A module that becomes the real one the first time any attribute is read."""

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # the import system probing (__path__, __spec__, …)
            raise AttributeError(attr)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        return getattr(real, attr)


def later(module: str, name: str) -> Callable[..., Any]:
    """A function standing in for ``module.name``: it imports the real one when called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


@contextmanager
def standing_in(
    names: Iterable[str], bound: Mapping[str, Mapping[str, Any]] | None = None
) -> Iterator[None]:
    stand_ins: dict[str, Deferred] = {}
    for name in names:
        if name not in sys.modules:
            stand_ins[name] = Deferred(name)
            for attr, value in (bound or {}).get(name, {}).items():
                setattr(stand_ins[name], attr, value)
    sys.modules.update(stand_ins)
    try:
        yield
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
