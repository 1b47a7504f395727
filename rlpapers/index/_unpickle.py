"""Whoosh keeps its schema, segment list and some per-segment tables as pickles in the index
folder. A pickle can name any function to call, so a file planted there would run code on the
next search. Every pickle Whoosh reads goes through ``RestrictedUnpickler`` instead, which
builds only the classes a search view of rlpapers is made of (``ALLOWED``) and refuses
anything else; the view treats a refused file as damage and rebuilds itself.

``install`` makes ``whoosh.compat`` hand out the restricted readers (other Whoosh modules bind
its ``load``/``loads``/``pickle`` by name when they are imported), replaces the plain readers
in every Whoosh module already imported (a script may import Whoosh before rlpapers), and
drops Whoosh's loaders of legacy index formats, which unpickle with a reader that imports
whatever a file names (a table of contents claiming format -110 went there). rlpapers writes
every view itself, in the current format, so it never needs them. ``sweep`` replaces the
plain readers again, for Whoosh modules imported since (``open_whoosh`` calls it).
"""

from __future__ import annotations

import io
import pickle
import sys
import types
from typing import IO, Any

#: (module, name) of everything a pickle in a search view may name: the schema's field types,
#: formats and analyzers (Whoosh's and rlpapers'), the codec and segment list, and the few
#: builtins protocol 2 makes them with. Collected from views built, updated and searched at
#: sizes that give several segments; the tests open such views through this list.
ALLOWED = frozenset(
    {
        ("__builtin__", "bytes"),
        ("__builtin__", "long"),
        ("_codecs", "encode"),
        ("builtins", "bytes"),
        ("builtins", "frozenset"),
        ("builtins", "int"),
        ("builtins", "set"),
        ("collections", "defaultdict"),
        ("re", "_compile"),
        ("rlpapers.index.analysis", "AcronymPluralFilter"),
        ("rlpapers.index.analysis", "FoldFilter"),
        ("rlpapers.index.analysis", "ProseAnalyzer"),
        ("rlpapers.index.analysis", "SnowballFilter"),
        ("rlpapers.index.analysis", "WordTokenizer"),
        ("rlpapers.index.postings", "CompactCodec"),
        ("rlpapers.index.postings", "CompactPositions"),
        ("whoosh.analysis.analyzers", "CompositeAnalyzer"),
        ("whoosh.analysis.filters", "LowercaseFilter"),
        ("whoosh.analysis.filters", "StripFilter"),
        ("whoosh.analysis.tokenizers", "IDTokenizer"),
        ("whoosh.analysis.tokenizers", "RegexTokenizer"),
        ("whoosh.codec.whoosh3", "W3Codec"),
        ("whoosh.codec.whoosh3", "W3Segment"),
        ("whoosh.fields", "ID"),
        ("whoosh.fields", "KEYWORD"),
        ("whoosh.fields", "NUMERIC"),
        ("whoosh.fields", "Schema"),
        ("whoosh.fields", "TEXT"),
        ("whoosh.formats", "Existence"),
        ("whoosh.formats", "Frequency"),
        ("whoosh.formats", "Positions"),
    }
)


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a search index file names {module}.{name}: refused")


def load(file: IO[bytes], **options: Any) -> Any:
    """``pickle.load``, restricted. A file that can say where it is (Whoosh's files can) is read
    a chunk at a time and put back just after the pickle: read directly, the unpickler calls
    ``read`` once an opcode, and Whoosh reads a small pickle before each block of postings
    (about twenty calls through its compound file's wrapper each time)."""
    try:
        start = file.tell()
    except (AttributeError, OSError):
        return RestrictedUnpickler(file, **options).load()
    size = _CHUNK
    while True:
        data = file.read(size)
        stream = io.BufferedReader(io.BytesIO(data))
        try:
            value = RestrictedUnpickler(stream, **options).load()
        except (EOFError, pickle.UnpicklingError):
            if len(data) < size:  # the whole rest of the file: the pickle itself is bad
                raise
            file.seek(start)
            size *= 16
            continue
        file.seek(start + stream.tell())
        return value


_CHUNK = 512  # a block's header is some 40 bytes; a table of contents a few kilobytes


def loads(data: bytes, **options: Any) -> Any:
    """``pickle.loads``, restricted. The buffered reader matters: given a stream that cannot
    ``peek``, the unpickler calls its ``read`` once an opcode (four times the time of
    ``pickle.loads`` on a block of postings, which Whoosh unpickles for every block a search
    reads); with ``peek`` it reads ahead, as ``pickle.loads`` does."""
    return RestrictedUnpickler(io.BufferedReader(io.BytesIO(data)), **options).load()


def _restricted_pickle() -> types.ModuleType:
    """A stand-in for the ``pickle`` module that writes as pickle does and reads restricted."""
    module = types.ModuleType("pickle")
    module.__dict__.update(
        {name: getattr(pickle, name) for name in dir(pickle) if not name.startswith("__")}
    )
    module.load = load  # type: ignore[attr-defined]
    module.loads = loads  # type: ignore[attr-defined]
    module.Unpickler = RestrictedUnpickler  # type: ignore[attr-defined]
    return module


_RESTRICTED = _restricted_pickle()


def install() -> None:
    """Read every Whoosh pickle restricted, from now on (see the module's docstring)."""
    import whoosh.compat

    whoosh.compat.load = load
    whoosh.compat.loads = loads
    whoosh.compat.pickle = _RESTRICTED
    import whoosh.legacy

    whoosh.legacy.toc_loaders.clear()  # the same dict whoosh.index consults
    sweep()


def sweep() -> None:
    """Replace pickle's plain readers wherever an imported Whoosh module holds them."""
    plain = {
        id(pickle): _RESTRICTED,
        id(pickle.load): load,
        id(pickle.loads): loads,
        id(pickle.Unpickler): RestrictedUnpickler,
    }
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "whoosh" or name.startswith("whoosh.")):
            continue
        for attr, value in list(vars(module).items()):
            restricted = plain.get(id(value))
            if restricted is not None:
                setattr(module, attr, restricted)
